// What a cluster agrees on, as kept in etcd: registered brokers, the controller, topics with their
// replica assignments, and each partition's leader, leader epoch and in-sync replica set. Every
// broker holds a ClusterView read from etcd and acts on it; only etcd's copy is authoritative.
import type { AclBinding } from '../core/acls.ts';
import type { ClientQuota } from '../core/quotas.ts';
import type { StoredScramUser } from '../core/metadata_store.ts';
import type { RoutingDefinitions, TopicRecord } from '../core/types.ts';

export interface BrokerRegistration {
  node_id: number;
  host: string;
  port: number;
  started_ms: number;
  /** Each Kafka listener's advertised address, by name (absent when registered before there were several). */
  listeners?: Record<string, { host: string; port: number }>;
  /** Id of the broker's data directory: a restart of the same broker carries the same one. */
  dir_id: string;
}

export interface PartitionState {
  /** Node id of the leader; -1 while no replica in the ISR is alive. */
  leader: number;
  /** Raised by every leader change; fences a deposed leader's requests and writes. */
  leader_epoch: number;
  isr: number[];
  /**
   * Eligible replicas: out of the ISR, yet holding every acknowledged record, because they left it
   * when it was below min.insync.replicas (src/cluster/eligible_replicas.ts). Absent when none.
   */
  elr?: number[];
  replicas: number[];
  /**
   * A reassignment in progress: the replica set wanted. Meanwhile `replicas` holds the old and the
   * new members; the controller switches to this set once all of it is in the ISR.
   */
  target_replicas?: number[];
  /** With a reassignment in progress: the replicas before it began (a cancel goes back to them). */
  original_replicas?: number[];
}

export interface ClusterTopic extends TopicRecord {
  /** Replica node ids of each partition, the preferred leader first. */
  assignment: number[][];
}

export interface Versioned<T> {
  value: T;
  /** etcd mod revision of the key: writes compare it, so a stale writer fails. */
  mod_revision: string;
}

export interface ClusterView {
  /** etcd revision the view was read at. */
  revision: string;
  cluster_id: string | null;
  brokers: Map<number, BrokerRegistration>;
  controller: { node_id: number; epoch: string } | null;
  topics: Map<string, Versioned<ClusterTopic>>;
  /** Keyed by `${topic}/${partition}`. */
  partitions: Map<string, Versioned<PartitionState>>;
  group_configs: Map<string, Record<string, string>>;
  /** AMQP routing definitions by virtual host. */
  routing: Map<string, RoutingDefinitions>;
  /** ACL bindings, in etcd's key order. */
  acls: AclBinding[];
  /** Managed users' SCRAM credentials. */
  scram_users: Map<string, StoredScramUser>;
  /** Client quotas, one entry per entity. */
  client_quotas: ClientQuota[];
  /** Dynamic broker configs by scope (`default`, or a node id). */
  broker_configs: Record<string, Record<string, string>>;
  producer_id_block_end: Versioned<number> | null;
}

export function partition_key(topic: string, partition: number): string {
  return `${topic}/${partition}`;
}

export function empty_view(): ClusterView {
  return {
    revision: '0',
    cluster_id: null,
    brokers: new Map(),
    controller: null,
    topics: new Map(),
    partitions: new Map(),
    group_configs: new Map(),
    routing: new Map(),
    acls: [],
    scram_users: new Map(),
    client_quotas: [],
    broker_configs: {},
    producer_id_block_end: null,
  };
}

/**
 * Replica assignment for a new topic: partition p starts at broker index p (round robin), so
 * leaders spread evenly; replicas follow in node id order.
 */
export function assign_replicas(
  live_node_ids: number[],
  partitions: number,
  replication_factor: number,
  start = 0,
): number[][] {
  const nodes = [...live_node_ids].sort((a, b) => a - b);
  const assignment: number[][] = [];
  for (let p = 0; p < partitions; p++) {
    const replicas: number[] = [];
    for (let r = 0; r < replication_factor; r++) replicas.push(nodes[(start + p + r) % nodes.length]!);
    assignment.push(replicas);
  }
  return assignment;
}
