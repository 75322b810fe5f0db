// The MetadataStore of a cluster member: share-group configs and producer-id blocks are etcd
// transactions; configs are read from this broker's view of the cluster, and a change resolves once
// the view shows it. The cluster id is made once, by the first broker to start.
import type { MetadataStore, StoredScram, StoredScramUser } from '../core/metadata_store.ts';
import type { GroupConfigs, RoutingDefinitions } from '../core/types.ts';
import { binding_key, type AclBinding } from '../core/acls.ts';
import { quota_entity_key, type ClientQuota, type QuotaEntity, type QuotaValues } from '../core/quotas.ts';

const NO_ACLS: readonly AclBinding[] = [];
const NO_USERS: ReadonlyMap<string, StoredScramUser> = new Map();
const NO_QUOTAS: readonly ClientQuota[] = [];
import type { ClusterNode } from './cluster_node.ts';
import type { EtcdStore } from './etcd_store.ts';

export class EtcdMetadataStore implements MetadataStore {
  constructor(
    private readonly etcd: EtcdStore,
    readonly cluster_id: string,
    /** The cluster membership, once this broker has joined. */
    private readonly node: () => ClusterNode | null,
  ) {}

  group_configs(group_id: string): GroupConfigs {
    return { ...this.node()?.view.group_configs.get(group_id) };
  }

  async set_group_configs(group_id: string, configs: GroupConfigs): Promise<void> {
    await this.etcd.set_group_configs(group_id, configs);
    const wanted = JSON.stringify(configs);
    await this.node()?.wait_for_view(
      (view) => JSON.stringify(view.group_configs.get(group_id) ?? {}) === wanted,
      `configs of group ${group_id}`,
    );
  }

  routing_vhosts(): string[] {
    return [...(this.node()?.view.routing.keys() ?? [])];
  }

  routing_definitions(vhost: string): RoutingDefinitions | undefined {
    return this.node()?.view.routing.get(vhost);
  }

  async set_routing_definitions(vhost: string, definitions: RoutingDefinitions): Promise<void> {
    await this.etcd.set_routing_definitions(vhost, definitions);
    const wanted = JSON.stringify(definitions);
    await this.node()?.wait_for_view(
      (view) => JSON.stringify(view.routing.get(vhost)) === wanted,
      `routing of virtual host ${vhost}`,
    );
  }

  scram_users(): ReadonlyMap<string, StoredScramUser> {
    return this.node()?.view.scram_users ?? NO_USERS;
  }

  async set_scram(user: string, hash: 'sha256' | 'sha512', credential: StoredScram | null): Promise<void> {
    await this.etcd.set_scram(user, hash, credential);
    const wanted = JSON.stringify(credential ?? null);
    await this.node()?.wait_for_view(
      (view) => JSON.stringify(view.scram_users.get(user)?.[hash] ?? null) === wanted,
      `the SCRAM credential of ${user}`,
    );
  }

  acls(): readonly AclBinding[] {
    return this.node()?.view.acls ?? NO_ACLS;
  }

  async change_acls(added: readonly AclBinding[], removed: readonly AclBinding[]): Promise<void> {
    await this.etcd.change_acls(added, removed);
    const wanted = new Set(added.map(binding_key));
    const gone = new Set(removed.map(binding_key));
    await this.node()?.wait_for_view((view) => {
      const now = new Set(view.acls.map(binding_key));
      return [...wanted].every((key) => now.has(key)) && ![...gone].some((key) => now.has(key) && !wanted.has(key));
    }, 'ACL bindings');
  }

  client_quotas(): readonly ClientQuota[] {
    return this.node()?.view.client_quotas ?? NO_QUOTAS;
  }

  async set_client_quota(entity: QuotaEntity, values: QuotaValues | null): Promise<void> {
    await this.etcd.set_client_quota(entity, values);
    const key = quota_entity_key(entity);
    const wanted = JSON.stringify(values);
    await this.node()?.wait_for_view(
      (view) =>
        JSON.stringify(view.client_quotas.find((quota) => quota_entity_key(quota.entity) === key)?.values ?? null) ===
        wanted,
      `the quotas of ${key}`,
    );
  }

  broker_configs(): Readonly<Record<string, Readonly<Record<string, string>>>> {
    return this.node()?.view.broker_configs ?? {};
  }

  async set_broker_configs(scope: string, configs: Readonly<Record<string, string>>): Promise<void> {
    await this.etcd.set_broker_configs(scope, configs);
    const wanted = JSON.stringify(configs);
    await this.node()?.wait_for_view(
      (view) => JSON.stringify(view.broker_configs[scope] ?? {}) === wanted,
      `the broker configs of ${scope}`,
    );
  }

  allocate_producer_ids(count: number): Promise<number> {
    return this.etcd.allocate_producer_ids(count);
  }
}
