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
}

/** 16 random bytes (never all zero), base64url: topic ids and cluster ids as Kafka prints them. */
export function new_uuid(): string {
  let bytes = crypto.randomBytes(16);
  while (bytes.every((b) => b === 0)) bytes = crypto.randomBytes(16);
  return bytes.toString('base64url');
}
