// What a reader of a partition's records needs, wherever the partition is kept: its bounds, whole
// batches below the high watermark, a wake-up when the high watermark moves, and a timestamp lookup.
// A local PartitionLog is one; in a cluster a broker without an in-sync replica reads through a
// view of the partition on its leader (cluster/remote_partitions.ts). Share groups, dead-letter
// handling and the admin API read through this, so they work on any broker.

export interface PartitionReader {
  readonly log_start_offset: number;
  readonly high_watermark: number;
  /** Whole batches from the one holding `offset`, below the high watermark, about `bytes_max` bytes (at least one batch). */
  read(offset: number, bytes_max: number): Promise<{ batches: Buffer[] }>;
  /** Calls `listener` when the high watermark advances; returns the unsubscribe. */
  on_high_watermark(listener: (high_watermark: number) => void): () => void;
  /** The first offset whose timestamp is at or after `timestamp_ms`; null when there is none. */
  offset_for_timestamp(timestamp_ms: number): Promise<{ offset: number; timestamp_ms: number } | null>;
}
