// Settings of the storage layer, every limit named, with the defaults a single node starts with.

export type DurabilityPolicy =
  /** An append resolves only after fdatasync; concurrent appends share fsync rounds (group commit). */
  | { kind: 'fsync' }
  /** An append resolves once written to the OS; every `interval_ms` the dirty files are fsynced. */
  | { kind: 'interval'; interval_ms: number }
  /** An append resolves once written to the OS; flushing is left to the OS (and to checkpoints). */
  | { kind: 'none' };

/** Settings of one partition log; front ends map topic configs onto these. */
export interface LogConfig {
  /** Roll to a new segment when the active one would grow past this. */
  segment_bytes: number;
  /** Roll to a new segment when the active one is older than this. */
  segment_ms: number;
  /** Bytes of batches between two sparse index entries. */
  index_interval_bytes: number;
  /** Largest record batch accepted, in bytes. */
  message_bytes_max: number;
  /** Delete closed segments whose newest record is older than this; -1 keeps them forever. */
  retention_ms: number;
  /** Delete the oldest closed segments while the log is larger than this; -1 means no limit. */
  retention_bytes: number;
  /** 'log_append' replaces the batch's max timestamp with the broker's clock on append. */
  timestamp_type: 'create' | 'log_append';
  /** Retention deletes old segments (false: a compacted-only log keeps them; its cleaner works on them). */
  cleanup_delete: boolean;
}

export const LOG_CONFIG_DEFAULT: Readonly<LogConfig> = Object.freeze({
  segment_bytes: 1024 * 1024 * 1024,
  segment_ms: 7 * 24 * 60 * 60 * 1000,
  index_interval_bytes: 4096,
  message_bytes_max: 1024 * 1024 + 12,
  retention_ms: 7 * 24 * 60 * 60 * 1000,
  retention_bytes: -1,
  timestamp_type: 'create',
  cleanup_delete: true,
});

export interface StorageConfig {
  data_dir: string;
  durability: DurabilityPolicy;
  /** Open file descriptors held by the handle cache, across all partitions. */
  handles_max: number;
  /** Bytes of recently appended batches kept in memory, across all partitions. */
  tail_cache_bytes_max: number;
  /** Bytes of closed segments' indexes kept in memory, across all partitions. */
  index_cache_bytes_max: number;
  /** Bytes appended to one partition and not yet written before appends are refused. */
  pending_bytes_max: number;
  /** Largest single write call (a group of batches of one partition). */
  write_bytes_max: number;
  /** Most batches in a single write call. */
  write_batches_max: number;
  /** fdatasync calls in flight at once during a flush round. */
  flush_parallelism_max: number;
  /** Partitions recovered at once when the storage opens. */
  open_parallelism_max: number;
  /** How often recovery points are written to the checkpoint file. */
  checkpoint_interval_ms: number;
  /** How often retention runs; 0 disables the timer (callers run enforce_retention). */
  retention_check_interval_ms: number;
  /** Check the CRC of every batch read from a file before serving it. */
  verify_reads: boolean;
}

export function storage_config_default(data_dir: string): StorageConfig {
  return {
    data_dir,
    durability: { kind: 'fsync' },
    handles_max: 1024,
    tail_cache_bytes_max: 64 * 1024 * 1024,
    index_cache_bytes_max: 32 * 1024 * 1024,
    pending_bytes_max: 64 * 1024 * 1024,
    write_bytes_max: 4 * 1024 * 1024,
    write_batches_max: 512,
    flush_parallelism_max: 16,
    open_parallelism_max: 16,
    checkpoint_interval_ms: 10_000,
    retention_check_interval_ms: 60_000,
    verify_reads: true,
  };
}

/** Recovery accepts stored batches up to this size even if message_bytes_max was lowered since. */
export const RECOVERY_BATCH_BYTES_MAX = 64 * 1024 * 1024;
/** Bytes read per call while scanning a segment during recovery. */
export const RECOVERY_READ_BYTES = 1024 * 1024;
