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
import { batch_size_at, check_batch, read_int64, OFFSET_PRODUCER_ID, OFFSET_PRODUCER_EPOCH, OFFSET_BASE_SEQUENCE, OFFSET_LAST_OFFSET_DELTA, ATTRIBUTE_TRANSACTIONAL, batch_attributes } from '../storage/batch.ts';
import { read_whole_file, replace_file_atomically } from '../storage/file_util.ts';
import { BrokerError } from './errors.ts';
import { LocalMetadataStore, type MetadataState } from './metadata_store.ts';
import { TopicManager, partition_name, is_internal_topic } from './topics.ts';
import { OFFSETS_TOPIC, OffsetStore } from './offset_store.ts';
import { GROUP_SETTINGS_DEFAULT, GroupCoordinator, type GroupSettings } from './group_coordinator.ts';
import { PartitionProducers, last_sequence_of, type BatchEntry } from './producer_state.ts';
import { SHARE_GROUP_SETTINGS_DEFAULT, ShareCoordinator, type ShareGroupSettings } from './queues/share_coordinator.ts';
import { SHARE_STATE_TOPIC, ShareStateStore } from './queues/share_state_store.ts';
import { DELAYED_SETTINGS_DEFAULT, DELAYED_TOPIC, DelayedDelivery, type DelayedSettings } from './delayed/delayed_delivery.ts';
import { delayed_records, may_carry_delay, type DelayedRecords } from './delayed/delay_headers.ts';
import { OverflowGuard, overflow_limits } from './overflow.ts';
import { type GroupConfigs, validate_group_configs } from './queues/group_config.ts';
import { BrokerStats } from './stats.ts';

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
  logger?: Logger;
}

export interface ProduceResult {
  base_offset: number;
  log_append_time_ms: number;
  log_start_offset: number;
}

const PRODUCER_STATE_FILE = 'producer-state.json';
const PRODUCER_ID_BLOCK = 1000;
const SCAN_READ_BYTES = 1024 * 1024;
const PRODUCER_STATE_INTERVAL_MS = 10_000;

export class Broker {
  readonly topics: TopicManager;
  readonly offsets: OffsetStore;
  readonly groups: GroupCoordinator;
  readonly shares: ShareCoordinator;
  readonly delayed: DelayedDelivery;
  readonly overflow: OverflowGuard;
  /** Traffic counters (front ends add to them; metrics read them). */
  readonly stats = new BrokerStats();
  private readonly producers = new Map<string, PartitionProducers>();
  /** Per partition, the end of the chain of produces that had to wait (see produce). */
  private readonly produce_gates = new Map<string, Promise<void>>();
  private next_producer_id: number;
  private closed = false;
  private producer_state_saves: Promise<void> = Promise.resolve();
  private producer_state_timer: NodeJS.Timeout | null = null;

  private constructor(
    readonly options: Required<Pick<BrokerOptions, 'data_dir' | 'node_id' | 'auto_create_topics' | 'default_partitions'>>,
    readonly storage: Storage,
    private readonly store: LocalMetadataStore,
    private readonly state: MetadataState,
    offsets_log: PartitionLog,
    topics: TopicManager,
    group_settings: GroupSettings,
    share_settings: ShareGroupSettings,
    delayed_settings: DelayedSettings,
    readonly logger: Logger,
  ) {
    this.topics = topics;
    this.offsets = new OffsetStore(offsets_log);
    this.groups = new GroupCoordinator(this.offsets, group_settings);
    this.shares = new ShareCoordinator(
      {
        topics,
        store: new ShareStateStore(topics.log(SHARE_STATE_TOPIC, 0)),
        logger,
        ensure_dead_letter_topic: (name) => this.ensure_internal_topic(name, 1),
        group_configs: (group_id) => this.group_configs(group_id),
      },
      share_settings,
    );
    this.delayed = new DelayedDelivery(topics.log(DELAYED_TOPIC, 0), topics, logger, delayed_settings);
    this.overflow = new OverflowGuard(topics, this.shares, (name, partitions) => this.ensure_internal_topic(name, partitions), logger);
    this.next_producer_id = state.producer_id_block_end;
  }

  static async start(options: BrokerOptions): Promise<Broker> {
    const logger = options.logger ?? SILENT_LOGGER;
    const store = new LocalMetadataStore(options.data_dir);
    await new NodeFileIO().mkdir(options.data_dir);
    const state = await store.load();
    await store.save(state);
    const config: StorageConfig = {
      ...storage_config_default(options.data_dir),
      ...(options.durability ? { durability: options.durability } : {}),
      ...options.storage,
    };
    const storage = await Storage.open(config, { logger, log_config: (name) => TopicManager.log_config_for(state, name) });
    const topics = new TopicManager(storage, store, state);
    if (!topics.get(OFFSETS_TOPIC)) {
      await topics.create(OFFSETS_TOPIC, 1, { 'retention.ms': '-1', 'max.message.bytes': String(16 * 1024 * 1024) });
    }
    if (!topics.get(DELAYED_TOPIC)) {
      await topics.create(DELAYED_TOPIC, 1, { 'retention.ms': '-1', 'max.message.bytes': String(128 * 1024 * 1024) });
    }
    if (!topics.get(SHARE_STATE_TOPIC)) {
      await topics.create(SHARE_STATE_TOPIC, 1, { 'retention.ms': '-1', 'max.message.bytes': String(16 * 1024 * 1024) });
    }
    const broker = new Broker(
      {
        data_dir: options.data_dir,
        node_id: options.node_id,
        auto_create_topics: options.auto_create_topics ?? true,
        default_partitions: options.default_partitions ?? 1,
      },
      storage,
      store,
      state,
      topics.log(OFFSETS_TOPIC, 0),
      topics,
      { ...GROUP_SETTINGS_DEFAULT, ...options.groups },
      { ...SHARE_GROUP_SETTINGS_DEFAULT, ...options.share_groups, partition: { ...SHARE_GROUP_SETTINGS_DEFAULT.partition, ...options.share_groups?.partition } },
      { ...DELAYED_SETTINGS_DEFAULT, ...options.delayed },
      logger,
    );
    await broker.offsets.load();
    await broker.shares.load();
    broker.shares.start();
    await broker.delayed.load(Date.now());
    broker.delayed.start();
    await broker.load_producer_state();
    // Periodic snapshots bound how much of the log a restart after a crash replays.
    broker.producer_state_timer = setInterval(() => void broker.save_producer_state().catch(() => undefined), PRODUCER_STATE_INTERVAL_MS);
    broker.producer_state_timer.unref();
    return broker;
  }

  get cluster_id(): string {
    return this.state.cluster_id;
  }

  get node_id(): number {
    return this.options.node_id;
  }

  /** A share group's own configs (empty when it has none). */
  group_configs(group_id: string): GroupConfigs {
    return { ...this.state.group_configs?.[group_id] };
  }

  /** Sets (and removes) a share group's configs; they apply at once and survive restarts. */
  async set_group_configs(group_id: string, set: GroupConfigs, options: { remove?: string[]; replace?: boolean; validate_only?: boolean } = {}): Promise<void> {
    if (group_id === '') throw new BrokerError('invalid_group_id', 'a group config needs a group id');
    const next: GroupConfigs = options.replace ? { ...set } : { ...this.group_configs(group_id), ...set };
    for (const name of options.remove ?? []) delete next[name];
    validate_group_configs(next);
    if (options.validate_only) return;
    this.state.group_configs = { ...this.state.group_configs, [group_id]: next };
    if (Object.keys(next).length === 0) delete this.state.group_configs[group_id];
    await this.store.save(this.state);
    this.shares.apply_group_configs(group_id, next);
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
  async produce(topic: string, partition: number, records: Buffer): Promise<ProduceResult> {
    const log = this.topics.log(topic, partition);
    if (records.length >= 61 && batch_size_at(records, 0) !== records.length) {
      throw new BrokerError('invalid_record', 'a produce request must carry exactly one record batch per partition');
    }
    if (records.length >= 61 && (batch_attributes(records, 0) & ATTRIBUTE_TRANSACTIONAL) !== 0) {
      throw new BrokerError('invalid_record', 'transactional batches are not supported yet');
    }
    const needs_delay_check = records.length >= 61 && may_carry_delay(records);
    const limits = overflow_limits(this.topics.get(topic)?.configs ?? {});
    const gate = this.produce_gates.get(log.name);
    if (!needs_delay_check && !limits && !gate) return this.append_in_order(log, records);
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
        const delayed = await delayed_records(records, received_ms, this.delayed.settings.delay_max_ms);
        if (delayed) result = this.produce_delayed(log, topic, partition, records, delayed, received_ms);
      }
      if (!result && limits && records.length >= 61) await this.overflow.make_room(topic, partition, log, limits, records.readInt32BE(57), records.length);
      result ??= this.append_in_order(log, records); // issues the append before its first await
      open();
      return await result;
    } finally {
      open();
      if (this.produce_gates.get(log.name) === chained) this.produce_gates.delete(log.name);
    }
  }

  /** The append of an ordinary batch; the log's append is called before the first await. */
  private async append_in_order(log: PartitionLog, records: Buffer): Promise<ProduceResult> {
    const producer_id = records.length >= 61 ? read_int64(records, OFFSET_PRODUCER_ID) : -1;
    const sequence = records.length >= 61 ? records.readInt32BE(OFFSET_BASE_SEQUENCE) : -1;
    if (producer_id < 0 || sequence < 0) return this.result(await log.append(records));
    // Check the batch (CRC, size) before trusting its producer fields: a corrupt retry must be
    // refused as corrupt, not answered as a duplicate or a sequence error.
    check_batch(records, 0, { message_bytes_max: log.config.message_bytes_max, client_batch: true });
    const epoch = records.readInt16BE(OFFSET_PRODUCER_EPOCH);
    const last_sequence = last_sequence_of(sequence, records.readInt32BE(OFFSET_LAST_OFFSET_DELTA));
    const producers = this.producers_of(log.name);
    const duplicate = producers.check(producer_id, epoch, sequence, last_sequence);
    if (duplicate) {
      await duplicate.settled;
      return { base_offset: duplicate.base_offset, log_append_time_ms: -1, log_start_offset: log.log_start_offset };
    }
    const base_offset = log.next_offset;
    const appended = log.append(records, { checked: true });
    if (log.next_offset === base_offset) return this.result(await appended); // refused before any offset was assigned
    const entry: BatchEntry = { first_sequence: sequence, last_sequence, base_offset, last_offset: log.next_offset - 1, settled: appended };
    producers.record(producer_id, epoch, entry);
    try {
      return this.result(await appended);
    } catch (error) {
      producers.forget(producer_id, entry);
      throw error;
    }
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
      await this.delayed.schedule(topic, partition, records, delayed.due_ms, received_ms);
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
    const scheduling = this.delayed.schedule(topic, partition, records, delayed.due_ms, received_ms);
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

  async allocate_producer_id(): Promise<number> {
    if (this.next_producer_id >= this.state.producer_id_block_end) {
      this.state.producer_id_block_end = this.next_producer_id + PRODUCER_ID_BLOCK;
      await this.store.save(this.state);
    }
    return this.next_producer_id++;
  }

  // ------------------------------------------------------------------ producer state across restarts

  /** Loads the snapshot taken at the last clean close, then replays batches written after it. */
  private async load_producer_state(): Promise<void> {
    const file = path.join(this.options.data_dir, PRODUCER_STATE_FILE);
    const bytes = await read_whole_file(new NodeFileIO(), file);
    const snapshot = bytes ? (JSON.parse(bytes.toString('utf8')) as Record<string, { offset: number; producers: unknown }>) : {};
    for (const topic of this.topics.list()) {
      if (is_internal_topic(topic.name)) continue;
      for (let p = 0; p < topic.partitions; p++) {
        const name = partition_name(topic.name, p);
        const saved = snapshot[name];
        const producers = saved ? PartitionProducers.from_json(saved.producers) : new PartitionProducers();
        this.producers.set(name, producers);
        await this.replay_producers(this.topics.log(topic.name, p), producers, saved?.offset ?? 0);
      }
    }
  }

  private async replay_producers(log: PartitionLog, producers: PartitionProducers, from_offset: number): Promise<void> {
    let offset = Math.max(from_offset, log.log_start_offset);
    while (offset < log.written_offset) {
      const { batches } = await log.read(offset, SCAN_READ_BYTES, 'log_end');
      if (batches.length === 0) break;
      for (const batch of batches) {
        const base_offset = read_int64(batch, 0);
        const delta = batch.readInt32BE(OFFSET_LAST_OFFSET_DELTA);
        const producer_id = read_int64(batch, OFFSET_PRODUCER_ID);
        const sequence = batch.readInt32BE(OFFSET_BASE_SEQUENCE);
        if (producer_id >= 0 && sequence >= 0) {
          producers.record(producer_id, batch.readInt16BE(OFFSET_PRODUCER_EPOCH), {
            first_sequence: sequence,
            last_sequence: last_sequence_of(sequence, delta),
            base_offset,
            last_offset: base_offset + delta,
            settled: Promise.resolve(),
          });
        }
        offset = base_offset + delta + 1;
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
          if (!log) continue;
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
    this.groups.close();
    await this.shares.close();
    await this.delayed.close();
    await this.storage.checkpoint();
    await this.save_producer_state();
    await this.storage.close();
  }
}
