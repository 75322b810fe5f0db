// The MetadataStore of a cluster member: topic and config changes are etcd transactions, and each
// call resolves once this broker's view of the cluster shows the change.
import { BrokerError } from '../broker/errors.ts';
import type { MetadataStore, TopicRecord } from '../broker/metadata_store.ts';
import type { ClusterNode } from './cluster_node.ts';
import type { EtcdStore } from './etcd_store.ts';

export class EtcdMetadataStore implements MetadataStore {
  readonly distributed = true;

  constructor(
    private readonly etcd: EtcdStore,
    private readonly cluster: () => ClusterNode | null,
  ) {}

  private node(): ClusterNode {
    const node = this.cluster();
    if (!node) throw new BrokerError('leader_not_available', 'this broker has not joined the cluster yet');
    return node;
  }

  async create_topic(record: TopicRecord, replication_factor: number): Promise<void> {
    await this.node().create_topic(record, replication_factor);
  }

  delete_topic(name: string): Promise<void> {
    return this.node().delete_topic(name);
  }

  update_topic(name: string, change: (record: TopicRecord) => TopicRecord): Promise<void> {
    return this.node().update_topic(name, (topic) => ({ ...topic, ...change(topic), assignment: topic.assignment }));
  }

  set_group_configs(group_id: string, configs: Record<string, string>): Promise<void> {
    return this.etcd.set_group_configs(group_id, configs);
  }

  allocate_producer_ids(count: number): Promise<number> {
    return this.etcd.allocate_producer_ids(count);
  }
}
