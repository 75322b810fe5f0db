// Delayed delivery. A produced batch in which any record carries a delay header is not appended to
// its topic: it is kept, as received, in the internal log __sluice_delayed (one record per batch:
// key {"t","p","r"} = target topic, partition and receive time; value = the batch), and each of its
// records is indexed by due time (delay_index.ts). When a record falls due it is appended to its
// topic (key, value, headers and timestamp kept), so consumer groups and share groups see it only
// then; afterwards a done marker (key {"d":[[batch offset,[record indexes]],...]}) records that it
// was delivered. A restart rebuilds the index from the log: records without a done marker are
// pending. The log is pruned up to the oldest batch with a pending record.
// A batch produced in a transaction is kept the same way, as a transactional batch of its
// producer (the delay log joins the transaction), but is held, not indexed, until the marker of
// that transaction reaches the delay log: a commit indexes its records, an abort drops them.
import { decompress_record_batch } from '../../protocol/compression.ts';
import {
  decode_record_batch,
  encode_record_batch,
  type BatchRecord,
  type DecodedRecord,
} from '../../protocol/record_batch.ts';
import type { Logger, PartitionLog } from '../../storage/index.ts';
import type { Clock } from '../../core/clock.ts';
import type { AppendRecords, TopicManager } from '../topics.ts';
import { due_time_of } from './delay_headers.ts';
import { DelayIndex, RECORDS_PER_BATCH_MAX, pack, unpack } from './delay_index.ts';
import { replay_log } from '../replay_log.ts';
import { invariant, rethrow_invariant } from '../../core/invariants.ts';
import { default_number } from '../../core/settings.ts';
import { ControlType, is_transactional_batch, marker_type } from '../../protocol/control_records.ts';
import { ATTRIBUTE_TRANSACTIONAL, batch_producer_id } from '../../format/batch_layout.ts';

export const DELAYED_TOPIC = '__sluice_delayed';

export interface DelayedSettings {
  /** The furthest in the future a record may be scheduled. */
  delay_max_ms: number;
  /** How often due records are looked for. */
  tick_ms: number;
  /** Records delivered per tick at most. */
  deliver_per_tick_max: number;
}

export const DELAYED_SETTINGS_DEFAULT: DelayedSettings = {
  delay_max_ms: default_number('delayed.delay_max_ms'),
  tick_ms: 5,
  deliver_per_tick_max: 20_000,
};

/** Wait before a record whose delivery failed (disk full, say) is tried again. */
const RETRY_MS = 1_000;
const READ_BYTES = 1024 * 1024;
/** Decoded batches kept between ticks (records of one batch are often due together). */
const BATCH_CACHE_MAX = 256;
const LATENESS_SAMPLES_MAX = 10_000;
/** The delay log is pruned at most this often. */
const PRUNE_INTERVAL_MS = 1_000;

/** The key of a delay-log record: a held batch's target and receive time, or done markers. */
interface WrapperKey {
  t?: string;
  p?: number;
  r?: number;
  d?: Array<[number, number[]]>;
  /** A batch of a transaction: its producer id and epoch (in a forwarded batch; the stored one is transactional). */
  x?: [number, number];
}

/** The producer of a transaction whose delayed records wait for its marker. */
export interface DelayedTxn {
  producer_id: number;
  producer_epoch: number;
}

/** A batch of an open transaction: its offset in the delay log, and each record's index and due time. */
interface HeldBatch {
  batch_offset: number;
  due: Array<[number, number]>;
}

/** Due records bound for one partition, with their references in the delay index. */
interface Target {
  topic: string;
  partition: number;
  records: BatchRecord[];
  refs: number[];
}

interface StoredBatch {
  topic: string;
  partition: number;
  received_ms: number;
  records: DecodedRecord[];
}

export class DelayedDelivery {
  private readonly index = new DelayIndex();
  /** Batch offset in the delay log -> records of it not yet delivered (insertion order = offset order). */
  private readonly remaining = new Map<number, number>();
  /** Delay-log offsets of batches whose append is not yet acknowledged (not yet indexed). */
  private readonly appending = new Set<number>();
  private readonly cache = new Map<number, StoredBatch>();
  /** Delivered (or dropped) records whose done marker is not written yet: batch offset -> indexes. */
  private readonly unmarked = new Map<number, number[]>();
  /** Refs taken from the index by the delivery running now (neither marked nor put back yet). */
  private in_flight: readonly number[] = [];
  private pruned_at_ms = -Infinity;
  /** Set by close(): the delivery in progress finishes, nothing new starts. */
  private closing = false;
  /** A prune was skipped for the interval: the timer runs it once the interval has passed. */
  private prune_owed = false;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  readonly counters = { scheduled: 0, delivered: 0, dropped: 0 };
  /** Delivery minus due time of recent deliveries, in ms (a bounded ring). */
  readonly lateness_ms: number[] = [];
  /** Producer id -> its open transaction's batches, held until its marker (also counted in `remaining`). */
  private readonly held = new Map<number, HeldBatch[]>();

  constructor(
    private readonly log: PartitionLog,
    private readonly topics: TopicManager,
    private readonly logger: Logger,
    private readonly clock: Clock,
    readonly settings: DelayedSettings,
    /** Appends due records to their partition, wherever it is led. */
    private readonly append: AppendRecords,
  ) {}

  /** The delay log's record for a batch held for `topic`-`partition` (also what other brokers forward). */
  static wrap(
    topic: string,
    partition: number,
    batch: Buffer,
    received_ms: number,
    txn: DelayedTxn | null = null,
  ): Buffer {
    const fields: WrapperKey = { t: topic, p: partition, r: received_ms };
    if (txn) fields.x = [txn.producer_id, txn.producer_epoch];
    return encode_record_batch([{ key: Buffer.from(JSON.stringify(fields)), value: batch, timestamp_ms: received_ms }]);
  }

  /** The batches a forwarded delay-log batch holds, with where they are bound. */
  static unwrap(
    wrapper: Buffer,
  ): Array<{ topic: string; partition: number; batch: Buffer; received_ms: number; txn: DelayedTxn | null }> {
    return decode_record_batch(wrapper).map((record) => {
      const key = JSON.parse(record.key!.toString('utf8')) as Required<Pick<WrapperKey, 't' | 'p' | 'r'>> & WrapperKey;
      const txn = key.x ? { producer_id: key.x[0], producer_epoch: key.x[1] } : null;
      return { topic: key.t, partition: key.p, batch: record.value!, received_ms: key.r, txn };
    });
  }

  get pending(): number {
    return this.index.size;
  }

  get index_bytes(): number {
    return this.index.bytes();
  }

  /**
   * Rebuilds the pending records from the log in two passes, so memory holds the index and the
   * done markers, never the decoded records of every batch: first the done markers, then each
   * batch's records (decoded one batch at a time) go into the index unless marked done.
   */
  async load(now_ms: number): Promise<void> {
    const delivered = new Map<number, Set<number>>();
    await this.each_wrapper((_offset, key) => {
      for (const [batch_offset, indexes] of key.d ?? []) {
        let set = delivered.get(batch_offset);
        if (!set) delivered.set(batch_offset, (set = new Set()));
        for (const i of indexes) set.add(i);
      }
    });
    await this.each_wrapper(async (batch_offset, key, value, wrapper) => {
      const marker = marker_type(wrapper);
      if (marker !== null) {
        if (marker === ControlType.COMMIT || marker === ControlType.ABORT)
          this.end_txn(batch_producer_id(wrapper, 0), marker === ControlType.COMMIT, now_ms);
        return;
      }
      if (key.d || !value) return;
      const stored = await unwrap(key as { t: string; p: number; r: number }, value);
      const done = delivered.get(batch_offset);
      const due: Array<[number, number]> = [];
      stored.records.forEach((record, i) => {
        // A malformed header cannot get here: the batch was checked when it was produced.
        if (!done?.has(i)) due.push([i, due_time_of(record, stored.received_ms, Infinity) ?? stored.received_ms]);
      });
      if (due.length === 0) return;
      this.remaining.set(batch_offset, due.length);
      if (is_transactional_batch(wrapper)) this.hold(batch_producer_id(wrapper, 0), { batch_offset, due });
      else for (const [i, due_ms] of due) this.index.add(due_ms, pack(batch_offset, i), now_ms);
    });
    await this.prune(true);
  }

  /** Calls `visit` with every record of the delay log in order: its offset, parsed key and value. */
  private async each_wrapper(
    visit: (offset: number, key: WrapperKey, value: Buffer | null, wrapper: Buffer) => void | Promise<void>,
  ): Promise<void> {
    await replay_log(this.log, (record, wrapper) => {
      // A transaction marker's key is no JSON: it is told apart by its batch.
      const key = marker_type(wrapper) === null ? (JSON.parse(record.key!.toString('utf8')) as WrapperKey) : {};
      return visit(record.offset, key, record.value, wrapper);
    });
  }

  private hold(producer_id: number, batch: HeldBatch): void {
    const held = this.held.get(producer_id);
    if (held) held.push(batch);
    else this.held.set(producer_id, [batch]);
  }

  /**
   * The marker of the producer's transaction is in the delay log: its held records are indexed
   * (commit) or dropped (abort). A marker with nothing held (the transaction had no delayed
   * record) changes nothing.
   */
  end_txn(producer_id: number, commit: boolean, now_ms = this.clock.now_ms()): void {
    const held = this.held.get(producer_id);
    this.held.delete(producer_id);
    for (const { batch_offset, due } of held ?? []) {
      if (!commit) {
        this.remaining.delete(batch_offset);
        continue;
      }
      for (const [i, due_ms] of due) this.index.add(due_ms, pack(batch_offset, i), now_ms);
      this.counters.scheduled += due.length;
    }
    if (held && !commit) this.prune_owed = true;
  }

  start(): void {
    this.timer = setInterval(() => {
      if (this.running) return;
      const idle = this.index.size === 0 && this.unmarked.size === 0;
      if (idle && !this.prune_owed) return;
      const round = idle ? this.prune() : this.deliver_due(this.clock.now_ms());
      this.running = round
        .catch((error: unknown) => {
          rethrow_invariant(error);
          this.logger.warn({ error: String(error) }, 'delayed delivery failed; will retry');
        })
        .finally(() => (this.running = null));
    }, this.settings.tick_ms);
    this.timer.unref();
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /**
   * Keeps `batch` (as received) until its records are due; resolves once it is durable in the
   * delay log. `due_ms` holds each record's due time.
   */
  async schedule(
    topic: string,
    partition: number,
    batch: Buffer,
    due_ms: number[],
    received_ms: number,
    txn: DelayedTxn | null = null,
  ): Promise<void> {
    if (due_ms.length > RECORDS_PER_BATCH_MAX) {
      throw new RangeError(`a delayed batch holds at most ${RECORDS_PER_BATCH_MAX} records`);
    }
    // The batch is indexed once its append is acknowledged, which in a cluster waits for the ISR;
    // until then prune must not pass it, though the high watermark may (seed 1818).
    const expected = this.log.next_offset;
    this.appending.add(expected);
    let base_offset: number;
    try {
      const wrapper = txn
        ? encode_record_batch(
            [{ key: wrapper_key(topic, partition, received_ms), value: batch, timestamp_ms: received_ms }],
            {
              ...txn,
              base_sequence: -1,
              attributes: ATTRIBUTE_TRANSACTIONAL,
            },
          )
        : DelayedDelivery.wrap(topic, partition, batch, received_ms);
      // A transaction's batch in Kafka's form (no sequence): checked here, not by the client rules.
      ({ base_offset } = await this.log.append(wrapper, txn ? { checked: true } : {}));
    } finally {
      this.appending.delete(expected);
    }
    invariant(base_offset === expected, () => `delay log: batch at ${base_offset}, expected at ${expected}`);
    // Not cached: a batch is read again when it falls due, which may be days away.
    this.remaining.set(base_offset, due_ms.length);
    if (txn) return this.hold(txn.producer_id, { batch_offset: base_offset, due: due_ms.map((due, i) => [i, due]) });
    const now_ms = this.clock.now_ms();
    due_ms.forEach((due, i) => this.index.add(due, pack(base_offset, i), now_ms));
    this.counters.scheduled += due_ms.length;
  }

  /**
   * Appends the due records to their topics, then records that they were delivered. A record taken
   * from the index is either delivered, put back to be tried again, or dropped with a warning
   * (its topic is gone): a failure part way through loses none.
   */
  async deliver_due(now_ms: number): Promise<number> {
    const refs = this.index.take_due(now_ms, this.settings.deliver_per_tick_max);
    if (refs.length === 0) {
      await this.write_done_marker(); // one a failure left behind
      return 0;
    }
    this.in_flight = refs;
    try {
      let targets: Target[];
      try {
        targets = await this.group_by_target(refs.sort((a, b) => a - b));
      } catch (error) {
        for (const ref of refs) this.index.add(now_ms + RETRY_MS, ref, now_ms);
        throw error;
      }
      await Promise.all(targets.map((target) => this.append_to_target(target, now_ms)));
    } finally {
      this.in_flight = [];
    }
    // Written even while closing: close() waits for this delivery, and a delivered record without
    // its marker would be delivered again after the restart.
    await this.write_done_marker();
    return refs.length;
  }

  /** The due records by target partition; those whose batch is gone are counted as dropped. */
  private async group_by_target(refs: number[]): Promise<Target[]> {
    const by_target = new Map<string, Target>();
    for (const ref of refs) {
      const { batch_offset, index } = unpack(ref);
      const stored = await this.batch(batch_offset);
      const record = stored?.records[index];
      if (!stored || !record) {
        this.logger.warn({ batch_offset, index }, 'delayed record dropped: its batch is not in the delay log');
        this.counters.dropped++;
        this.mark_done([ref]);
        continue;
      }
      const key = `${stored.topic}\u0000${stored.partition}`;
      let target = by_target.get(key);
      if (!target) {
        target = { topic: stored.topic, partition: stored.partition, records: [], refs: [] };
        by_target.set(key, target);
      }
      const { value, headers, timestamp_ms } = record;
      target.records.push({ key: record.key, value, headers, timestamp_ms });
      target.refs.push(ref);
    }
    return [...by_target.values()];
  }

  private mark_done(refs: number[]): void {
    for (const ref of refs) {
      const { batch_offset, index } = unpack(ref);
      (this.unmarked.get(batch_offset) ?? this.unmarked.set(batch_offset, []).get(batch_offset)!).push(index);
    }
  }

  /**
   * Records what was delivered since the last marker. When the marker cannot be written (a full
   * disk), it is kept and written with the next one; until then a restart delivers those again.
   */
  private async write_done_marker(): Promise<void> {
    if (this.unmarked.size === 0) return;
    const done = [...this.unmarked];
    const marker = Buffer.from(JSON.stringify({ d: done }));
    await this.log.append(encode_record_batch([{ key: marker, value: null, timestamp_ms: this.clock.now_ms() }]));
    this.unmarked.clear();
    for (const [batch_offset, indexes] of done) {
      const left = (this.remaining.get(batch_offset) ?? indexes.length) - indexes.length;
      if (left > 0) this.remaining.set(batch_offset, left);
      else {
        this.remaining.delete(batch_offset);
        this.cache.delete(batch_offset);
      }
    }
    await this.prune();
  }

  private async append_to_target(target: Target, now_ms: number): Promise<void> {
    const topic = this.topics.get(target.topic);
    if (!topic || target.partition >= topic.partitions) {
      this.logger.warn(
        { topic: target.topic, partition: target.partition, records: target.records.length },
        'delayed records dropped: their topic or partition no longer exists',
      );
      this.counters.dropped += target.records.length;
      this.mark_done(target.refs);
      return;
    }
    try {
      await this.append(target.topic, target.partition, encode_record_batch(target.records));
    } catch (error) {
      rethrow_invariant(error);
      this.logger.warn(
        { topic: target.topic, partition: target.partition, error: String(error) },
        'could not deliver delayed records; will retry',
      );
      for (const ref of target.refs) this.index.add(now_ms + RETRY_MS, ref, now_ms);
      return;
    }
    const delivered_at = this.clock.now_ms();
    this.counters.delivered += target.records.length;
    this.mark_done(target.refs);
    this.note_lateness(target, delivered_at);
  }

  private note_lateness(target: { refs: number[] }, delivered_at: number): void {
    for (const ref of target.refs) {
      const { batch_offset, index } = unpack(ref);
      const stored = this.cache.get(batch_offset);
      const record = stored?.records[index];
      if (!stored || !record) continue;
      const due = due_time_of(record, stored.received_ms, Infinity) ?? stored.received_ms;
      if (this.lateness_ms.length >= LATENESS_SAMPLES_MAX) this.lateness_ms.shift();
      this.lateness_ms.push(delivered_at - due);
    }
  }

  private async batch(batch_offset: number): Promise<StoredBatch | null> {
    const cached = this.cache.get(batch_offset);
    if (cached) return cached;
    if (batch_offset < this.log.log_start_offset) return null;
    const { batches } = await this.log.read(batch_offset, READ_BYTES, 'log_end');
    for (const wrapper of batches) {
      for (const record of decode_record_batch(wrapper)) {
        if (record.offset !== batch_offset) continue;
        const key = JSON.parse(record.key!.toString('utf8')) as { t: string; p: number; r: number };
        const stored = await unwrap(key, record.value!);
        this.cache_put(batch_offset, stored);
        return stored;
      }
    }
    return null;
  }

  private cache_put(batch_offset: number, stored: StoredBatch): void {
    this.cache.set(batch_offset, stored);
    while (this.cache.size > BATCH_CACHE_MAX) this.cache.delete(this.cache.keys().next().value!);
  }

  /**
   * Deletes the log before the oldest batch a record is still owed from: one in the index, being
   * appended, being delivered, delivered without its marker, or counted in `remaining` (the
   * lowest of them, so one that lost count of a batch cannot delete it: seed 1414). At most once a second, as finding
   * the oldest is a pass over the pending batches.
   */
  private async prune(force = false): Promise<void> {
    // A coordinator that is stopping prunes nothing: the broker may already run the next one on
    // this log, with batches this one never heard of (seed 2525: a pending delayed message lost).
    if (this.closing) return;
    const now_ms = this.clock.now_ms();
    if (!force && now_ms - this.pruned_at_ms < PRUNE_INTERVAL_MS) {
      this.prune_owed = true;
      return;
    }
    this.pruned_at_ms = now_ms;
    this.prune_owed = false;
    let oldest = Math.min(this.index.oldest_batch(), this.log.next_offset);
    if (this.remaining.size > 0) oldest = Math.min(oldest, this.remaining.keys().next().value!);
    for (const batch of this.unmarked.keys()) oldest = Math.min(oldest, batch);
    for (const ref of this.in_flight) oldest = Math.min(oldest, unpack(ref).batch_offset);
    for (const offset of this.appending) oldest = Math.min(oldest, offset);
    if (oldest <= this.log.log_start_offset) return;
    await this.log.delete_records_before(Math.min(oldest, this.log.high_watermark));
  }
}

function wrapper_key(topic: string, partition: number, received_ms: number): Buffer {
  return Buffer.from(JSON.stringify({ t: topic, p: partition, r: received_ms }));
}

async function unwrap(key: { t: string; p: number; r: number }, batch: Buffer): Promise<StoredBatch> {
  const records = decode_record_batch(await decompress_record_batch(batch));
  return { topic: key.t, partition: key.p, received_ms: key.r, records };
}
