// Public entry of the storage layer: durable partition logs of record batches.
export { Storage, validate_partition_name, type StorageOptions } from './storage.ts';
export { MAX_TIMESTAMP_LOOKUP } from './log_types.ts';
export {
  PartitionLog,
  type AppendOptions,
  type AppendResult,
  type ReadIsolation,
  type ReadResult,
} from './partition_log.ts';
export {
  LOG_CONFIG_DEFAULT,
  storage_config_default,
  type DurabilityPolicy,
  type LogConfig,
  type StorageConfig,
} from './config.ts';
export type { RewriteResult, SegmentRewriter, SegmentView } from './segment_rewriter.ts';
export * from './errors.ts';
export type { DiskSpace, FileIO, Fd, FileStat, OpenMode } from './file_io.ts';
export { NodeFileIO } from './node_file_io.ts';
export { SimFileIO, SimulatedCrash, type SimFault } from './sim_file_io.ts';
export { ManualClock, MONOTONIC_CLOCK, SYSTEM_CLOCK, SILENT_LOGGER, type Clock, type Logger } from './clock.ts';
export { check_batch, type BatchCheckLimits } from './batch.ts';
export { read_whole_file, replace_file_atomically } from './file_util.ts';
export type { EpochEntry } from './leader_epochs.ts';
