// What a reader of a partition's records needs, wherever the partition is kept. Three contracts:
//
// - LogReader: bounds, whole batches below the high watermark, a wake-up when the high watermark
//   moves, a timestamp lookup. A local PartitionLog is one (storage knows nothing of transactions).
// - PartitionReader: a LogReader that also knows the partition's transactions, for readers that
//   see only committed data: the last stable offset and the aborted transactions of a read. The
//   broker core joins a local log to the transactions it learnt from its batches; in a cluster a
//   broker without an in-sync replica reads through a view of the partition on its leader
//   (cluster/remote_partitions.ts), which asks the leader. Share groups, dead-letter handling and
//   the admin API read through this, so they work on any broker.
// - ConsumerSource: what Fetch, ListOffsets and DeleteRecords need of a partition this broker
//   leads (a follower's fetch reads to the log end and is woken by progress, not the high
//   watermark). A local PartitionLog is one.
import type { AbortedTransaction } from './types.ts';

/** offset_for_timestamp's lookup of the largest timestamp (Kafka's MAX_TIMESTAMP, -3). */
export { MAX_TIMESTAMP_LOOKUP } from '../storage/index.ts';

export interface LogReader {
  readonly log_start_offset: number;
  readonly high_watermark: number;
  /**
   * Whole batches from the one holding `offset`, below the high watermark, about `bytes_max` bytes (at least one
   * batch).
   */
  read(offset: number, bytes_max: number): Promise<{ batches: Buffer[] }>;
  /** Calls `listener` when the high watermark advances; returns the unsubscribe. */
  on_high_watermark(listener: (high_watermark: number) => void): () => void;
  /**
   * The first offset whose timestamp is at or after `timestamp_ms`; for MAX_TIMESTAMP_LOOKUP, an
   * offset in the batch holding the largest timestamp, and that timestamp. Null when there is none.
   */
  offset_for_timestamp(timestamp_ms: number): Promise<{ offset: number; timestamp_ms: number } | null>;
}

/** A read_committed read, as a Fetch with isolation level 1 answers it. */
export interface CommittedRead {
  /** Whole batches from the one holding the offset, below the last stable offset (none at or past it). */
  batches: Buffer[];
  /** The aborted transactions with records among `batches`: no committed reader sees their records. */
  aborted: AbortedTransaction[];
}

export interface PartitionReader extends LogReader {
  /**
   * Below it every transaction has ended and its marker is below the high watermark (which it never
   * passes); the move of the high watermark is what moves it, so on_high_watermark wakes its readers.
   */
  readonly last_stable_offset: number;
  /** read() for a read_committed reader: stops at the last stable offset, lists the aborted transactions. */
  read_committed(offset: number, bytes_max: number): Promise<CommittedRead>;
}

/** How far a read may see: the high watermark (consumers) or everything written (replication). */
export type ReadIsolation = 'high_watermark' | 'log_end';

export interface SourceRead {
  /** Whole batches in offset order; the first holds the requested offset. */
  batches: Buffer[];
  bytes: number;
  high_watermark: number;
}

export interface ConsumerSource extends LogReader {
  read(offset: number, bytes_max: number, isolation?: ReadIsolation): Promise<SourceRead>;
  /** Calls `listener` when anything is written (a follower's long poll); returns the unsubscribe. */
  on_progress(listener: () => void): () => void;
  /** Deletes whole segments below `offset` and moves the log start there; returns the new log start. */
  delete_records_before(offset: number): Promise<number>;
}
