// The MetadataStore of a cluster member: share-group configs and producer-id blocks are etcd
// transactions; configs are read from this broker's view of the cluster, and a change resolves once
// the view shows it. The cluster id is made once, by the first broker to start.
import type { MetadataStore } from '../core/metadata_store.ts';
import type { GroupConfigs } from '../core/types.ts';
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

  allocate_producer_ids(count: number): Promise<number> {
    return this.etcd.allocate_producer_ids(count);
  }
}
