// The core's public face: everything a front end may use of the broker core, and nothing else
// (the layer check lets src/server/ import only this file of src/core/). The contracts the
// broker's implementation, the placements and the composition root share are in the files beside.
export type * from './api.ts';
export * from './types.ts';
export * from './errors.ts';
export * from './acls.ts';
export * from './quotas.ts';
export { ManualClock, SILENT_LOGGER, SYSTEM_CLOCK, type Clock, type Logger } from './clock.ts';
export { is_invariant_failure, stop_on_invariant_failure } from './invariants.ts';
export type {
  CommittedRead,
  ConsumerSource,
  LogReader,
  PartitionReader,
  ReadIsolation,
  SourceRead,
} from './partition_reader.ts';
export { MAX_TIMESTAMP_LOOKUP } from './partition_reader.ts';
export type { Credentials } from './credentials.ts';
export type { Election } from './placement.ts';
export { PARTITIONS_MAX, is_internal_topic } from './names.ts';
export { PRIORITY_LEVELS_MAX, PRIORITY_MAX, priority_level, priority_levels } from './queue_priority.ts';
export * from './settings.ts';
export * from './setting_values.ts';
