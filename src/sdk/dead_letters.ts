// Dead letters from the admin client: the dead-letter topics share groups write
// (`<topic>.<group>.dlq`), what they hold, and redrive: copying dead letters back to their origin
// topic (or another), with key, value, timestamp and original headers, each recorded in the audit
// topic `sluice.dlq.audit` so that a dead letter is never redriven twice. `read_topic` reads a topic
// from its start to its end as of the call (a broadcast read, no group). The admin client's
// methods for them (admin.ts) call these with its request plumbing (admin_requests.ts).
import { Consumer } from './consumer.ts';
import { Producer } from './producer.ts';
import type { IHeaders, KafkaMessage } from './records.ts';
import { SluiceError } from './errors.ts';
import type { AdminRequests } from './admin_requests.ts';
import { list_topics } from './admin_topics.ts';
import { fetch_topic_offsets } from './admin_offsets.ts';
import {
  DLQ_AUDIT_TOPIC,
  DLQ_HEADERS,
  DLQ_SUFFIX,
  REDRIVEN_FROM_HEADER,
  audit_key,
  dead_letter_origin_of,
  encode_audit,
  is_dead_letter_topic_name,
  keeps_header_on_redrive,
  parse_audit,
  redriven_from,
} from '../protocol/dead_letters.ts';

export { DLQ_AUDIT_TOPIC, REDRIVEN_FROM_HEADER };
const SEND_CHUNK = 500;

/** A message with the partition and offset it was read from. */
export interface ReadMessage {
  partition: number;
  offset: number;
  message: KafkaMessage;
}

export interface DeadLetterTopic {
  topic: string;
  /** The topic the dead letters came from, and the share group, as the name says. */
  origin: string;
  group: string;
  messages: number;
}

export interface DeadLetter {
  partition: number;
  offset: number;
  key: Buffer | null;
  value: Buffer | null;
  timestamp: string;
  origin: { topic: string | null; partition: number; offset: number };
  group: string | null;
  deliveryCount: number;
  reason: string | null;
  deadLetteredAt: number;
}

export interface RedriveOptions {
  topic: string;
  /** Send to this topic instead of each letter's origin. */
  to?: string;
  /** Only these (partition 0 unless given); absent: every dead letter of the topic. */
  offsets?: Array<{ partition?: number; offset: number }>;
  onProgress?: (sent: number, total: number) => void;
}

export interface RedriveResult {
  selected: number;
  redriven: number;
  skippedAlreadyRedriven: number;
}

export function header_text(message: KafkaMessage, name: string): string | null {
  const value = message.headers?.[name];
  if (value === undefined) return null;
  return String(Array.isArray(value) ? value[value.length - 1] : value);
}

/** Every message of `topic` from its start to its end as of now, in partition and offset order. */
export async function read_topic(
  admin: AdminRequests,
  topic: string,
  limit = Infinity,
  on_read?: (count: number) => void,
): Promise<ReadMessage[]> {
  const bounds = await fetch_topic_offsets(admin, topic);
  const remaining = new Map(
    bounds.filter((b) => Number(b.high) > Number(b.low)).map((b) => [b.partition, Number(b.high)]),
  );
  const read: ReadMessage[] = [];
  if (remaining.size === 0 || limit <= 0) return read;
  const consumer = new Consumer(admin.cluster, { maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await new Promise<void>((resolve, reject) => {
    consumer.on<{ error: unknown; restart: boolean }>(consumer.events.CRASH, ({ payload }) => {
      if (!payload.restart) reject(payload.error);
    });
    consumer
      .run({
        eachMessage: async ({ partition, message }) => {
          const end = remaining.get(partition);
          const offset = Number(message.offset);
          if (end === undefined || offset >= end || read.length >= limit) return;
          read.push({ partition, offset, message });
          on_read?.(read.length);
          if (offset + 1 >= end) remaining.delete(partition);
          if (remaining.size === 0 || read.length >= limit) resolve();
        },
      })
      .catch(reject);
  }).finally(() => consumer.disconnect());
  return read.sort((a, b) => a.partition - b.partition || a.offset - b.offset);
}

export async function list_dead_letter_topics(admin: AdminRequests): Promise<DeadLetterTopic[]> {
  const out: DeadLetterTopic[] = [];
  for (const topic of (await list_topics(admin)).filter(is_dead_letter_topic_name).sort()) {
    const offsets = await fetch_topic_offsets(admin, topic);
    out.push({
      topic,
      ...dead_letter_origin_of(topic),
      messages: offsets.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0),
    });
  }
  return out;
}

export function dead_letter_of(read: ReadMessage): DeadLetter {
  const m = read.message;
  return {
    partition: read.partition,
    offset: read.offset,
    key: m.key,
    value: m.value,
    timestamp: m.timestamp,
    origin: {
      topic: header_text(m, DLQ_HEADERS.topic),
      partition: Number(header_text(m, DLQ_HEADERS.partition)),
      offset: Number(header_text(m, DLQ_HEADERS.offset)),
    },
    group: header_text(m, DLQ_HEADERS.group),
    deliveryCount: Number(header_text(m, DLQ_HEADERS.delivery_count)),
    reason: header_text(m, DLQ_HEADERS.reason),
    deadLetteredAt: Number(header_text(m, DLQ_HEADERS.time_ms)),
  };
}

export async function redrive_dead_letters(admin: AdminRequests, options: RedriveOptions): Promise<RedriveResult> {
  const topic = options.topic;
  if (!is_dead_letter_topic_name(topic)) {
    throw new SluiceError(`${topic} is not a dead-letter topic (its name ends with ${DLQ_SUFFIX})`, false);
  }
  const topics = await list_topics(admin);
  if (options.to !== undefined && !topics.includes(options.to)) {
    throw new SluiceError(`redrive to ${options.to}: the topic does not exist`, false);
  }
  const wanted =
    options.offsets === undefined ? null : new Set(options.offsets.map((o) => `${o.partition ?? 0}:${o.offset}`));
  const letters = (await read_topic(admin, topic)).filter(
    (l) => wanted === null || wanted.has(`${l.partition}:${l.offset}`),
  );
  if (wanted !== null && letters.length < wanted.size) {
    const found = new Set(letters.map((l) => `${l.partition}:${l.offset}`));
    throw new SluiceError(`not in ${topic}: ${[...wanted].filter((k) => !found.has(k)).join(', ')}`, false);
  }
  const done = topics.includes(DLQ_AUDIT_TOPIC) ? await redriven_before(admin, topic) : new Set<string>();
  const todo = letters.filter((l) => !done.has(`${l.partition}:${l.offset}`));
  const producer = new Producer(admin.cluster, { allowAutoTopicCreation: true });
  await producer.connect();
  let sent = 0;
  try {
    for (let i = 0; i < todo.length; i += SEND_CHUNK) {
      const chunk = todo.slice(i, i + SEND_CHUNK);
      const targets = chunk.map((l) => options.to ?? header_text(l.message, DLQ_HEADERS.topic));
      const missing = targets.findIndex((t) => !t);
      if (missing >= 0) {
        const letter = chunk[missing]!;
        const where = `${topic} ${letter.partition}:${letter.offset}`;
        throw new SluiceError(`${where} has no ${DLQ_HEADERS.topic} header; redrive it with "to"`, false);
      }
      const results = await Promise.all(
        chunk.map((l, j) => producer.send({ topic: targets[j]!, messages: [redriven(topic, l)] })),
      );
      await producer.send({
        topic: DLQ_AUDIT_TOPIC,
        messages: chunk.map((l, j) => ({
          key: audit_key({ dlq: topic, partition: l.partition, offset: l.offset }),
          value: encode_audit({
            dlq: topic,
            partition: l.partition,
            offset: l.offset,
            to: targets[j]!,
            to_partition: results[j]![0]!.partition,
            to_offset: Number(results[j]![0]!.baseOffset),
            time_ms: Date.now(),
          }),
        })),
      });
      sent += chunk.length;
      options.onProgress?.(sent, todo.length);
    }
  } finally {
    await producer.disconnect();
  }
  return { selected: letters.length, redriven: sent, skippedAlreadyRedriven: letters.length - todo.length };
}

/** The original message again: dead-letter headers dropped, where it came from added. */
function redriven(topic: string, letter: ReadMessage) {
  const headers: IHeaders = {};
  for (const [name, value] of Object.entries(letter.message.headers ?? {})) {
    if (keeps_header_on_redrive(name) && value !== undefined) headers[name] = value;
  }
  headers[REDRIVEN_FROM_HEADER] = Buffer.from(redriven_from(topic, letter.partition, letter.offset));
  return { key: letter.message.key, value: letter.message.value, timestamp: letter.message.timestamp, headers };
}

/** Dead letters of `topic` already redriven, by "partition:offset", from the audit topic. */
async function redriven_before(admin: AdminRequests, topic: string): Promise<Set<string>> {
  const done = new Set<string>();
  for (const entry of await read_topic(admin, DLQ_AUDIT_TOPIC)) {
    const record = parse_audit(entry.message.value);
    if (record?.dlq === topic) done.add(`${record.partition}:${record.offset}`);
  }
  return done;
}
