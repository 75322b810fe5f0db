// What an append to a partition log may ask and gets back, what a read returns, and the log's own
// queues of appends.
import type { Segment } from './segment.ts';

export interface AppendOptions {
  /** Leader epoch stamped into every batch; defaults to the log's current epoch. */
  leader_epoch?: number;
  /**
   * The caller already ran check_batch on every batch with this log's message_bytes_max and client
   * rules (the broker does, before trusting a batch's producer fields): skip the second CRC pass.
   */
  checked?: boolean;
  /**
   * A follower's copy of the leader's batches: their offsets and leader epochs are kept as they
   * are, and must continue this log exactly.
   */
  replicated?: boolean;
  /** Resolve once the local durability policy holds, without waiting for the ack gate. */
  local_ack?: boolean;
}

export interface AppendResult {
  base_offset: number;
  last_offset: number;
  /** The broker time stamped on LogAppendTime batches, -1 for CreateTime. */
  log_append_time_ms: number;
  log_start_offset: number;
}

export interface ReadResult {
  /** Whole batches in offset order; the first holds the requested offset. */
  batches: Buffer[];
  bytes: number;
  high_watermark: number;
  log_start_offset: number;
  log_end_offset: number;
}

/** How far a read may see: the high watermark (consumers) or everything written (replication). */
export type ReadIsolation = 'high_watermark' | 'log_end';

/** offset_for_timestamp's lookup of the batch holding the largest timestamp (Kafka's MAX_TIMESTAMP). */
export const MAX_TIMESTAMP_LOOKUP = -3;

/** An append queued behind the single writer (partition_log.ts). */
export interface PendingAppend {
  segment: Segment;
  position: number;
  buffer: Buffer;
  base_offset: number;
  last_offset: number;
  result: AppendResult;
  resolve: (result: AppendResult) => void;
  reject: (error: Error) => void;
}

/** An append waiting for its acknowledgement (the high watermark or fsync reaching it). */
export interface AckWaiter {
  last_offset: number;
  result: AppendResult;
  resolve: (result: AppendResult) => void;
  reject: (error: Error) => void;
}
