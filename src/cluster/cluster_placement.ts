// The placement of a cluster member (core/placement.ts): topics, partition leadership and
// replication as the cluster in etcd decides them. Until join() registers this broker and reads
// the cluster's view it holds nothing, and calls that need the cluster answer leader_not_available.
// The controller, once elected here, also creates the broker's internal topics as soon as enough
// brokers are live to replicate them.
import path from 'node:path';
import { MONOTONIC_CLOCK, type Clock, type Logger } from '../core/clock.ts';
import { BrokerError } from '../core/errors.ts';
import { new_uuid } from '../core/metadata_store.ts';
import type { PartitionReader } from '../core/partition_reader.ts';
import type { Election, Placement, PlacementHost, TopicPlacement } from '../core/placement.ts';
import type {
  BrokerAddress,
  InternalTopic,
  PartitionInfo,
  PartitionReassignment,
  TopicPartition,
  TopicRecord,
  TxnMarker,
  TxnProducer,
} from '../core/types.ts';
import { type FileIO, type PartitionLog, read_whole_file, replace_file_atomically } from '../storage/index.ts';
import { CLUSTER_DEFAULTS, ClusterNode, type ClusterHost, type ClusterOptions } from './cluster_node.ts';
import type { EtcdStore } from './etcd_store.ts';
import { type ClusterTopic, type ClusterView, assign_replicas, partition_key } from './model.ts';

const DIRECTORY_ID_FILE = 'directory-id';
/**
 * How long a produce waits for this broker to take up a leadership the cluster view already gives
 * it (opening the log, recording the epoch: milliseconds), before it is refused as not the leader.
 */
const LEADERSHIP_WAIT_MS = 5_000;

export interface ClusterPlacementParts {
  node_id: number;
  options: ClusterOptions;
  etcd: EtcdStore;
  io: FileIO;
  data_dir: string;
  clock: Clock;
  logger: Logger;
}

export class ClusterPlacement implements Placement {
  readonly clustered = true;
  /** Cluster membership; null until join(). */
  node: ClusterNode | null = null;
  private host: PlacementHost | null = null;
  private internal_topics: readonly InternalTopic[] = [];
  private internal_topics_pending = false;

  constructor(private readonly parts: ClusterPlacementParts) {}

  async attach(host: PlacementHost, internal_topics: readonly InternalTopic[]): Promise<void> {
    this.host = host;
    this.internal_topics = internal_topics;
  }

  /**
   * Registers this broker (at the address clients and replicas reach it) and starts following the
   * cluster. Refuses when the node id is registered by a live broker.
   */
  async join(
    address: { host: string; port: number },
    listeners: Readonly<Record<string, { host: string; port: number }>>,
  ): Promise<void> {
    const { parts } = this;
    const registration = {
      node_id: parts.node_id,
      host: address.host,
      port: address.port,
      listeners: { ...listeners },
      started_ms: parts.clock.now_ms(),
      dir_id: await this.directory_id(),
    };
    // Share groups are found through the group coordinator and delayed delivery runs beside them:
    // the controller keeps the internal partitions on one leader when it can.
    const colocated = this.internal_topics.map((topic) => partition_key(topic.name, 0));
    this.node = await ClusterNode.join(
      parts.etcd,
      { ...parts.options, colocated },
      registration,
      this.cluster_host(),
      parts.logger,
      // Leases, lags and deadlines are durations: a wall clock stepped back must not stretch a lease.
      MONOTONIC_CLOCK,
    );
  }

  /** A random id kept in the data directory: tells a restart of this broker from another broker. */
  private async directory_id(): Promise<string> {
    const file = path.join(this.parts.data_dir, DIRECTORY_ID_FILE);
    const bytes = await read_whole_file(this.parts.io, file);
    if (bytes) return bytes.toString('utf8').trim();
    const id = new_uuid();
    await replace_file_atomically(this.parts.io, file, Buffer.from(`${id}\n`));
    return id;
  }

  private attached(): PlacementHost {
    if (!this.host) throw new BrokerError('leader_not_available', 'the broker is not started');
    return this.host;
  }

  private cluster_host(): ClusterHost {
    const host = this.attached();
    return {
      apply_topics: async (view) => {
        await host.apply_topics([...view.topics.values()].map((topic) => topic.value));
        if (this.node?.controller.is_active) void this.ensure_internal_topics(view);
      },
      ensure_log: (topic, partition) => host.ensure_log(topic, partition),
      durable_end: (log) => host.durable_end(log),
      min_insync_replicas: (topic) => host.min_insync_replicas(topic),
      on_role: (replica) => void host.on_role(replica.topic, replica.partition, replica.role, replica.log),
      on_replicated: (log, batches) => host.on_replicated(log, batches),
      on_truncated: (log, end) => host.on_truncated(log, end),
      drop_log: (log) => host.drop_log(log),
      suspect_copies: () => host.suspect_copies(),
    };
  }

  /** The controller creates the internal topics once enough brokers are live for their replication. */
  private async ensure_internal_topics(view: ClusterView): Promise<void> {
    const rf = this.parts.options.replication_factor_default ?? CLUSTER_DEFAULTS.replication_factor_default;
    if (this.internal_topics_pending || view.brokers.size < rf) return;
    const missing = this.internal_topics.filter((topic) => !view.topics.has(topic.name));
    if (missing.length === 0) return;
    this.internal_topics_pending = true;
    // One placement for all of them, so one broker can lead them together.
    const assignment = assign_replicas([...view.brokers.keys()], 1, rf);
    try {
      for (const topic of missing) {
        await this.attached().create_topic(
          topic.name,
          1,
          { ...topic.configs, 'min.insync.replicas': String(Math.min(2, rf)) },
          { replication_factor: rf, assignment },
        );
      }
    } catch (error) {
      this.parts.logger.warn({ error: String(error) }, 'could not create the internal topics yet');
    } finally {
      this.internal_topics_pending = false;
    }
  }

  private joined(): ClusterNode {
    if (!this.node) throw new BrokerError('leader_not_available', 'this broker has not joined the cluster yet');
    return this.node;
  }

  async close(): Promise<void> {
    await this.node?.close();
    this.parts.etcd.close();
  }

  // ---------------------------------------------------------------- topics

  async create_topic(record: TopicRecord, placement: TopicPlacement): Promise<void> {
    await this.joined().create_topic(
      placement.assignment ? { ...record, assignment: placement.assignment } : record,
      placement.replication_factor,
    );
  }

  delete_topic(name: string): Promise<void> {
    return this.joined().delete_topic(name);
  }

  update_topic(name: string, change: (record: TopicRecord) => TopicRecord, new_replicas?: number[][]): Promise<void> {
    const changed = (topic: ClusterTopic) => ({ ...topic, ...change(topic), assignment: topic.assignment });
    return this.joined().update_topic(name, changed, new_replicas);
  }

  // ---------------------------------------------------------------- where partitions are

  brokers(self: { host: string; port: number }, listener: string): BrokerAddress[] {
    if (!this.node) return [{ node_id: this.parts.node_id, ...self }];
    const found: BrokerAddress[] = [];
    for (const broker of this.node.view.brokers.values()) {
      const address = broker.listeners ? broker.listeners[listener] : broker;
      if (address) found.push({ node_id: broker.node_id, host: address.host, port: address.port });
    }
    return found;
  }

  broker_ids(): number[] {
    return this.node ? [...this.node.view.brokers.keys()] : [this.parts.node_id];
  }

  controller_id(): number {
    return this.node?.view.controller?.node_id ?? -1;
  }

  partition_info(topic: string, partition: number): PartitionInfo {
    const state = this.node?.partition_state(topic, partition);
    if (!state) return { leader: -1, leader_epoch: -1, replicas: [], isr: [] };
    // Named leader here but not serving yet: no leader, as a client must not send to it yet.
    const leader = this.node!.replicas.leadership_pending(topic, partition, state) ? -1 : state.leader;
    return { leader, leader_epoch: state.leader_epoch, replicas: state.replicas, isr: state.isr };
  }

  async catch_up(): Promise<void> {
    await this.node?.catch_up();
  }

  leadership_pending(topic: string, partition: number): Promise<void> | null {
    const node = this.node;
    if (!node || !node.replicas.leadership_pending(topic, partition, node.partition_state(topic, partition)))
      return null;
    return node.replicas.when_leading(topic, partition, LEADERSHIP_WAIT_MS);
  }

  partition_reassignment(topic: string, partition: number): PartitionReassignment | null {
    const state = this.node?.partition_state(topic, partition);
    const target = state?.target_replicas;
    if (!state || !target) return null;
    // Begun before the original replicas were recorded: those being added are not known.
    const adding = state.original_replicas ? target.filter((id) => !state.original_replicas!.includes(id)) : [];
    return { replicas: [...state.replicas], adding, removing: state.replicas.filter((id) => !target.includes(id)) };
  }

  async reassign(topic: string, partition: number, replicas: number[] | null): Promise<void> {
    const node = this.joined();
    if (replicas === null) await node.cancel_reassignment(topic, partition);
    else await node.reassign(topic, partition, replicas);
  }

  elect_leader(topic: string, partition: number, election: Election): Promise<void> {
    return this.joined().elect_leader(topic, partition, election);
  }

  leader_of(topic: string, partition: number): number {
    return this.node?.partition_state(topic, partition)?.leader ?? -1;
  }

  // ---------------------------------------------------------------- the data

  leader_log(topic: string, partition: number, acks_all: boolean): PartitionLog {
    return this.joined().leader_log(topic, partition, acks_all);
  }

  read_log(topic: string, partition: number): PartitionLog {
    const replica = this.node?.replicas.get(topic, partition);
    if (!replica || replica.role !== 'leader' || !this.node!.membership.valid) {
      if (this.node?.replicas.leadership_pending(topic, partition, this.node.partition_state(topic, partition))) {
        throw new BrokerError(
          'leader_not_available',
          `broker ${this.parts.node_id} is taking up ${topic}-${partition}`,
        );
      }
      throw new BrokerError(
        'not_leader_or_follower',
        `broker ${this.parts.node_id} is not the leader of ${topic}-${partition}`,
      );
    }
    return replica.log;
  }

  replica_fetch(
    node_id: number,
    topic: string,
    partition: number,
    fetch_offset: number,
    current_leader_epoch: number,
  ): PartitionLog {
    if (!this.node)
      throw new BrokerError('not_leader_or_follower', `broker ${this.parts.node_id} does not replicate partitions`);
    return this.node.replicas.replica_fetch(node_id, topic, partition, fetch_offset, current_leader_epoch);
  }

  end_offset_for_epoch(
    topic: string,
    partition: number,
    epoch: number,
    current_leader_epoch: number,
  ): { epoch: number; end_offset: number } {
    return this.joined().replicas.end_offset_for_epoch(topic, partition, epoch, current_leader_epoch);
  }

  reader(topic: string, partition: number): PartitionReader & { ready?(): Promise<PartitionReader> } {
    const node = this.joined();
    const replica = node.replicas.get(topic, partition);
    const in_sync =
      replica?.role === 'leader' ||
      (replica?.role === 'follower' && node.partition_state(topic, partition)?.isr.includes(this.parts.node_id));
    if (replica && in_sync) return this.attached().reader_of(replica.log);
    return node.remote.get(topic, partition);
  }

  is_leader(topic: string, partition: number): boolean {
    return this.node?.replicas.get(topic, partition)?.role === 'leader';
  }

  async append(topic: string, partition: number, records: Buffer): Promise<void> {
    const node = this.joined();
    const replica = node.replicas.get(topic, partition);
    if (replica?.role === 'leader') await replica.log.append(records);
    else await node.forwarder.append(topic, partition, records);
  }

  forward(topic: string, partition: number, records: Buffer, as_client = false): Promise<number> {
    return this.joined().forwarder.append(topic, partition, records, !as_client);
  }

  // ---------------------------------------------------------------- transactions across brokers
  verify_in_txn(coordinator: TopicPartition, producer: TxnProducer, partition: TopicPartition): Promise<void> {
    return this.joined().txn_peers.in_txn(coordinator, producer, partition, true);
  }

  add_to_txn(coordinator: TopicPartition, producer: TxnProducer, partition: TopicPartition): Promise<void> {
    return this.joined().txn_peers.in_txn(coordinator, producer, partition, false);
  }

  write_marker(where: TopicPartition, marker: TxnMarker): Promise<void> {
    return this.joined().txn_peers.write_marker(where, marker);
  }
}
