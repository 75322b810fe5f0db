// The broker core: topics, the produce path with idempotent producer state, the coordinators
// (consumer groups with committed offsets, share groups, delayed delivery), overflow caps and
// traffic counters, over storage and a placement. It implements the core API (core/api.ts) that
// front ends use, and the PlacementHost through which the placement — a single node, or a cluster
// member — tells it what it holds. It builds nothing it is not given: the composition root
// (compose/) opens storage, the metadata store and the placement and hands them in.
import { Acls } from './acls/acls.ts';
import { Users } from './users.ts';
import { Quotas } from './quotas/quotas.ts';
import { BrokerConfigs } from './broker_configs.ts';
import { rethrow_invariant } from '../core/invariants.ts';
import type { CredentialStore } from './credentials.ts';
import type { Core } from '../core/api.ts';
import type { Clock, Logger } from '../core/clock.ts';
import { BrokerError } from '../core/errors.ts';
import type { MetadataStore } from '../core/metadata_store.ts';
import { is_internal_topic, partition_name } from '../core/names.ts';
import type { PartitionReader } from '../core/partition_reader.ts';
import type { Placement, PlacementHost } from '../core/placement.ts';
import type { InternalTopic, TopicPartition, TxnProducer } from '../core/types.ts';
import type { FileIO, PartitionLog, Storage } from '../storage/index.ts';
import { cluster_api, dead_letters_api, delayed_api } from './apis/cluster_api.ts';
import { groups_api } from './apis/groups_api.ts';
import { partitions_api } from './apis/partitions_api.ts';
import { shares_api } from './apis/shares_api.ts';
import { topics_api } from './apis/topics_api.ts';
import { transactions_api } from './apis/transactions_api.ts';
import { routing_api, type RoutingCore } from './apis/routing_api.ts';
import { Coordinators } from './coordinators.ts';
import { DELAYED_TOPIC } from './delayed/delayed_delivery.ts';
import type { BrokerSettings } from './broker_settings.ts';
import type { CoreInternals } from './apis/internals.ts';
import { OFFSETS_TOPIC } from './offset_store.ts';
import { OverflowGuard } from './overflow.ts';
import { ProducePath } from './produce_path.ts';
import { ProducerStates, record_producer_batches } from './producer_states.ts';
import { SHARE_STATE_TOPIC } from './queues/share_state_store.ts';
import { BrokerStats } from './stats.ts';
import { TopicManager } from './topics.ts';
import { TXN_COORDINATOR_PARTITION, TXN_STATE_TOPIC, type TxnPartition } from './txn/txn_log.ts';
import { TXN_CHECKS_TOPIC, TXN_UNRESOLVED_TOPIC } from '../protocol/half_messages.ts';
import { encode_marker, type Marker } from '../protocol/control_records.ts';
import { LocalReader, log_transactions } from './local_reader.ts';
import { LogCleaner, type CompactedLog } from './compaction/log_cleaner.ts';
import { compaction_config_of } from './topic_config.ts';

/** Producer ids are reserved from the metadata store in blocks of this many. */
const PRODUCER_ID_BLOCK = 1000;

/** The broker's own topics, created at the first start (in a cluster, by the controller). */
export const INTERNAL_TOPICS: readonly InternalTopic[] = [
  { name: OFFSETS_TOPIC, configs: { 'retention.ms': '-1', 'max.message.bytes': String(16 * 1024 * 1024) } },
  { name: DELAYED_TOPIC, configs: { 'retention.ms': '-1', 'max.message.bytes': String(128 * 1024 * 1024) } },
  { name: SHARE_STATE_TOPIC, configs: { 'retention.ms': '-1', 'max.message.bytes': String(16 * 1024 * 1024) } },
  // Rewritten now and then and cut before the rewrite (txn_log.ts): small segments free the disk.
  {
    name: TXN_STATE_TOPIC,
    configs: {
      'retention.ms': '-1',
      'max.message.bytes': String(16 * 1024 * 1024),
      'segment.bytes': String(64 * 1024 * 1024),
    },
  },
  // Check-back (protocol/half_messages.ts): check requests are of no use after a week; unresolved
  // half messages are kept until an operator deletes them.
  { name: TXN_CHECKS_TOPIC, configs: { 'retention.ms': String(7 * 24 * 3_600_000) } },
  { name: TXN_UNRESOLVED_TOPIC, configs: { 'retention.ms': '-1' } },
];

/** What the composition root hands the core. */
export interface BrokerParts {
  node_id: number;
  data_dir: string;
  io: FileIO;
  /** The wall clock: timestamps, due times of delayed messages, time to live. */
  clock: Clock;
  /**
   * For durations that must not jump when the wall clock is stepped (share-group sessions,
   * acquisition locks, redelivery backoff): a monotonic clock.
   */
  monotonic_clock: Clock;
  logger: Logger;
  storage: Storage;
  metadata: MetadataStore;
  placement: Placement;
  settings: BrokerSettings;
  /** The users file's users, when there is one. */
  users_file?: CredentialStore | null;
}

export class Broker implements Core, CoreInternals {
  readonly node_id: number;
  readonly data_dir: string;
  readonly clock: Clock;
  readonly monotonic_clock: Clock;
  readonly logger: Logger;
  readonly storage: Storage;
  readonly metadata: MetadataStore;
  readonly placement: Placement;
  readonly settings: BrokerSettings;
  readonly topic_index: TopicManager;
  readonly producer_states: ProducerStates;
  readonly coordinators: Coordinators;
  readonly overflow: OverflowGuard;
  readonly produce_path: ProducePath;
  readonly stats: BrokerStats;
  readonly cleaner: LogCleaner;

  readonly topics;
  readonly partitions;
  readonly cluster;
  readonly groups;
  readonly shares;
  readonly transactions;
  readonly delayed;
  readonly dead_letters;
  readonly routing: RoutingCore;
  readonly acls: Acls;
  readonly users: Users;
  readonly quotas: Quotas;
  readonly configs: BrokerConfigs;

  private readonly local_readers = new WeakMap<PartitionLog, PartitionReader>();
  private next_producer_id = 0;
  private producer_id_block_end = 0;
  private closed = false;

  private constructor(parts: BrokerParts) {
    this.node_id = parts.node_id;
    this.data_dir = parts.data_dir;
    this.clock = parts.clock;
    this.monotonic_clock = parts.monotonic_clock;
    this.logger = parts.logger;
    this.storage = parts.storage;
    this.metadata = parts.metadata;
    this.placement = parts.placement;
    this.settings = parts.settings;
    this.acls = new Acls(parts.metadata, parts.settings.acls);
    this.users = new Users(parts.users_file ?? null, parts.metadata);
    this.quotas = new Quotas(parts.metadata, parts.settings.quota_exempt_users, () => parts.monotonic_clock.now_ms());
    const registered = (id: number) => parts.placement.broker_ids().includes(id);
    this.configs = new BrokerConfigs(parts.metadata, parts.node_id, parts.settings.started_with, registered);
    this.topic_index = this.topic_manager(parts);
    this.stats = this.stats_of(parts);
    this.producer_states = new ProducerStates(parts.io, parts.data_dir, parts.logger, () => this.own_logs());
    this.cleaner = new LogCleaner(() => this.compacted_logs(), parts.clock, parts.logger, parts.settings.cleaner);
    const append = (topic: string, partition: number, records: Buffer) =>
      this.append_records(topic, partition, records);
    this.coordinators = new Coordinators({
      node_id: parts.node_id,
      topics: this.topic_index,
      logger: parts.logger,
      clock: parts.clock,
      monotonic_clock: parts.monotonic_clock,
      reader: (topic, partition) => this.partition_reader(topic, partition),
      reader_now: (topic, partition) => this.partition_reader_now(topic, partition),
      append,
      ensure_topic: (name, partitions) => this.topic_index.ensure(name, partitions),
      group_configs: (group_id) => parts.metadata.group_configs(group_id),
      // Routing is built after the coordinators; dead letters only flow once both exist.
      route_dead_letters: (...args) => this.routing.route_dead_letters(...args),
      allocate_producer_id: () => this.allocate_producer_id(),
      write_marker: (partition, marker) => this.write_marker(partition, marker),
      settings: {
        groups: parts.settings.groups,
        shares: parts.settings.share_groups,
        delayed: parts.settings.delayed,
        transactions: parts.settings.transactions,
      },
    });
    this.overflow = new OverflowGuard(
      this.topic_index,
      () => this.coordinators.share_host,
      (name, partitions) => this.topic_index.ensure(name, partitions),
      parts.logger,
      append,
      // Routing is built after this guard; a queue's drop-head dead letters flow once it exists.
      (topic, records) => {
        const found = this.routing.queue_of_topic(topic);
        return found ? this.routing.route_maxlen(found.vhost, found.queue, records) : null;
      },
    );
    this.produce_path = new ProducePath({
      topics: this.topic_index,
      placement: parts.placement,
      producers: this.producer_states,
      overflow: this.overflow,
      clock: parts.clock,
      delayed_settings: parts.settings.delayed,
      delayed_host: () => this.coordinators.delayed_host,
      append,
      check_transactional: (producer, partition, join) => this.check_transactional(producer, partition, join),
      add_to_txn: (producer, partition) => this.add_to_txn(producer, partition),
    });
    this.topics = topics_api(this);
    this.partitions = partitions_api(this);
    this.cluster = cluster_api(this);
    this.groups = groups_api(this);
    this.shares = shares_api(this);
    this.transactions = transactions_api(this);
    this.delayed = delayed_api(this);
    this.dead_letters = dead_letters_api(this);
    this.routing = routing_api(this, this.topics, this.shares);
  }

  /** Builds the core and lets the placement attach (a single node is then ready to serve). */
  static async start(parts: BrokerParts): Promise<Broker> {
    const broker = new Broker(parts);
    await broker.producer_states.open();
    await parts.placement.attach(broker.placement_host(), INTERNAL_TOPICS);
    broker.cleaner.start();
    return broker;
  }

  /** Joins the cluster at the address clients reach this broker (nothing to do on a single node). */
  /** `address`: where other brokers reach this one; `listeners`: each Kafka listener's advertised address. */
  async join(
    address: { host: string; port: number },
    listeners: Readonly<Record<string, { host: string; port: number }>> = {},
  ): Promise<void> {
    await this.placement.join(address, listeners);
    // Queues and exchanges that do not outlive a restart of the broker that declared them go now.
    await this.routing.forget_transient().catch((error: unknown) => {
      this.logger.warn({ error: String(error) }, 'non-durable AMQP declarations not removed');
    });
  }

  get cluster_id(): string {
    return this.metadata.cluster_id;
  }

  private stats_of(parts: BrokerParts): BrokerStats {
    return new BrokerStats(
      (topic, partition) => partition < (this.topic_index.get(topic)?.partitions ?? 0),
      (observer) => (parts.storage.flusher.on_fsync = observer),
      () => parts.io.disk_space(parts.data_dir),
    );
  }

  /** The topic index over the cluster-wide topic defaults, applied to the local logs as they change. */
  private topic_manager(parts: BrokerParts): TopicManager {
    const topics = new TopicManager(parts.storage, parts.placement, parts.clock, () => this.configs.topic_defaults());
    // A single node's view does not change with the configs: their new topic defaults apply here.
    this.configs.on_change(() => {
      topics.apply_view(topics.list()).catch((error: unknown) => {
        rethrow_invariant(error);
        this.logger.warn({ error: String(error) }, 'new topic defaults not applied to the local logs');
      });
    });
    return topics;
  }

  private placement_host(): PlacementHost {
    const fsync = this.storage.config.durability.kind === 'fsync';
    return {
      apply_topics: async (topics) => {
        await this.topic_index.apply_view(topics);
        this.configs.changed();
      },
      create_topic: (name, partitions, configs, placement) =>
        this.topic_index.ensure(name, partitions, configs, placement),
      ensure_log: async (topic, partition) => {
        const log = await this.topic_index.ensure_log(topic, partition);
        if (!this.producer_states.has(log.name) && !is_internal_topic(topic)) await this.producer_states.load(log);
        return log;
      },
      reader_of: (log) => this.local_reader(log),
      on_role: (topic, partition, role, log) => {
        if (role === 'leader') this.producer_states.led(log);
        return this.coordinators.on_role(topic, partition, role, log);
      },
      durable_end: (log) => (fsync ? log.flushed_offset : log.written_offset),
      min_insync_replicas: (topic) =>
        Number(this.topic_index.configs_in_force(this.topic_index.get(topic))['min.insync.replicas'] ?? 1),
      on_replicated: (log, batches) => this.producer_states.record_batches(log, batches),
      on_truncated: (log, end) => this.producer_states.truncated(log, end),
      drop_log: async (log) => {
        this.producer_states.forget(log.name);
        if (this.storage.partition(log.name) === log) await this.storage.delete_partition(log.name);
      },
      suspect_copies: () =>
        this.storage.partition_names().flatMap((name) => {
          const cut = this.storage.partition(name)?.recovery_cut;
          // Under fsync nothing acknowledged was unflushed: a crash loses none of it, and leaving
          // the ISR then only leaves a replica with a damaged copy to lead (seed 20261202).
          const why = cut
            ? `recovery cut the log at ${cut.offset}: ${cut.why}`
            : this.storage.opened_clean || fsync
              ? null
              : 'unclean shutdown: what the disk had not flushed (durability policy not fsync) may be gone';
          const dash = name.lastIndexOf('-');
          return why ? [{ topic: name.slice(0, dash), partition: Number(name.slice(dash + 1)), why }] : [];
        }),
    };
  }

  /** The local logs of topics that are not the broker's own (producer state is kept for these). */
  private *own_logs(): Iterable<PartitionLog> {
    for (const topic of this.topic_index.list()) {
      if (is_internal_topic(topic.name)) continue;
      for (let p = 0; p < topic.partitions; p++) {
        const log = this.storage.partition(partition_name(topic.name, p));
        if (log) yield log;
      }
    }
  }

  /** The local logs of compacted topics, each with its compaction configs and producer state. */
  private *compacted_logs(): Iterable<CompactedLog> {
    for (const topic of this.topic_index.list()) {
      const config = compaction_config_of(this.topic_index.configs_in_force(topic));
      if (!config) continue;
      for (let partition = 0; partition < topic.partitions; partition++) {
        const log = this.storage.partition(partition_name(topic.name, partition));
        if (!log || log.is_offline) continue;
        const producers = this.producer_states.has(log.name) ? this.producer_states.of(log.name) : null;
        yield { topic: topic.name, partition, log, config, producers };
      }
    }
  }

  // ------------------------------------------------------------------ used by the API objects

  /**
   * Appends a batch the broker writes itself (dead letters, archives, due delayed records) on the
   * partition's leader, here or forwarded; resolves once acknowledged under acks=all.
   */
  append_records(topic: string, partition: number, records: Buffer): Promise<void> {
    return this.placement.append(topic, partition, records);
  }

  /**
   * Whether a transactional batch may be stored; with `join` (Produce v12+, transaction version 2)
   * its partition first joins the producer's transaction. The coordinator here checks (or adds) it
   * itself. Elsewhere a transaction's first batch on the partition is verified with (or added
   * through) the coordinator; later ones belong to the transaction the log already shows open
   * (until its marker), a zombie's older epoch being refused by the producer state as any other.
   */
  private async check_transactional(producer: TxnProducer, where: TopicPartition, join: boolean): Promise<void> {
    const unnamed = () =>
      new BrokerError('invalid_request', 'a transactional batch is produced with its transactional id');
    if (join && !producer.transactional_id) throw unnamed();
    const txns = this.coordinators.txn_host;
    const { transactional_id, producer_id, producer_epoch } = producer;
    if (txns && join) return txns.join(transactional_id, producer_id, producer_epoch, where);
    if (txns) return txns.check_produce(producer_id, producer_epoch, where.topic, where.partition);
    if (this.producer_states.of(partition_name(where.topic, where.partition)).txns.has_open(producer_id)) return;
    if (!transactional_id) throw unnamed();
    if (join) return this.placement.add_to_txn(TXN_COORDINATOR_PARTITION, producer, where);
    await this.placement.verify_in_txn(TXN_COORDINATOR_PARTITION, producer, where);
  }

  /** Adds `partition` to the producer's ongoing transaction (the delay log, for its delayed records). */
  private async add_to_txn(producer: TxnProducer, partition: TopicPartition): Promise<void> {
    const txns = this.coordinators.txn_host;
    if (!txns) return this.placement.add_to_txn(TXN_COORDINATOR_PARTITION, producer, partition);
    const { transactional_id, producer_id, producer_epoch } = producer;
    const results = await txns.add_partitions(transactional_id, producer_id, producer_epoch, [partition]);
    const refused = results.find((result) => result.error !== null);
    if (refused) throw refused.error;
  }

  /** A marker the coordinator here writes: on this broker when it leads the partition, else on its leader. */
  write_marker(where: TxnPartition, marker: Marker): Promise<void> {
    if (this.placement.is_leader(where.topic, where.partition)) return this.write_marker_here(where, marker);
    return this.placement.write_marker(where, marker);
  }

  /**
   * A transaction marker appended to a partition this broker leads (acks=all), learnt by the
   * partition's producer state as it enters the log, in log order; not_leader_or_follower when
   * another broker leads it.
   */
  async write_marker_here(where: TopicPartition, marker: Marker): Promise<void> {
    const offsets = where.topic === OFFSETS_TOPIC;
    const delays = where.topic === DELAYED_TOPIC;
    // The group coordinator applies a marker of its offsets as the marker is written (delayed
    // delivery, one of the delay log): one written while it loads (replays the log) could fall after
    // the replay's end and never apply, so it is refused until it runs (the transaction coordinator
    // tries again).
    if (offsets && !this.coordinators.group_host)
      throw new BrokerError('coordinator_load_in_progress', `the group coordinator is not running on this broker yet`);
    if (delays && !this.coordinators.delayed_host)
      throw new BrokerError('coordinator_load_in_progress', `delayed delivery is not running on this broker yet`);
    const log = this.placement.leader_log(where.topic, where.partition, true);
    const batch = encode_marker(marker);
    const base_offset = log.next_offset;
    // Built here, so checked: the client rules (no control batches) are not for the broker's own.
    const appended = log.append(batch, { checked: true });
    if (log.next_offset === base_offset) return void (await appended); // refused before any offset was assigned
    record_producer_batches(this.producer_states.of(log.name), batch);
    try {
      await appended;
    } catch (error) {
      // A failed write is cut from the log, and what follows it: so is what the state learnt.
      if (!(error instanceof BrokerError)) this.producer_states.truncated(log, base_offset);
      throw error;
    }
    if (offsets) this.coordinators.group_host?.offsets.end_txn(marker.producer_id, marker.commit);
    if (delays) this.coordinators.delayed_host?.end_txn(marker.producer_id, marker.commit);
  }

  /**
   * A produce the broker makes on an operator's behalf (dead-letter redrive): through the produce
   * path when this broker leads the partition, else forwarded to its leader. The base offset, or
   * -1 when it is not known.
   */
  async produce_anywhere(topic: string, partition: number, records: Buffer): Promise<number> {
    if (this.placement.is_leader(topic, partition))
      return (await this.produce_path.produce(topic, partition, records, -1)).base_offset;
    return this.placement.forward(topic, partition, records);
  }

  /**
   * Where this broker reads a partition's records for its own work (share groups, dead letters, the
   * admin API): its replica when it leads the partition or is in sync, else the leader's copy.
   * Bounds are known once resolved.
   */
  async partition_reader(topic: string, partition: number): Promise<PartitionReader> {
    const reader = this.partition_reader_now(topic, partition);
    return reader.ready ? reader.ready() : reader;
  }

  /** The reader of a local log (one per log, so its listeners and lookups are the log's own). */
  private local_reader(log: PartitionLog): PartitionReader {
    let reader = this.local_readers.get(log);
    if (!reader) {
      // Internal topics keep no producer state: nothing of theirs is hidden from their readers.
      const txns = () => (this.producer_states.has(log.name) ? this.producer_states.of(log.name).txns : null);
      reader = new LocalReader(log, log_transactions(log, txns));
      this.local_readers.set(log, reader);
    }
    return reader;
  }

  /** partition_reader() without waiting: a remote partition's bounds are zero until first heard. */
  partition_reader_now(topic: string, partition: number): PartitionReader & { ready?(): Promise<PartitionReader> } {
    this.topic_index.check(topic, partition);
    return this.placement.reader(topic, partition);
  }

  /** The topic, created with the default partition count when auto-creation is on. */
  async ensure_topic(name: string, allow_auto_create: boolean): Promise<void> {
    if (this.topic_index.get(name)) return;
    if (!allow_auto_create || !this.settings.auto_create_topics || is_internal_topic(name)) {
      throw new BrokerError('unknown_topic_or_partition', `unknown topic ${name}`);
    }
    await this.topic_index.ensure(name, this.settings.default_partitions);
  }

  /** Producer ids come in blocks reserved in the metadata store, so no two brokers hand out one. */
  async allocate_producer_id(): Promise<number> {
    if (this.next_producer_id >= this.producer_id_block_end) {
      const start = await this.metadata.allocate_producer_ids(PRODUCER_ID_BLOCK);
      if (this.next_producer_id >= this.producer_id_block_end) {
        this.next_producer_id = start;
        this.producer_id_block_end = start + PRODUCER_ID_BLOCK;
      }
    }
    return this.next_producer_id++;
  }

  // ------------------------------------------------------------------ lifecycle

  /** Pending group joins and syncs are answered now (a shutdown should not wait a rebalance out). */
  begin_shutdown(): void {
    this.coordinators.release_group_waiters();
  }

  /** Stops replication and the coordinators, writes and syncs everything, saves producer state. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.cleaner.stop();
    // Replication stops first: nothing is led or followed while the rest shuts down.
    await this.placement.close();
    await this.coordinators.close();
    await this.storage.checkpoint();
    await this.producer_states.close();
    await this.storage.close();
  }
}
