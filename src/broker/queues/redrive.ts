// Redrive inside the broker, for the HTTP admin API: dead letters are copied back to their origin
// topic (key, value, timestamp and original headers, plus where they came from) and each copy is
// recorded in the audit topic. The format and the audit records are the ones the SDK's redrive
// (`sluice dlq redrive`) uses (protocol/dead_letters.ts), so a dead letter redriven one way is
// skipped the other way. A redriven message goes back to the partition it came from.
import {
  DLQ_AUDIT_TOPIC,
  DLQ_HEADERS,
  REDRIVEN_FROM_HEADER,
  audit_key,
  encode_audit,
  keeps_header_on_redrive,
  parse_audit,
  redriven_from,
  type RedriveAudit,
} from '../../protocol/dead_letters.ts';
import { encode_record_batch, header_text, type BatchRecord, type DecodedRecord } from '../../protocol/record_batch.ts';
import type { Clock } from '../../core/clock.ts';
import type { PartitionReader } from '../../core/partition_reader.ts';
import type { TopicManager } from '../topics.ts';
import { BrokerError } from '../../core/errors.ts';
import { read_records } from '../log_reader.ts';
import { REDRIVE_OFFSETS_MAX, type RedriveOutcome, type RedriveRequest } from '../../core/types.ts';

/** Dead letters copied per round (one append per target partition, then one audit append). */
const REDRIVE_CHUNK_RECORDS = 500;
/** Stored bytes read from a dead-letter partition per round. */
const REDRIVE_READ_BYTES = 4 * 1024 * 1024;
/** Record bytes packed into one batch for a target partition. */
const REDRIVE_BATCH_BYTES_MAX = 256 * 1024;
/** What a redrive needs of the broker core. */
export interface RedriveDeps {
  topics: TopicManager;
  clock: Clock;
  reader(topic: string, partition: number): Promise<PartitionReader>;
  /** Produces on the partition's leader (here or forwarded); the base offset, or -1 when not known. */
  produce_anywhere(topic: string, partition: number, records: Buffer): Promise<number>;
}

/** One redrive at a time per broker: two at once could both miss the other's audit records. */
const running = new WeakMap<RedriveDeps, Promise<unknown>>();

export function redrive_dead_letters(broker: RedriveDeps, request: RedriveRequest): Promise<RedriveOutcome> {
  const next = (running.get(broker) ?? Promise.resolve()).then(() => redrive(broker, request));
  running.set(
    broker,
    next.catch(() => undefined),
  );
  return next;
}

async function redrive(broker: RedriveDeps, request: RedriveRequest): Promise<RedriveOutcome> {
  const dlq = broker.topics.get(request.topic);
  if (!dlq) throw new BrokerError('unknown_topic_or_partition', `unknown topic ${request.topic}`);
  if (request.to !== undefined && !broker.topics.get(request.to))
    throw new BrokerError('unknown_topic_or_partition', `redrive to ${request.to}: the topic does not exist`);
  const wanted =
    request.offsets === null ? null : await selection(broker, request.topic, dlq.partitions, request.offsets);
  const done = await redriven_before(broker, request.topic);
  const outcome: RedriveOutcome = { selected: 0, redriven: 0, skipped_already_redriven: 0 };
  for (let partition = 0; partition < dlq.partitions; partition++) {
    const picked = wanted?.get(partition);
    if (wanted && !picked) continue;
    const log = await broker.reader(request.topic, partition);
    // Committed dead letters only: one written in a transaction that aborted, or has not ended, is none yet.
    const end = log.last_stable_offset;
    let offset = picked ? picked[0]! : log.log_start_offset;
    let pick_index = 0;
    while (offset < end) {
      const read = await read_records(log, offset, REDRIVE_CHUNK_RECORDS, REDRIVE_READ_BYTES, true);
      if (read.next_offset <= offset) break;
      offset = read.next_offset;
      let letters = read.records.filter((r) => r.offset < end);
      if (picked) {
        const chosen: DecodedRecord[] = [];
        for (const record of letters) {
          while (pick_index < picked.length && picked[pick_index]! < record.offset) pick_index++;
          if (picked[pick_index] === record.offset) chosen.push(record);
        }
        letters = chosen;
      }
      outcome.selected += letters.length;
      const todo = letters.filter((l) => !done.has(`${partition}:${l.offset}`));
      outcome.skipped_already_redriven += letters.length - todo.length;
      if (todo.length > 0) outcome.redriven += await copy_back(broker, request, partition, todo);
      if (picked) {
        while (pick_index < picked.length && picked[pick_index]! < offset) pick_index++;
        if (pick_index >= picked.length) break;
        offset = Math.max(offset, picked[pick_index]!);
      }
    }
  }
  return outcome;
}

/** The named offsets by partition, ascending; every one must be in the topic. */
async function selection(
  broker: RedriveDeps,
  topic: string,
  partitions: number,
  offsets: RedriveRequest['offsets'] & object,
): Promise<Map<number, number[]>> {
  if (offsets.length > REDRIVE_OFFSETS_MAX)
    throw new BrokerError('invalid_request', `at most ${REDRIVE_OFFSETS_MAX} offsets per redrive`);
  const by_partition = new Map<number, Set<number>>();
  const missing: string[] = [];
  for (const { partition, offset } of offsets) {
    const log =
      Number.isInteger(partition) && partition >= 0 && partition < partitions
        ? await broker.reader(topic, partition)
        : null;
    if (!log || offset < log.log_start_offset || offset >= log.high_watermark) {
      missing.push(`${partition}:${offset}`);
      continue;
    }
    let set = by_partition.get(partition);
    if (!set) by_partition.set(partition, (set = new Set()));
    set.add(offset);
  }
  if (missing.length > 0) throw new BrokerError('invalid_request', `not in ${topic}: ${missing.join(', ')}`);
  return new Map([...by_partition].map(([p, set]) => [p, [...set].sort((a, b) => a - b)]));
}

/** Dead letters of `dlq` redriven before, as "partition:offset", from the audit topic. */
async function redriven_before(broker: RedriveDeps, dlq: string): Promise<Set<string>> {
  const done = new Set<string>();
  const audit = broker.topics.get(DLQ_AUDIT_TOPIC);
  if (!audit) return done;
  for (let partition = 0; partition < audit.partitions; partition++) {
    const log = await broker.reader(DLQ_AUDIT_TOPIC, partition);
    let offset = log.log_start_offset;
    while (offset < log.high_watermark) {
      const read = await read_records(log, offset, REDRIVE_CHUNK_RECORDS * 10, REDRIVE_READ_BYTES);
      if (read.next_offset <= offset) break;
      offset = read.next_offset;
      for (const record of read.records) {
        const entry = parse_audit(record.value);
        if (entry?.dlq === dlq) done.add(`${entry.partition}:${entry.offset}`);
      }
    }
  }
  return done;
}

interface Target {
  topic: string;
  partition: number;
  records: BatchRecord[];
  letters: DecodedRecord[];
  bytes: number;
}

/** Appends the letters to their targets (in order per target partition), then their audit records. */
async function copy_back(
  broker: RedriveDeps,
  request: RedriveRequest,
  partition: number,
  letters: DecodedRecord[],
): Promise<number> {
  const batches: Target[] = [];
  const open = new Map<string, Target>();
  for (const letter of letters) {
    const topic = request.to ?? header_text(letter, DLQ_HEADERS.topic);
    if (!topic)
      throw new BrokerError(
        'invalid_request',
        `${request.topic} ${partition}:${letter.offset} has no ${DLQ_HEADERS.topic} header; redrive it with "to"`,
      );
    const record = topic_record(broker, topic);
    const origin_partition = Number(header_text(letter, DLQ_HEADERS.partition));
    const target_partition =
      Number.isInteger(origin_partition) && origin_partition >= 0 ? origin_partition % record.partitions : 0;
    const copy: BatchRecord = {
      key: letter.key,
      value: letter.value,
      timestamp_ms: letter.timestamp_ms,
      headers: [
        ...(letter.headers ?? []).filter((h) => keeps_header_on_redrive(h.key)),
        { key: REDRIVEN_FROM_HEADER, value: Buffer.from(redriven_from(request.topic, partition, letter.offset)) },
      ],
    };
    const size = (copy.key?.length ?? 0) + (copy.value?.length ?? 0) + 64;
    const key = `${topic}\u0000${target_partition}`;
    let target = open.get(key);
    if (!target || target.bytes + size > REDRIVE_BATCH_BYTES_MAX) {
      target = { topic, partition: target_partition, records: [], letters: [], bytes: 0 };
      open.set(key, target);
      batches.push(target);
    }
    target.records.push(copy);
    target.letters.push(letter);
    target.bytes += size;
  }
  // Issued in order without waiting in between: appends to one partition keep that order.
  const results = await Promise.all(
    batches.map((b) => broker.produce_anywhere(b.topic, b.partition, encode_record_batch(b.records))),
  );
  const now = broker.clock.now_ms();
  const audits: BatchRecord[] = [];
  batches.forEach((b, i) => {
    const base = results[i]!;
    b.letters.forEach((letter, j) => {
      const entry: RedriveAudit = {
        dlq: request.topic,
        partition,
        offset: letter.offset,
        to: b.topic,
        to_partition: b.partition,
        to_offset: base < 0 ? -1 : base + j,
        time_ms: now,
      };
      audits.push({ key: Buffer.from(audit_key(entry)), value: Buffer.from(encode_audit(entry)), timestamp_ms: now });
    });
  });
  await ensure_audit_topic(broker);
  await broker.produce_anywhere(DLQ_AUDIT_TOPIC, 0, encode_record_batch(audits));
  return letters.length;
}

function topic_record(broker: RedriveDeps, name: string) {
  const record = broker.topics.get(name);
  if (!record) throw new BrokerError('unknown_topic_or_partition', `redrive to ${name}: the topic does not exist`);
  return record;
}

function ensure_audit_topic(broker: RedriveDeps): Promise<void> {
  return broker.topics.ensure(DLQ_AUDIT_TOPIC, 1);
}
