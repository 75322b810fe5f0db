// A share group as the share coordinator keeps it: its members, its settings and counters, and per
// partition the share-partition state machine with what was read ahead and the dead letters due.
import type { PartitionReader } from '../../core/partition_reader.ts';
import type { QueueCounters, QueueSettings } from '../../core/types.ts';
import type { ReadAhead } from './read_ahead.ts';
import type { SharePartition } from './share_partition.ts';

export interface Member {
  id: string;
  epoch: number;
  topics: string[];
  last_seen_ms: number;
  client_id: string;
  client_host: string;
}

export interface PartitionState {
  topic: string;
  partition: number;
  share: SharePartition;
  /** Expiry times of the records read so far (records are acquired only once read). */
  ahead: ReadAhead;
  /** Dead letters decided and not yet written. */
  letters: ReturnType<SharePartition['take_dead_letters']>;
  /** Set while the partition cannot be read (its leader unreachable): warned about once. */
  unreadable?: boolean;
}

export interface ShareGroup {
  id: string;
  /** Shared by the group's partitions and updated in place when its configs change. */
  settings: QueueSettings;
  epoch: number;
  members: Map<string, Member>;
  partitions: Map<string, PartitionState>;
  counters: QueueCounters;
}

export const key_of = (topic: string, partition: number) => `${topic}\u0000${partition}`;

/** Whether the group sees only committed transactions (share.isolation.level). */
export const reads_committed = (settings: QueueSettings) => settings.isolation_level === 'read_committed';

/**
 * Where the group's view of a partition ends: records at or past it are not handed out yet. The
 * last stable offset under read_committed (an open transaction's records wait for its end), else
 * the high watermark.
 */
export function visible_end(settings: QueueSettings, log: PartitionReader): number {
  return reads_committed(settings) ? log.last_stable_offset : log.high_watermark;
}

/** What every share group of the broker did, for metrics. */
export interface ShareCounters {
  acquired: number;
  accepted: number;
  released: number;
  rejected: number;
  lock_timeouts: number;
  dead_lettered: number;
  expired: number;
  redeliveries: number;
}

export function new_share_counters(): ShareCounters {
  return {
    acquired: 0,
    accepted: 0,
    released: 0,
    rejected: 0,
    lock_timeouts: 0,
    dead_lettered: 0,
    expired: 0,
    redeliveries: 0,
  };
}
