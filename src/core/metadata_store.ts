// What the broker core keeps in the cluster's metadata besides topics: the cluster id, share-group
// configs, the producer-id allocator, the AMQP routing definitions per virtual host, the ACL
// bindings, the SCRAM credentials of managed users and the client quotas. On a single
// node a JSON file in the data directory (single_node/local_metadata_store.ts), in a cluster etcd
// (cluster/etcd_metadata_store.ts). Topic
// records belong to the placement (placement.ts), which creates a topic's partitions with them.
import crypto from 'node:crypto';
import type { GroupConfigs, RoutingDefinitions } from './types.ts';
import type { AclBinding } from './acls.ts';
import type { ClientQuota, QuotaEntity, QuotaValues } from './quotas.ts';

/** One SCRAM credential as stored (base64): never a password or a salted password. */
export interface StoredScram {
  salt: string;
  iterations: number;
  stored_key: string;
  server_key: string;
}

/** A managed user's credentials, by hash. */
export type StoredScramUser = Partial<Record<'sha256' | 'sha512', StoredScram>>;

export interface MetadataStore {
  readonly cluster_id: string;
  /** A share group's configs (empty when it has none). */
  group_configs(group_id: string): GroupConfigs;
  /** Resolves once group_configs() answers with `configs`; an empty set removes them. */
  set_group_configs(group_id: string, configs: GroupConfigs): Promise<void>;
  /** Reserves `count` producer ids no other broker hands out; returns the first. */
  allocate_producer_ids(count: number): Promise<number>;
  /** Virtual hosts with routing definitions. */
  routing_vhosts(): string[];
  routing_definitions(vhost: string): RoutingDefinitions | undefined;
  /** Resolves once routing_definitions() answers with `definitions`. */
  set_routing_definitions(vhost: string, definitions: RoutingDefinitions): Promise<void>;
  /** SCRAM credentials of the users managed while the broker runs; the same map until they change. */
  scram_users(): ReadonlyMap<string, StoredScramUser>;
  /** Resolves once scram_users() shows the user's credential for `hash` as `credential` (null: none). */
  set_scram(user: string, hash: 'sha256' | 'sha512', credential: StoredScram | null): Promise<void>;
  /** The ACL bindings; the same array until they change. */
  acls(): readonly AclBinding[];
  /** Resolves once acls() holds `added` (each once) and none of `removed`. */
  change_acls(added: readonly AclBinding[], removed: readonly AclBinding[]): Promise<void>;
  /** The client quotas, one entry per entity; the same array until they change. */
  client_quotas(): readonly ClientQuota[];
  /** Resolves once client_quotas() gives the entity `values` (null: no entry). */
  set_client_quota(entity: QuotaEntity, values: QuotaValues | null): Promise<void>;
  /**
   * Dynamic broker configs (Kafka names) by scope: BROKER_CONFIGS_DEFAULT for the cluster-wide
   * defaults, else a broker's node id as text.
   */
  broker_configs(): Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** Resolves once broker_configs() gives `scope` exactly `configs` (empty: none). */
  set_broker_configs(scope: string, configs: Readonly<Record<string, string>>): Promise<void>;
}

/** The scope of the cluster-wide dynamic broker configs (Kafka's BROKER resource with an empty name). */
export const BROKER_CONFIGS_DEFAULT = 'default';

/** Topic configs whose cluster-wide default is a dynamic broker config: the topic config by the broker config. */
export const TOPIC_DEFAULT_CONFIGS: Readonly<Record<string, string>> = {
  'log.retention.ms': 'retention.ms',
  'log.retention.bytes': 'retention.bytes',
  'log.segment.bytes': 'segment.bytes',
  'log.roll.ms': 'segment.ms',
  'log.index.interval.bytes': 'index.interval.bytes',
  'message.max.bytes': 'max.message.bytes',
  'log.message.timestamp.type': 'message.timestamp.type',
  'log.cleanup.policy': 'cleanup.policy',
  'compression.type': 'compression.type',
  'min.insync.replicas': 'min.insync.replicas',
  'unclean.leader.election.enable': 'unclean.leader.election.enable',
};

/** A topic's configs over the cluster-wide defaults of `broker_configs` (the built-in defaults left out). */
export function with_cluster_defaults(
  configs: Readonly<Record<string, string>> | undefined,
  broker_configs: Readonly<Record<string, Readonly<Record<string, string>>>>,
): Record<string, string> {
  const merged: Record<string, string> = {};
  for (const [name, value] of Object.entries(broker_configs[BROKER_CONFIGS_DEFAULT] ?? {})) {
    const topic_name = TOPIC_DEFAULT_CONFIGS[name];
    if (topic_name !== undefined) merged[topic_name] = value;
  }
  return { ...merged, ...configs };
}

/** 16 random bytes (never all zero), base64url: topic ids and cluster ids as Kafka prints them. */
export function new_uuid(): string {
  let bytes = crypto.randomBytes(16);
  while (bytes.every((b) => b === 0)) bytes = crypto.randomBytes(16);
  return bytes.toString('base64url');
}
