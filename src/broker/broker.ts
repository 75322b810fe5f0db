// The broker core of one node: storage, topics, committed offsets, consumer groups and idempotent
// producer state, wired together. Front ends (Kafka now, AMQP later) call this; it knows no wire
// protocol.
import path from 'node:path';
import {
  type DurabilityPolicy,
  type Logger,
  NodeFileIO,
  type PartitionLog,
  SILENT_LOGGER,
  Storage,
  type StorageConfig,
  storage_config_default,
} from '../storage/index.ts';
import { check_batch } from '../storage/batch.ts';
import { BATCH_HEADER_BYTES, batch_records_count, batch_size_at, read_int64, OFFSET_PRODUCER_ID, OFFSET_PRODUCER_EPOCH, OFFSET_BASE_SEQUENCE, OFFSET_LAST_OFFSET_DELTA, ATTRIBUTE_TRANSACTIONAL, batch_attributes } from '../format/batch_layout.ts';
import { read_whole_file, replace_file_atomically } from '../storage/file_util.ts';
import { BrokerError } from './errors.ts';
import { LocalMetadataStore, type MetadataState, type MetadataStore, new_uuid } from './metadata_store.ts';
import { type AppendRecords, TopicManager, partition_name, is_internal_topic } from './topics.ts';
import { OFFSETS_TOPIC, OffsetStore } from './offset_store.ts';
import { GROUP_SETTINGS_DEFAULT, GroupCoordinator, type GroupSettings } from './group_coordinator.ts';
import { PartitionProducers, last_sequence_of, type BatchEntry } from './producer_state.ts';
import { SHARE_GROUP_SETTINGS_DEFAULT, ShareCoordinator, type ShareGroupSettings } from './queues/share_coordinator.ts';
import { SHARE_STATE_TOPIC, ShareStateStore } from './queues/share_state_store.ts';
import { DELAYED_SETTINGS_DEFAULT, DELAYED_TOPIC, DelayedDelivery, type DelayedSettings } from './delayed/delayed_delivery.ts';
import { delayed_records, may_carry_delay, type DelayedRecords } from './delayed/delay_headers.ts';
import { OverflowGuard, overflow_limits } from './overflow.ts';
import { type GroupConfigs, validate_group_configs } from './queues/group_config.ts';
import type { TopicConfigs } from './topic_config.ts';
import { CLUSTER_DEFAULTS, ClusterNode, type ClusterHost, type ClusterOptions } from '../cluster/cluster_node.ts';
import { EtcdMetadataStore } from '../cluster/etcd_metadata_store.ts';
import type { EtcdStore } from '../cluster/etcd_store.ts';
import { assign_replicas, partition_key } from '../cluster/model.ts';
import { BrokerStats } from './stats.ts';
import type { PartitionReader } from './partition_reader.ts';
import { RemotePartition } from '../cluster/remote_partitions.ts';

export interface BrokerOptions {
  data_dir: string;
  node_id: number;
  durability?: DurabilityPolicy;
  storage?: Partial<StorageConfig>;
  auto_create_topics?: boolean;
  default_partitions?: number;
  groups?: Partial<GroupSettings>;
  share_groups?: Partial<ShareGroupSettings>;
  delayed?: Partial<DelayedSettings>;
  /** Run as a member of a cluster whose metadata is in etcd (join_cluster() completes the start). */
  cluster?: ClusterOptions;
  logger?: Logger;
}

export interface ProduceResult {
  base_offset: number;
  log_append_time_ms: number;
  log_start_offset: number;
}

/** A partition's leader, epoch and replicas as clients are told them. */
export interface PartitionInfo {
  leader: number;
  leader_epoch: number;
  replicas: number[];
  isr: number[];
}

/** A partition being moved: all its replicas now, and which of them join or leave when it finishes. */
export interface PartitionReassignment {
  replicas: number[];
  adding: number[];
  removing: number[];
}

const PRODUCER_STATE_FILE = 'producer-state.json';
const DIRECTORY_ID_FILE = 'directory-id';
const PRODUCER_ID_BLOCK = 1000;
const SCAN_READ_BYTES = 1024 * 1024;
const PRODUCER_STATE_INTERVAL_MS = 10_000;

/** The broker's own topics, created at the first start (in a cluster, by the controller). */
const INTERNAL_TOPICS: Array<[string, TopicConfigs]> = [
  [OFFSETS_TOPIC, { 'retention.ms': '-1', 'max.message.bytes': String(16 * 1024 * 1024) }],
  [DELAYED_TOPIC, { 'retention.ms': '-1', 'max.message.bytes': String(128 * 1024 * 1024) }],
  [SHARE_STATE_TOPIC, { 'retention.ms': '-1', 'max.message.bytes': String(16 * 1024 * 1024) }],
];

interface Hosts {
  share: ShareCoordinator | null;
  delayed: DelayedDelivery | null;
}

interface GroupHost {
  offsets: OffsetStore;
  groups: GroupCoordinator;
}

export class Broker {
  readonly topics: TopicManager;
  readonly overflow: OverflowGuard;
  /** Cluster membership; null on a single node (and in a cluster until join_cluster()). */
  cluster: ClusterNode | null = null;
  private group_host: GroupHost | null = null;
  /** The share coordinator and delayed delivery, while this broker runs them. */
  private readonly hosts: Hosts = { share: null, delayed: null };
  /** Raised on every coordinator change, so a slow activation cannot install a stale one. */
  private coordinator_generation = { group: 0, share: 0, delayed: 0 };
  /** Traffic counters (front ends add to them; metrics read them). */
  readonly stats = new BrokerStats();
  private readonly producers = new Map<string, PartitionProducers>();
  private producer_snapshot: Record<string, { offset: number; producers: unknown }> = {};
  /** Per partition, the end of the chain of produces that had to wait (see produce). */
  private readonly produce_gates = new Map<string, Promise<void>>();
  private next_producer_id = 0;
  private producer_id_block_end = 0;
  private closed = false;
  private internal_topics_pending = false;
  private producer_state_saves: Promise<void> = Promise.resolve();
  private producer_state_timer: NodeJS.Timeout | null = null;

  private constructor(
    readonly options: Required<Pick<BrokerOptions, 'data_dir' | 'node_id' | 'auto_create_topics' | 'default_partitions'>>,
    readonly storage: Storage,
    private readonly store: MetadataStore,
    private readonly state: MetadataState,
    topics: TopicManager,
    private readonly group_settings: GroupSettings,
    readonly share_settings: ShareGroupSettings,
    readonly delayed_settings: DelayedSettings,
    readonly logger: Logger,
    private readonly cluster_setup: { options: ClusterOptions; etcd: EtcdStore } | null,
  ) {
    this.topics = topics;
    const append: AppendRecords = (topic, partition, records) => this.append_records(topic, partition, records);
    this.overflow = new OverflowGuard(topics, () => this.hosts.share, (name, partitions) => this.ensure_internal_topic(name, partitions), logger, append);
  }

  static async start(options: BrokerOptions): Promise<Broker> {
    const logger = options.logger ?? SILENT_LOGGER;
    await new NodeFileIO().mkdir(options.data_dir);
    let store: MetadataStore;
    let state: MetadataState;
    let cluster_setup: { options: ClusterOptions; etcd: EtcdStore } | null = null;
    if (options.cluster) {
      const { store: etcd, cluster_id } = await ClusterNode.connect(options.cluster, options.node_id, logger);
      cluster_setup = { options: options.cluster, etcd };
      state = { version: 1, cluster_id: await cluster_id(new_uuid()), topics: [], producer_id_block_end: 0 };
      store = new EtcdMetadataStore(etcd, () => broker.cluster);
    } else {
      const local = new LocalMetadataStore(options.data_dir);
      state = await local.load();
      await local.save(state);
      store = local;
    }
    const config: StorageConfig = {
      ...storage_config_default(options.data_dir),
      ...(options.durability ? { durability: options.durability } : {}),
      ...options.storage,
    };
    const storage = await Storage.open(config, { logger, log_config: (name) => TopicManager.log_config_for(state, name) });
    const topics = new TopicManager(storage, store, state);
    if (!store.distributed) {
      for (const [name, configs] of INTERNAL_TOPICS) if (!topics.get(name)) await topics.create(name, 1, configs);
    }
    const broker: Broker = new Broker(
      {
        data_dir: options.data_dir,
        node_id: options.node_id,
        auto_create_topics: options.auto_create_topics ?? true,
        default_partitions: options.default_partitions ?? 1,
      },
      storage,
      store,
      state,
      topics,
      { ...GROUP_SETTINGS_DEFAULT, ...options.groups },
      { ...SHARE_GROUP_SETTINGS_DEFAULT, ...options.share_groups, partition: { ...SHARE_GROUP_SETTINGS_DEFAULT.partition, ...options.share_groups?.partition } },
      { ...DELAYED_SETTINGS_DEFAULT, ...options.delayed },
      logger,
      cluster_setup,
    );
    broker.producer_snapshot = await broker.read_producer_snapshot();
    if (!store.distributed) {
      await broker.activate_groups(topics.log(OFFSETS_TOPIC, 0));
      await broker.activate_shares(topics.log(SHARE_STATE_TOPIC, 0));
      await broker.activate_delayed(topics.log(DELAYED_TOPIC, 0));
      await broker.load_producer_state();
    }
    // Periodic snapshots bound how much of the log a restart after a crash replays.
    broker.producer_state_timer = setInterval(() => void broker.save_producer_state().catch(() => undefined), PRODUCER_STATE_INTERVAL_MS);
    broker.producer_state_timer.unref();
    return broker;
  }

  /**
   * In cluster mode, registers this broker (at the address clients and replicas reach it) and
   * starts following the cluster. Refuses when the node id is registered by a live broker.
   */
  async join_cluster(address: { host: string; port: number }): Promise<void> {
    if (!this.cluster_setup) return;
    const registration = { node_id: this.node_id, host: address.host, port: address.port, started_ms: Date.now(), dir_id: await this.directory_id() };
    // Share groups are found through the group coordinator and delayed delivery runs beside them:
    // the controller keeps the three internal partitions on one leader when it can.
    const colocated = INTERNAL_TOPICS.map(([name]) => partition_key(name, 0));
    this.cluster = await ClusterNode.join(this.cluster_setup.etcd, { ...this.cluster_setup.options, colocated }, registration, this.cluster_host(), this.logger);
  }

  /** A random id kept in the data directory: tells a restart of this broker from another broker. */
  private async directory_id(): Promise<string> {
    const file = path.join(this.options.data_dir, DIRECTORY_ID_FILE);
    const bytes = await read_whole_file(new NodeFileIO(), file);
    if (bytes) return bytes.toString('utf8').trim();
    const id = new_uuid();
    await replace_file_atomically(new NodeFileIO(), file, Buffer.from(`${id}\n`));
    return id;
  }

  get is_clustered(): boolean {
    return this.cluster_setup !== null;
  }

  private cluster_host(): ClusterHost {
    return {
      apply_topics: async (view) => {
        await this.topics.apply_view([...view.topics.values()].map((topic) => topic.value));
        if (this.cluster?.controller.is_active) void this.ensure_internal_topics_in_cluster(view.brokers.size);
      },
      ensure_log: async (topic, partition) => {
        const log = await this.topics.ensure_log(topic, partition);
        if (!this.producers.has(log.name) && !is_internal_topic(topic)) await this.load_partition_producers(log);
        return log;
      },
      durable_end: (log) => (this.storage_policy_fsync ? log.flushed_offset : log.written_offset),
      min_insync_replicas: (topic) => Number(this.topics.get(topic)?.configs['min.insync.replicas'] ?? 1),
      on_role: (replica) => this.on_replica_role(replica.topic, replica.partition, replica.role, replica.log),
      on_replicated: (log, batches) => {
        const producers = this.producers.get(log.name);
        if (producers) record_producer_batches(producers, batches);
      },
      on_truncated: (log, end) => this.producers.get(log.name)?.truncate_from(end),
      drop_log: async (log) => {
        this.producers.delete(log.name);
        if (this.storage.partition(log.name) === log) await this.storage.delete_partition(log.name);
      },
    };
  }

  private get storage_policy_fsync(): boolean {
    return this.storage.config.durability.kind === 'fsync';
  }

  /** The controller creates the internal topics once enough brokers are live for their replication. */
  private async ensure_internal_topics_in_cluster(live_brokers: number): Promise<void> {
    const rf = this.cluster_setup!.options.replication_factor_default ?? CLUSTER_DEFAULTS.replication_factor_default;
    if (this.internal_topics_pending || live_brokers < rf) return;
    const missing = INTERNAL_TOPICS.filter(([name]) => !this.topics.get(name));
    if (missing.length === 0) return;
    this.internal_topics_pending = true;
    // One placement for all of them, so one broker can lead them together.
    const assignment = assign_replicas([...this.cluster!.view.brokers.keys()], 1, rf);
    try {
      for (const [name, configs] of missing) {
        await this.topics.create(name, 1, { ...configs, 'min.insync.replicas': String(Math.min(2, rf)) }, { replication_factor: rf, assignment }).catch((error: unknown) => {
          if (!(error instanceof BrokerError && error.kind === 'topic_already_exists')) throw error;
        });
      }
    } catch (error) {
      this.logger.warn({ error: String(error) }, 'could not create the internal topics yet');
    } finally {
      this.internal_topics_pending = false;
    }
  }

  // ------------------------------------------------------------------ coordinators

  /** Coordinators run where the leader of their internal partition is; they follow it. */
  private on_replica_role(topic: string, partition: number, role: string, log: PartitionLog): void {
    if (partition !== 0) return;
    const leading = role === 'leader';
    if (topic === OFFSETS_TOPIC) void (leading ? this.activate_groups(log) : this.deactivate_groups());
    else if (topic === SHARE_STATE_TOPIC) void (leading ? this.activate_shares(log) : this.deactivate('share'));
    else if (topic === DELAYED_TOPIC) void (leading ? this.activate_delayed(log) : this.deactivate('delayed'));
  }

  private async activate_groups(log: PartitionLog): Promise<void> {
    const generation = ++this.coordinator_generation.group;
    this.deactivate_groups(generation);
    const offsets = new OffsetStore(log);
    await offsets.load();
    if (generation !== this.coordinator_generation.group || this.closed) return;
    this.group_host = { offsets, groups: new GroupCoordinator(offsets, this.group_settings) };
    if (this.cluster) this.logger.info({ node_id: this.node_id }, 'group coordinator active here');
  }

  private deactivate_groups(generation = ++this.coordinator_generation.group): void {
    this.coordinator_generation.group = generation;
    this.group_host?.groups.close();
    this.group_host = null;
  }

  private activate_shares(log: PartitionLog): Promise<void> {
    return this.activate('share', async () => {
      const shares = new ShareCoordinator(
        {
          topics: this.topics,
          reader: (topic, partition) => this.partition_reader(topic, partition),
          reader_now: (topic, partition) => this.partition_reader_now(topic, partition),
          store: new ShareStateStore(log),
          logger: this.logger,
          ensure_dead_letter_topic: (name) => this.ensure_internal_topic(name, 1),
          group_configs: (group_id) => this.group_configs(group_id),
          append: (topic, partition, records) => this.append_records(topic, partition, records),
        },
        this.share_settings,
      );
      await shares.load();
      return shares;
    });
  }

  private activate_delayed(log: PartitionLog): Promise<void> {
    return this.activate('delayed', async () => {
      const delayed = new DelayedDelivery(log, this.topics, this.logger, this.delayed_settings, (topic, partition, records) => this.append_records(topic, partition, records));
      await delayed.load(Date.now());
      return delayed;
    });
  }

  /**
   * Builds and loads a coordinator for a leadership just gained, and installs it unless the
   * leadership changed again while it loaded (then it is closed unused).
   */
  private async activate<K extends 'share' | 'delayed'>(kind: K, build: () => Promise<NonNullable<Hosts[K]>>): Promise<void> {
    const generation = ++this.coordinator_generation[kind];
    await this.deactivate(kind, generation);
    const host = await build();
    if (generation !== this.coordinator_generation[kind] || this.closed) {
      await host.close();
      return;
    }
    host.start();
    this.hosts[kind] = host;
  }

  private async deactivate(kind: 'share' | 'delayed', generation = ++this.coordinator_generation[kind]): Promise<void> {
    this.coordinator_generation[kind] = generation;
    const host = this.hosts[kind];
    this.hosts[kind] = null;
    await host?.close().catch(() => undefined);
  }

  get offsets(): OffsetStore {
    return this.require_group_host().offsets;
  }

  get groups(): GroupCoordinator {
    return this.require_group_host().groups;
  }

  /** True when this broker coordinates consumer groups now. */
  get is_group_coordinator(): boolean {
    return this.group_host !== null;
  }

  private require_group_host(): GroupHost {
    if (this.group_host) return this.group_host;
    throw new BrokerError('not_coordinator', `broker ${this.node_id} is not the group coordinator`);
  }

  get shares(): ShareCoordinator {
    if (this.hosts.share) return this.hosts.share;
    throw new BrokerError('not_coordinator', `broker ${this.node_id} is not the share-group coordinator`);
  }

  get is_share_coordinator(): boolean {
    return this.hosts.share !== null;
  }

  get is_delayed_host(): boolean {
    return this.hosts.delayed !== null;
  }

  get delayed(): DelayedDelivery {
    if (this.hosts.delayed) return this.hosts.delayed;
    throw new BrokerError('not_leader_or_follower', `broker ${this.node_id} does not run delayed delivery now`);
  }

  /**
   * Appends a batch the broker writes itself (dead letters, archives, due delayed records): on a
   * single node to the local log; in a cluster on the partition's leader, forwarded if that is
   * another broker. Resolves once acknowledged under acks=all.
   */
  async append_records(topic: string, partition: number, records: Buffer): Promise<void> {
    if (!this.cluster_setup) {
      await this.topics.log(topic, partition).append(records);
      return;
    }
    if (!this.cluster) throw new BrokerError('leader_not_available', 'this broker has not joined the cluster yet');
    const replica = this.cluster.replicas.get(topic, partition);
    if (replica?.role === 'leader') await replica.log.append(records);
    else await this.cluster.forwarder.append(topic, partition, records);
  }

  /**
   * A produce the broker makes on an operator's behalf (dead-letter redrive): through the produce
   * path when this broker leads the partition, else forwarded to its leader. The base offset, or
   * -1 when it is not known.
   */
  async produce_anywhere(topic: string, partition: number, records: Buffer): Promise<number> {
    if (!this.cluster_setup || this.cluster?.replicas.get(topic, partition)?.role === 'leader') return (await this.produce(topic, partition, records)).base_offset;
    if (!this.cluster) throw new BrokerError('leader_not_available', 'this broker has not joined the cluster yet');
    return this.cluster.forwarder.append(topic, partition, records);
  }

  /** The node that coordinates consumer groups ('group') or share groups ('share'); -1 when none. */
  coordinator_node(kind: 'group' | 'share'): number {
    if (!this.cluster_setup) return this.node_id;
    const topic = kind === 'group' ? OFFSETS_TOPIC : SHARE_STATE_TOPIC;
    return this.cluster?.partition_state(topic, 0)?.leader ?? -1;
  }

  // ------------------------------------------------------------------ what clients are told

  get cluster_id(): string {
    return this.state.cluster_id;
  }

  get node_id(): number {
    return this.options.node_id;
  }

  /** Brokers clients may connect to; `self` is this broker's advertised address. */
  brokers(self: { host: string; port: number }): Array<{ node_id: number; host: string; port: number }> {
    if (!this.cluster) return [{ node_id: this.node_id, ...self }];
    return [...this.cluster.view.brokers.values()].map((b) => ({ node_id: b.node_id, host: b.host, port: b.port }));
  }

  get controller_id(): number {
    if (!this.cluster_setup) return this.node_id;
    return this.cluster?.view.controller?.node_id ?? -1;
  }

  partition_info(topic: string, partition: number): PartitionInfo {
    if (!this.cluster_setup) return { leader: this.node_id, leader_epoch: 0, replicas: [this.node_id], isr: [this.node_id] };
    const state = this.cluster?.partition_state(topic, partition);
    if (!state) return { leader: -1, leader_epoch: -1, replicas: [], isr: [] };
    return { leader: state.leader, leader_epoch: state.leader_epoch, replicas: state.replicas, isr: state.isr };
  }

  /** The reassignment in progress on a partition, or null when none is. */
  partition_reassignment(topic: string, partition: number): PartitionReassignment | null {
    const state = this.cluster?.partition_state(topic, partition);
    const target = state?.target_replicas;
    if (!state || !target) return null;
    // Begun before the original replicas were recorded: those being added are not known.
    const adding = state.original_replicas ? target.filter((id) => !state.original_replicas!.includes(id)) : [];
    return { replicas: [...state.replicas], adding, removing: state.replicas.filter((id) => !target.includes(id)) };
  }

  /** The log consumers read from: this broker must lead the partition. */
  read_log(topic: string, partition: number): PartitionLog {
    if (!this.cluster_setup) return this.topics.log(topic, partition);
    this.topics.local_log(topic, partition);
    const replica = this.cluster?.replicas.get(topic, partition);
    if (!replica || replica.role !== 'leader' || !this.cluster!.membership.valid) {
      throw new BrokerError('not_leader_or_follower', `broker ${this.node_id} is not the leader of ${topic}-${partition}`);
    }
    return replica.log;
  }

  /**
   * Where this broker reads a partition's records for its own work (share groups, dead letters, the
   * admin API): its replica when it leads the partition or is in sync, else the leader's copy.
   * Bounds are known once resolved.
   */
  async partition_reader(topic: string, partition: number): Promise<PartitionReader> {
    const reader = this.partition_reader_now(topic, partition);
    return reader instanceof RemotePartition ? reader.ready() : reader;
  }

  /** partition_reader() without waiting: a remote partition's bounds are zero until first heard. */
  partition_reader_now(topic: string, partition: number): PartitionReader {
    if (!this.cluster_setup) return this.topics.log(topic, partition);
    const local = this.topics.local_log(topic, partition); // unknown topic or partition
    if (!this.cluster) throw new BrokerError('leader_not_available', 'this broker has not joined the cluster yet');
    const replica = this.cluster.replicas.get(topic, partition);
    const in_sync = replica?.role === 'leader' || (replica?.role === 'follower' && this.cluster.partition_state(topic, partition)?.isr.includes(this.node_id));
    if (local && in_sync) return local;
    return this.cluster.remote.get(topic, partition);
  }

  /** Moves a partition to a new replica set, or with null gives up the move in progress (AlterPartitionReassignments). */
  async reassign_partition(topic: string, partition: number, replicas: number[] | null): Promise<void> {
    this.topics.local_log(topic, partition); // unknown topic or partition
    if (!this.cluster_setup) throw new BrokerError('invalid_replica_assignment', 'a single broker has nowhere to move partitions; start a cluster (--etcd)');
    if (!this.cluster) throw new BrokerError('leader_not_available', 'this broker has not joined the cluster yet');
    if (replicas === null) await this.cluster.cancel_reassignment(topic, partition);
    else await this.cluster.reassign(topic, partition, replicas);
  }

  /** A follower's fetch reaching this leader: records its progress; returns the log to read. */
  replica_fetch(node_id: number, topic: string, partition: number, fetch_offset: number, current_leader_epoch: number): PartitionLog {
    this.topics.local_log(topic, partition);
    if (!this.cluster) throw new BrokerError('not_leader_or_follower', `broker ${this.node_id} does not replicate partitions`);
    return this.cluster.replicas.replica_fetch(node_id, topic, partition, fetch_offset, current_leader_epoch);
  }

  /** Where `epoch` ends in a partition's log on its leader (OffsetForLeaderEpoch). */
  end_offset_for_epoch(topic: string, partition: number, epoch: number, current_leader_epoch: number): { epoch: number; end_offset: number } {
    if (this.cluster_setup) {
      this.topics.local_log(topic, partition);
      if (!this.cluster) throw new BrokerError('leader_not_available', 'this broker has not joined the cluster yet');
      return this.cluster.replicas.end_offset_for_epoch(topic, partition, epoch, current_leader_epoch);
    }
    // One leader epoch (0) on a single node: it ends at the log end.
    const log = this.topics.log(topic, partition);
    if (epoch > 0) throw new BrokerError('unknown_leader_epoch', `${topic}-${partition} has only leader epoch 0`);
    return { epoch: 0, end_offset: log.written_offset };
  }

  /** A share group's own configs (empty when it has none). */
  group_configs(group_id: string): GroupConfigs {
    if (this.cluster) return { ...this.cluster.view.group_configs.get(group_id) };
    return { ...this.state.group_configs?.[group_id] };
  }

  /** Sets (and removes) a share group's configs; they apply at once and survive restarts. */
  async set_group_configs(group_id: string, set: GroupConfigs, options: { remove?: string[]; replace?: boolean; validate_only?: boolean } = {}): Promise<void> {
    if (group_id === '') throw new BrokerError('invalid_group_id', 'a group config needs a group id');
    const next: GroupConfigs = options.replace ? { ...set } : { ...this.group_configs(group_id), ...set };
    for (const name of options.remove ?? []) delete next[name];
    validate_group_configs(next);
    if (options.validate_only) return;
    await this.store.set_group_configs(group_id, next);
    if (this.cluster) await this.cluster.wait_for_view((view) => JSON.stringify(view.group_configs.get(group_id) ?? {}) === JSON.stringify(next), `configs of group ${group_id}`);
    this.hosts.share?.apply_group_configs(group_id, next);
  }

  /** A topic the broker itself writes to (dead letters), created if missing. */
  private async ensure_internal_topic(name: string, partitions: number): Promise<void> {
    if (this.topics.get(name)) return;
    try {
      await this.topics.create(name, partitions);
    } catch (error) {
      if (!(error instanceof BrokerError && error.kind === 'topic_already_exists')) throw error;
    }
  }

  /** The topic, created with the default partition count when auto-creation is on. */
  async ensure_topic(name: string, allow_auto_create: boolean): Promise<void> {
    if (this.topics.get(name)) return;
    if (!allow_auto_create || !this.options.auto_create_topics || is_internal_topic(name)) {
      throw new BrokerError('unknown_topic_or_partition', `unknown topic ${name}`);
    }
    try {
      await this.topics.create(name, this.options.default_partitions);
    } catch (error) {
      if (!(error instanceof BrokerError && error.kind === 'topic_already_exists')) throw error;
    }
  }

  // ------------------------------------------------------------------ produce

  /**
   * Appends one record batch to a partition. Idempotent batches (producer id and sequence set) are
   * checked against the producer's last five batches first: a duplicate is answered with its
   * original offset once that append is acknowledged.
   */
  async produce(topic: string, partition: number, records: Buffer, acks: -1 | 0 | 1 = -1): Promise<ProduceResult> {
    if (topic === DELAYED_TOPIC && this.cluster_setup) return this.accept_forwarded_delays(records);
    const log = this.cluster_setup ? this.leader_log(topic, partition, acks) : this.topics.log(topic, partition);
    const local_ack = acks !== -1;
    if (records.length >= BATCH_HEADER_BYTES && batch_size_at(records, 0) !== records.length) {
      throw new BrokerError('invalid_record', 'a produce request must carry exactly one record batch per partition');
    }
    if (records.length >= BATCH_HEADER_BYTES && (batch_attributes(records, 0) & ATTRIBUTE_TRANSACTIONAL) !== 0) {
      throw new BrokerError('invalid_record', 'transactional batches are not supported yet');
    }
    const needs_delay_check = records.length >= BATCH_HEADER_BYTES && may_carry_delay(records);
    const limits = overflow_limits(this.topics.get(topic)?.configs ?? {});
    const gate = this.produce_gates.get(log.name);
    if (!needs_delay_check && !limits && !gate) return this.append_in_order(log, records, local_ack);
    // Reading a batch's headers may wait (decompression); later batches of the partition wait for
    // it, so batches are still appended in the order they arrived.
    let open!: () => void;
    const mine = new Promise<void>((resolve) => (open = resolve));
    const chained = (gate ?? Promise.resolve()).then(() => mine);
    this.produce_gates.set(log.name, chained);
    try {
      await gate;
      let result: Promise<ProduceResult> | null = null;
      if (needs_delay_check) {
        // Checked before its records are read: a corrupt batch is refused as corrupt.
        check_batch(records, 0, { message_bytes_max: log.config.message_bytes_max, client_batch: true });
        const received_ms = Date.now();
        const delayed = await delayed_records(records, received_ms, this.delayed_settings.delay_max_ms);
        if (delayed) result = this.produce_delayed(log, topic, partition, records, delayed, received_ms);
      }
      if (!result && limits && records.length >= BATCH_HEADER_BYTES) await this.overflow.make_room(topic, partition, log, limits, batch_records_count(records, 0), records.length);
      result ??= this.append_in_order(log, records, local_ack); // issues the append before its first await
      open();
      return await result;
    } finally {
      open();
      if (this.produce_gates.get(log.name) === chained) this.produce_gates.delete(log.name);
    }
  }

  /** The append of an ordinary batch; the log's append is called before the first await. */
  private async append_in_order(log: PartitionLog, records: Buffer, local_ack: boolean): Promise<ProduceResult> {
    const producer_id = records.length >= BATCH_HEADER_BYTES ? read_int64(records, OFFSET_PRODUCER_ID) : -1;
    const sequence = records.length >= BATCH_HEADER_BYTES ? records.readInt32BE(OFFSET_BASE_SEQUENCE) : -1;
    if (producer_id < 0 || sequence < 0) return this.result(await log.append(records, { local_ack }));
    // Check the batch (CRC, size) before trusting its producer fields: a corrupt retry must be
    // refused as corrupt, not answered as a duplicate or a sequence error.
    check_batch(records, 0, { message_bytes_max: log.config.message_bytes_max, client_batch: true });
    const epoch = records.readInt16BE(OFFSET_PRODUCER_EPOCH);
    const last_sequence = last_sequence_of(sequence, records.readInt32BE(OFFSET_LAST_OFFSET_DELTA));
    const producers = this.producers_of(log.name);
    const duplicate = producers.check(producer_id, epoch, sequence, last_sequence);
    if (duplicate) return this.answer_duplicate(log, duplicate, local_ack);
    const base_offset = log.next_offset;
    const appended = log.append(records, { checked: true, local_ack });
    if (log.next_offset === base_offset) return this.result(await appended); // refused before any offset was assigned
    const entry: BatchEntry = { first_sequence: sequence, last_sequence, base_offset, last_offset: log.next_offset - 1, settled: appended };
    producers.record(producer_id, epoch, entry);
    try {
      return this.result(await appended);
    } catch (error) {
      // A BrokerError comes from the acknowledgement gate (leadership ended, the ISR did not
      // confirm): the batch was written and stays in the log unless truncation removes it (which
      // drops its entry too), so a retry must be recognised. Only a failed write is forgotten.
      if (!(error instanceof BrokerError)) producers.forget(producer_id, entry);
      throw error;
    }
  }

  /**
   * A retry of a batch already in the log answers with the original offset once the original
   * append settled — and, under acks=all in a cluster, once the ISR holds it: the original may have
   * been written by an earlier leader, or by this broker in an earlier leadership.
   */
  private async answer_duplicate(log: PartitionLog, duplicate: BatchEntry, local_ack: boolean): Promise<ProduceResult> {
    await duplicate.settled.catch((error: unknown) => {
      if (!(error instanceof BrokerError)) throw error;
    });
    const answer = { base_offset: duplicate.base_offset, log_append_time_ms: -1, log_start_offset: log.log_start_offset };
    if (!local_ack && log.ack_gate) await log.ack_gate({ ...answer, last_offset: duplicate.last_offset });
    return answer;
  }

  /**
   * A batch with delayed records goes to the delay log as a whole (records without a delay header
   * in it are due at once). There is no offset in the topic yet: the answer carries -1. An
   * idempotent producer's retry is recognised as long as the producer state holds the batch.
   */
  private async produce_delayed(log: PartitionLog, topic: string, partition: number, records: Buffer, delayed: DelayedRecords, received_ms: number): Promise<ProduceResult> {
    const answer = { base_offset: -1, log_append_time_ms: -1, log_start_offset: log.log_start_offset };
    const producer_id = read_int64(records, OFFSET_PRODUCER_ID);
    const sequence = records.readInt32BE(OFFSET_BASE_SEQUENCE);
    if (producer_id < 0 || sequence < 0) {
      await this.schedule_delayed(topic, partition, records, delayed.due_ms, received_ms);
      return answer;
    }
    const epoch = records.readInt16BE(OFFSET_PRODUCER_EPOCH);
    const last_sequence = last_sequence_of(sequence, records.readInt32BE(OFFSET_LAST_OFFSET_DELTA));
    const producers = this.producers_of(log.name);
    const duplicate = producers.check(producer_id, epoch, sequence, last_sequence);
    if (duplicate) {
      await duplicate.settled;
      return answer;
    }
    const scheduling = this.schedule_delayed(topic, partition, records, delayed.due_ms, received_ms);
    const entry: BatchEntry = { first_sequence: sequence, last_sequence, base_offset: -1, last_offset: -1, settled: scheduling };
    producers.record(producer_id, epoch, entry);
    try {
      await scheduling;
    } catch (error) {
      producers.forget(producer_id, entry);
      throw error;
    }
    return answer;
  }

  /** Hands a delayed batch to delayed delivery: here, or (in a cluster) on the broker running it. */
  private async schedule_delayed(topic: string, partition: number, records: Buffer, due_ms: number[], received_ms: number): Promise<void> {
    if (this.hosts.delayed) return this.hosts.delayed.schedule(topic, partition, records, due_ms, received_ms);
    if (!this.cluster) throw new BrokerError('leader_not_available', 'delayed delivery is not running yet');
    await this.cluster.forwarder.append(DELAYED_TOPIC, 0, DelayedDelivery.wrap(topic, partition, records, received_ms));
  }

  /** Delayed batches another broker forwarded (its produce carried delay headers). */
  private async accept_forwarded_delays(records: Buffer): Promise<ProduceResult> {
    const delayed = this.delayed; // not_leader_or_follower when delayed delivery runs elsewhere: the sender retries
    const received = DelayedDelivery.unwrap(records);
    for (const item of received) {
      const found = await delayed_records(item.batch, item.received_ms, this.delayed_settings.delay_max_ms);
      if (found) await delayed.schedule(item.topic, item.partition, item.batch, found.due_ms, item.received_ms);
      else await this.append_records(item.topic, item.partition, item.batch);
    }
    return { base_offset: -1, log_append_time_ms: -1, log_start_offset: -1 };
  }

  private result(appended: { base_offset: number; log_append_time_ms: number; log_start_offset: number }): ProduceResult {
    return { base_offset: appended.base_offset, log_append_time_ms: appended.log_append_time_ms, log_start_offset: appended.log_start_offset };
  }

  private producers_of(name: string): PartitionProducers {
    let producers = this.producers.get(name);
    if (!producers) {
      producers = new PartitionProducers();
      this.producers.set(name, producers);
    }
    return producers;
  }

  /** In a cluster, the leader's log; refuses acks=all while the ISR is below min.insync.replicas. */
  private leader_log(topic: string, partition: number, acks: number): PartitionLog {
    this.topics.local_log(topic, partition); // an unknown topic or partition is refused as such first
    if (!this.cluster) throw new BrokerError('leader_not_available', 'this broker has not joined the cluster yet');
    return this.cluster.leader_log(topic, partition, acks === -1);
  }

  /** Producer ids come in blocks reserved in the metadata store, so no two brokers hand out one. */
  async allocate_producer_id(): Promise<number> {
    if (this.next_producer_id >= this.producer_id_block_end) {
      const start = await this.store.allocate_producer_ids(PRODUCER_ID_BLOCK);
      if (this.next_producer_id >= this.producer_id_block_end) {
        this.next_producer_id = start;
        this.producer_id_block_end = start + PRODUCER_ID_BLOCK;
      }
    }
    return this.next_producer_id++;
  }

  // ------------------------------------------------------------------ producer state across restarts

  private async read_producer_snapshot(): Promise<Record<string, { offset: number; producers: unknown }>> {
    const bytes = await read_whole_file(new NodeFileIO(), path.join(this.options.data_dir, PRODUCER_STATE_FILE));
    return bytes ? (JSON.parse(bytes.toString('utf8')) as Record<string, { offset: number; producers: unknown }>) : {};
  }

  /** Loads every partition's producer state: the last snapshot, then the batches written after it. */
  private async load_producer_state(): Promise<void> {
    for (const topic of this.topics.list()) {
      if (is_internal_topic(topic.name)) continue;
      for (let p = 0; p < topic.partitions; p++) await this.load_partition_producers(this.topics.log(topic.name, p));
    }
  }

  private async load_partition_producers(log: PartitionLog): Promise<void> {
    const saved = this.producer_snapshot[log.name];
    const producers = saved ? PartitionProducers.from_json(saved.producers) : new PartitionProducers();
    this.producers.set(log.name, producers);
    await this.replay_producers(log, producers, saved?.offset ?? 0);
  }

  private async replay_producers(log: PartitionLog, producers: PartitionProducers, from_offset: number): Promise<void> {
    let offset = Math.max(from_offset, log.log_start_offset);
    while (offset < log.written_offset) {
      const { batches } = await log.read(offset, SCAN_READ_BYTES, 'log_end');
      if (batches.length === 0) break;
      for (const batch of batches) {
        record_producer_batches(producers, batch);
        offset = read_int64(batch, 0) + batch.readInt32BE(OFFSET_LAST_OFFSET_DELTA) + 1;
      }
    }
  }

  /**
   * Saves every partition's producer state up to its flushed offset: entries of batches not yet
   * durable are left out (a crash may lose them), and a restart replays only what follows.
   * Saves run one at a time.
   */
  private save_producer_state(): Promise<void> {
    const save = async () => {
      const snapshot: Record<string, { offset: number; producers: unknown }> = {};
      for (const topic of this.topics.list()) {
        if (is_internal_topic(topic.name)) continue;
        for (let p = 0; p < topic.partitions; p++) {
          const name = partition_name(topic.name, p);
          const log = this.storage.partition(name);
          if (!log || log.is_offline) continue;
          const flushed = log.flushed_offset;
          snapshot[name] = { offset: flushed, producers: this.producers.get(name)?.to_json(flushed) ?? [] };
        }
      }
      await replace_file_atomically(new NodeFileIO(), path.join(this.options.data_dir, PRODUCER_STATE_FILE), Buffer.from(JSON.stringify(snapshot)));
    };
    const next = this.producer_state_saves.then(save);
    this.producer_state_saves = next.catch((error: unknown) => this.logger.warn({ error: String(error) }, 'could not save producer state'));
    return next;
  }

  // ------------------------------------------------------------------ lifecycle

  /** Stops groups, writes and syncs everything, saves producer state, closes storage. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.producer_state_timer) clearInterval(this.producer_state_timer);
    // Replication stops first: nothing is led or followed while the rest shuts down.
    await this.cluster?.close();
    this.cluster_setup?.etcd.close();
    this.deactivate_groups();
    await this.deactivate('share');
    await this.deactivate('delayed');
    await this.storage.checkpoint();
    await this.save_producer_state();
    await this.storage.close();
  }
}

/** Records the producer fields of each batch in `batches` (back to back) into `producers`. */
function record_producer_batches(producers: PartitionProducers, batches: Buffer): void {
  for (let position = 0; position + BATCH_HEADER_BYTES <= batches.length; ) {
    const size = batch_size_at(batches, position);
    const base_offset = read_int64(batches, position);
    const delta = batches.readInt32BE(position + OFFSET_LAST_OFFSET_DELTA);
    const producer_id = read_int64(batches, position + OFFSET_PRODUCER_ID);
    const sequence = batches.readInt32BE(position + OFFSET_BASE_SEQUENCE);
    if (producer_id >= 0 && sequence >= 0) {
      producers.record(producer_id, batches.readInt16BE(position + OFFSET_PRODUCER_EPOCH), {
        first_sequence: sequence,
        last_sequence: last_sequence_of(sequence, delta),
        base_offset,
        last_offset: base_offset + delta,
        settled: Promise.resolve(),
      });
    }
    position += size;
  }
}
