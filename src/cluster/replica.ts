// One replica this broker holds and the role it plays for it, its settings, and what the broker
// core provides replication (ReplicaHost): shared by the replica manager and the follower fetchers.
import type { PartitionLog } from '../storage/index.ts';
import type { LeaderState } from './leader_state.ts';
import type { PartitionState } from './model.ts';
import { default_number } from '../core/settings.ts';

export type Role = 'leader' | 'follower' | 'none';

export interface Replica {
  topic: string;
  partition: number;
  name: string;
  log: PartitionLog;
  state: PartitionState;
  mod_revision: string;
  role: Role;
  /** The leader epoch this broker acts in for the partition. */
  epoch: number;
  leader: LeaderState | null;
  /** A follower must ask the leader where its log diverges before fetching. */
  needs_truncation: boolean;
  /**
   * A truncation under way (it spans several awaits): a new role starts only after it, so no
   * epoch is assigned at, and no append lands past, an end that is about to move.
   */
  truncating: Promise<void> | null;
  /** A read met a corrupt batch at this offset: the copy is cut there and fetched again. */
  refetch_from: number | null;
}

export interface ReplicaSettings {
  /** A follower that has not caught up for this long leaves the ISR. */
  replica_lag_time_max_ms: number;
  replica_fetch_wait_ms: number;
  replica_fetch_bytes_max: number;
}

export const REPLICA_SETTINGS_DEFAULT: ReplicaSettings = {
  replica_lag_time_max_ms: default_number('cluster.replica_lag_time_max_ms'),
  replica_fetch_wait_ms: 500,
  replica_fetch_bytes_max: 8 * 1024 * 1024,
};

/** What the broker core provides: its logs, and hooks into producer state and coordinators. */
export interface ReplicaHost {
  /** The local log of a partition, created when missing. */
  ensure_log(topic: string, partition: number): Promise<PartitionLog>;
  /** The end this log has made durable under the storage policy (the leader's share of the HW). */
  durable_end(log: PartitionLog): number;
  min_insync_replicas(topic: string): number;
  on_role(replica: Replica): void;
  on_replicated(log: PartitionLog, batches: Buffer): void;
  on_truncated(log: PartitionLog, end: number): void;
  /** Deletes a local replica this broker no longer holds. */
  drop_log(log: PartitionLog): Promise<void>;
  /**
   * The local logs that may lack acknowledged records since the broker started: those recovery cut
   * short (a torn, cut or corrupt tail), and all of them after an unclean shutdown under a
   * durability policy other than fsync (acknowledged writes not yet flushed may be gone).
   */
  suspect_copies(): { topic: string; partition: number; why: string }[];
}
