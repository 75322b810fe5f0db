// The placement of a single node: a cluster of one. This broker holds every partition and leads it
// in leader epoch 0, for ever; topic records live in the data directory's metadata file. What a
// cluster member learns from etcd, the host learns here from the same calls: the topics as stored,
// the local log of each partition, the role (always leader) for each.
import type { PartitionLog, Storage } from '../storage/index.ts';
import { BrokerError } from '../core/errors.ts';
import { partition_name } from '../core/names.ts';
import type { Placement, PlacementHost, TopicPlacement } from '../core/placement.ts';
import type {
  BrokerAddress,
  InternalTopic,
  PartitionInfo,
  PartitionReassignment,
  TopicPartition,
  TopicRecord,
} from '../core/types.ts';
import type { PartitionReader } from '../core/partition_reader.ts';
import type { LocalMetadataStore } from './local_metadata_store.ts';

export class LocalPlacement implements Placement {
  readonly clustered = false;
  private host: PlacementHost | null = null;
  /** Partitions whose log and role the host has been told of. */
  private readonly placed = new Set<string>();

  constructor(
    private readonly node_id: number,
    private readonly storage: Storage,
    private readonly metadata: LocalMetadataStore,
  ) {}

  async attach(host: PlacementHost, internal_topics: readonly InternalTopic[]): Promise<void> {
    this.host = host;
    await host.apply_topics(this.metadata.topics());
    for (const topic of internal_topics) {
      if (!this.metadata.topic(topic.name))
        await host.create_topic(topic.name, 1, topic.configs, { replication_factor: 1 });
    }
    for (const topic of this.metadata.topics()) await this.place(topic, 0);
  }

  async join(): Promise<void> {
    // A single node has nothing to join.
  }

  async close(): Promise<void> {
    this.host = null;
  }

  private attached(): PlacementHost {
    if (!this.host) throw new BrokerError('leader_not_available', 'the broker is not started');
    return this.host;
  }

  /** Tells the host of the topic's partitions from `from` on: their logs, and that it leads them. */
  private async place(topic: TopicRecord, from: number): Promise<void> {
    const host = this.attached();
    for (let p = from; p < topic.partitions; p++) {
      const name = partition_name(topic.name, p);
      if (this.placed.has(name)) continue;
      const log = await host.ensure_log(topic.name, p);
      this.placed.add(name);
      await host.on_role(topic.name, p, 'leader', log);
    }
  }

  // ---------------------------------------------------------------- topics

  /** A manual assignment here names this broker alone. */
  private only_here(assignment: number[][] | undefined): void {
    const elsewhere = assignment?.flat().find((id) => id !== this.node_id);
    if (elsewhere !== undefined) {
      throw new BrokerError(
        'invalid_replica_assignment',
        `broker ${elsewhere} does not exist: this broker (node id ${this.node_id}) runs alone`,
      );
    }
  }

  async create_topic(record: TopicRecord, placement: TopicPlacement): Promise<void> {
    this.only_here(placement.assignment);
    if (placement.replication_factor > 1) {
      throw new BrokerError(
        'invalid_replication_factor',
        `replication factor ${placement.replication_factor} needs a cluster; this broker runs alone`,
      );
    }
    // A leftover partition of a deleted topic of the same name is removed first.
    for (let p = 0; p < record.partitions; p++) {
      const name = partition_name(record.name, p);
      if (this.storage.partition(name)) await this.storage.delete_partition(name);
    }
    await this.metadata.create_topic(record);
    await this.attached().apply_topics(this.metadata.topics());
    await this.place(record, 0);
  }

  async delete_topic(name: string): Promise<void> {
    const record = this.metadata.topic(name);
    await this.metadata.delete_topic(name);
    // The host drops the local partitions of a topic no longer stored.
    await this.attached().apply_topics(this.metadata.topics());
    for (let p = 0; p < (record?.partitions ?? 0); p++) this.placed.delete(partition_name(name, p));
  }

  async update_topic(
    name: string,
    change: (record: TopicRecord) => TopicRecord,
    new_replicas?: number[][],
  ): Promise<void> {
    const before = this.metadata.topic(name);
    if (!before) throw new BrokerError('unknown_topic_or_partition', `unknown topic ${name}`);
    this.only_here(new_replicas);
    await this.metadata.update_topic(name, change);
    await this.attached().apply_topics(this.metadata.topics());
    await this.place(this.metadata.topic(name)!, before.partitions);
  }

  // ---------------------------------------------------------------- where partitions are

  brokers(self: { host: string; port: number }, _listener: string): BrokerAddress[] {
    return [{ node_id: this.node_id, ...self }];
  }

  async elect_leader(topic: string, partition: number): Promise<void> {
    throw new BrokerError('election_not_needed', `${topic}-${partition} has its one replica as leader`);
  }

  broker_ids(): number[] {
    return [this.node_id];
  }

  controller_id(): number {
    return this.node_id;
  }

  partition_info(): PartitionInfo {
    return { leader: this.node_id, leader_epoch: 0, replicas: [this.node_id], isr: [this.node_id] };
  }

  partition_reassignment(): PartitionReassignment | null {
    return null;
  }

  async reassign(): Promise<void> {
    throw new BrokerError(
      'invalid_replica_assignment',
      'a single broker has nowhere to move partitions; start a cluster (--etcd)',
    );
  }

  leader_of(): number {
    return this.node_id;
  }

  // ---------------------------------------------------------------- the data

  private log(topic: string, partition: number): PartitionLog {
    const log = this.storage.partition(partition_name(topic, partition));
    if (!log) throw new BrokerError('not_leader_or_follower', `this broker holds no replica of ${topic}-${partition}`);
    return log;
  }

  /** A single node's view is its metadata store: nothing to catch up with. */
  async catch_up(): Promise<void> {}

  /** A single node leads every partition from the moment it exists. */
  leadership_pending(): null {
    return null;
  }

  leader_log(topic: string, partition: number): PartitionLog {
    return this.log(topic, partition);
  }

  read_log(topic: string, partition: number): PartitionLog {
    return this.log(topic, partition);
  }

  replica_fetch(): PartitionLog {
    throw new BrokerError('not_leader_or_follower', `broker ${this.node_id} does not replicate partitions`);
  }

  /** One leader epoch (0) on a single node: it ends at the log end. */
  end_offset_for_epoch(topic: string, partition: number, epoch: number): { epoch: number; end_offset: number } {
    const log = this.log(topic, partition);
    if (epoch > 0) throw new BrokerError('unknown_leader_epoch', `${topic}-${partition} has only leader epoch 0`);
    return { epoch: 0, end_offset: log.written_offset };
  }

  reader(topic: string, partition: number): PartitionReader {
    return this.attached().reader_of(this.log(topic, partition));
  }

  is_leader(): boolean {
    return true;
  }

  async append(topic: string, partition: number, records: Buffer): Promise<void> {
    const record = this.metadata.topic(topic);
    if (!record || !Number.isInteger(partition) || partition < 0 || partition >= record.partitions) {
      throw new BrokerError('unknown_topic_or_partition', `unknown topic or partition ${topic}-${partition}`);
    }
    await this.log(topic, partition).append(records);
  }

  async forward(topic: string, partition: number): Promise<number> {
    throw new BrokerError('leader_not_available', `${topic}-${partition}: a single node leads every partition itself`);
  }

  // A single node coordinates every transaction and leads every partition: nothing to ask elsewhere.
  async verify_in_txn(coordinator: TopicPartition): Promise<void> {
    throw new BrokerError('not_coordinator', `${coordinator.topic}-${coordinator.partition} is not led here yet`);
  }

  async add_to_txn(coordinator: TopicPartition): Promise<void> {
    throw new BrokerError('not_coordinator', `${coordinator.topic}-${coordinator.partition} is not led here yet`);
  }

  async write_marker(where: TopicPartition): Promise<void> {
    throw new BrokerError('not_leader_or_follower', `${where.topic}-${where.partition} is not led here yet`);
  }
}
