// The transaction coordinator's durable state: every change of a transactional id's metadata is a
// record of the internal topic __transaction_state (one partition), key the transactional id and
// value the whole metadata as JSON (Sluice's own format), so replaying the log from its start
// gives each id's latest state. The decision to commit or abort is durable once its
// prepare_commit or prepare_abort record is: a coordinator that starts after that finishes it.
// Every state change appends a record, so the log is rewritten now and then: every live id's
// latest state appended again (ids expired left out), then everything before that deleted. The
// rewrite waits for the writes in flight and holds new ones back, so it sees the latest states.
import { encode_record_batch } from '../../protocol/record_batch.ts';
import type { PartitionLog } from '../../storage/index.ts';
import { replay_log } from '../replay_log.ts';

export const TXN_STATE_TOPIC = '__transaction_state';
/** Where the transaction coordinator runs: on this partition's leader. */
export const TXN_COORDINATOR_PARTITION = { topic: TXN_STATE_TOPIC, partition: 0 } as const;

export type TxnState = 'empty' | 'ongoing' | 'prepare_commit' | 'prepare_abort' | 'complete_commit' | 'complete_abort';

export interface TxnPartition {
  topic: string;
  partition: number;
}

export interface TxnMetadata {
  transactional_id: string;
  producer_id: number;
  producer_epoch: number;
  timeout_ms: number;
  state: TxnState;
  /** The partitions the ongoing (or ending) transaction has written to or will commit offsets on. */
  partitions: TxnPartition[];
  /** When the ongoing transaction began (its first partition); its timeout counts from there. */
  started_ms: number;
  updated_ms: number;
  /** A half message's transaction (check-back): the checks made, and when the next is due (-1: after its timeout). */
  checks?: number;
  next_check_ms?: number;
  /**
   * Transaction version 2 (KIP-890): the producer id and epoch the last EndTxn ended under, before
   * it bumped the epoch; a retry of that EndTxn under them is answered again. Cleared when the
   * next transaction begins.
   */
  last_producer_id?: number;
  last_producer_epoch?: number;
  /** An ending that used up the producer's epochs: the producer id it hands out once complete. */
  next_producer_id?: number;
}

/**
 * The epoch is an int16. A producer is handed at most EPOCH_MAX - 1, so the coordinator can always
 * fence it with one more; past that the producer gets a new id instead.
 */
export const EPOCH_MAX = 32_767;

/** What a producer writes under: the same after an end, or the next epoch (transaction version 2). */
export interface ProducerIdentity {
  producer_id: number;
  producer_epoch: number;
}

export const identity_of = (meta: TxnMetadata): ProducerIdentity => ({
  producer_id: meta.producer_id,
  producer_epoch: meta.producer_epoch,
});

/** A change that forgets the EndTxn a retry could repeat (a new transaction, a new instance, a fence). */
export const NO_LAST_END = { last_producer_id: undefined, last_producer_epoch: undefined } as const;
export const same_partition = (a: TxnPartition, b: TxnPartition) => a.topic === b.topic && a.partition === b.partition;

/** When a half message's transaction is next checked: its timeout after it began, then after each check. */
export const check_due_ms = (meta: TxnMetadata) =>
  meta.next_check_ms !== undefined && meta.next_check_ms >= 0 ? meta.next_check_ms : meta.started_ms + meta.timeout_ms;

/** Whether `partition` is in the ongoing transaction of `meta`, begun by this producer id and epoch. */
export const in_ongoing = (meta: TxnMetadata | undefined, who: ProducerIdentity, partition: TxnPartition) =>
  meta?.state === 'ongoing' &&
  meta.producer_id === who.producer_id &&
  meta.producer_epoch === who.producer_epoch &&
  meta.partitions.some((p) => same_partition(p, partition));

/** `meta` with `change` applied at `now_ms`; a field set to undefined is dropped, as a reload would. */
export function with_change(meta: TxnMetadata, change: Partial<TxnMetadata>, now_ms: number): TxnMetadata {
  const next: Partial<TxnMetadata> = { ...meta, ...change, updated_ms: now_ms };
  for (const key of Object.keys(change) as Array<keyof TxnMetadata>) if (next[key] === undefined) delete next[key];
  return next as TxnMetadata;
}

/** Records appended since the last rewrite before the next one: this many, or twice the live ids. */
export const REWRITE_AFTER_RECORDS_MIN = 10_000;
/** Records per batch of a rewrite (each about 250 bytes; the topic takes batches of 16 MiB). */
const REWRITE_BATCH_RECORDS = 10_000;

export class TxnLog {
  private in_flight = 0;
  private on_idle: (() => void) | null = null;
  private rewriting: Promise<void> | null = null;
  /** Records appended since the last rewrite (or replayed at load). */
  private since_rewrite = 0;

  constructor(
    private readonly log: PartitionLog,
    private readonly rewrite_after_records_min = REWRITE_AFTER_RECORDS_MIN,
  ) {}

  /** Every transactional id's latest metadata, from the whole log. */
  async load(): Promise<Map<string, TxnMetadata>> {
    const all = new Map<string, TxnMetadata>();
    await replay_log(this.log, (record) => {
      this.since_rewrite++;
      const id = record.key?.toString('utf8');
      if (id === undefined) return;
      if (record.value === null) all.delete(id);
      else all.set(id, JSON.parse(record.value.toString('utf8')) as TxnMetadata);
    });
    return all;
  }

  /**
   * Appends the new metadata; once it is durable (acknowledged as any append) `on_durable` runs,
   * before a rewrite can read the states.
   */
  async write(metadata: TxnMetadata, on_durable: () => void): Promise<void> {
    while (this.rewriting) await this.rewriting.catch(() => undefined); // its failure is logged, not this write's
    this.in_flight++;
    try {
      await this.log.append(encode_record_batch([to_record(metadata)]));
      this.since_rewrite++;
      on_durable();
    } finally {
      if (--this.in_flight === 0) this.on_idle?.();
    }
  }

  /** Whether enough records piled up since the last rewrite, for `live` ids. */
  rewrite_due(live: number): boolean {
    return this.rewriting === null && this.since_rewrite >= Math.max(this.rewrite_after_records_min, 2 * live);
  }

  /**
   * Appends the states `current` gives (called once no write is in flight, new ones held back),
   * then deletes every record before them.
   */
  rewrite(current: () => TxnMetadata[]): Promise<void> {
    this.rewriting ??= (async () => {
      if (this.in_flight > 0) await new Promise<void>((resolve) => (this.on_idle = resolve));
      this.on_idle = null;
      const records = current().map(to_record);
      let first = this.log.next_offset;
      const appends: Array<Promise<{ base_offset: number }>> = [];
      // Issued together, so the batches are contiguous in the log.
      for (let i = 0; i < records.length; i += REWRITE_BATCH_RECORDS) {
        appends.push(this.log.append(encode_record_batch(records.slice(i, i + REWRITE_BATCH_RECORDS))));
      }
      if (appends.length > 0) first = (await Promise.all(appends))[0]!.base_offset;
      this.since_rewrite = records.length;
      await this.log.delete_records_before(Math.min(first, this.log.high_watermark));
    })().finally(() => {
      this.rewriting = null;
    });
    return this.rewriting;
  }
}

function to_record(metadata: TxnMetadata) {
  return {
    key: Buffer.from(metadata.transactional_id),
    value: Buffer.from(JSON.stringify(metadata)),
    timestamp_ms: metadata.updated_ms,
  };
}
