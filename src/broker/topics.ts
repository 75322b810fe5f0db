// Topics and their partitions: names, ids, partition counts and configs, backed by storage
// partitions named <topic>-<partition>. On a single node, changes are made in storage first, then
// recorded in the metadata store, one at a time. In a cluster they are written to the metadata
// store (etcd) and arrive back through the cluster view (apply_view), which creates and deletes
// the storage partitions this broker holds replicas of.
import type { PartitionLog, Storage } from '../storage/index.ts';
import { BrokerError } from './errors.ts';
import { type MetadataStore, type MetadataState, type TopicRecord, new_uuid } from './metadata_store.ts';
import { type TopicConfigs, log_config_of, validate_configs } from './topic_config.ts';

const TOPIC_NAME = /^[a-zA-Z0-9._-]{1,249}$/;
export const PARTITIONS_MAX = 10_000;

export function partition_name(topic: string, partition: number): string {
  return `${topic}-${partition}`;
}

/** Appends a batch the broker writes itself to a partition, on its leader wherever that is. */
export type AppendRecords = (topic: string, partition: number, records: Buffer) => Promise<void>;

export function is_internal_topic(name: string): boolean {
  return name.startsWith('__');
}

export class TopicManager {
  private readonly by_name = new Map<string, TopicRecord>();
  private readonly by_id = new Map<string, TopicRecord>();
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly storage: Storage,
    private readonly store: MetadataStore,
    state: MetadataState,
  ) {
    for (const topic of state.topics) this.index(topic);
  }

  get distributed(): boolean {
    return this.store.distributed;
  }

  /**
   * A cluster's topics as etcd has them: indexes them, applies changed configs to local logs, and
   * deletes the local partitions of topics that are gone. Local logs of new replicas are created
   * by ensure_log() when replication asks for them.
   */
  async apply_view(topics: TopicRecord[]): Promise<void> {
    const seen = new Set<string>();
    for (const topic of topics) {
      seen.add(topic.name);
      const known = this.by_name.get(topic.name);
      if (known && known.id !== topic.id) await this.drop_local(known);
      if (!known || known.id !== topic.id || JSON.stringify(known.configs) !== JSON.stringify(topic.configs)) {
        const log_config = log_config_of(topic.configs);
        for (let p = 0; p < topic.partitions; p++) {
          const log = this.storage.partition(partition_name(topic.name, p));
          if (log) log.config = log_config;
        }
      }
      if (known) this.by_id.delete(known.id);
      this.index(topic);
    }
    for (const topic of [...this.by_name.values()]) if (!seen.has(topic.name)) await this.drop_local(topic);
  }

  private async drop_local(topic: TopicRecord): Promise<void> {
    this.by_name.delete(topic.name);
    this.by_id.delete(topic.id);
    for (const name of this.storage.partition_names()) {
      if (name.slice(0, name.lastIndexOf('-')) === topic.name) await this.storage.delete_partition(name);
    }
  }

  /** The local log of a partition this broker replicates, created when missing. */
  async ensure_log(topic: string, partition: number): Promise<PartitionLog> {
    const name = partition_name(topic, partition);
    const existing = this.storage.partition(name);
    if (existing) return existing;
    return this.storage.create_partition(name, log_config_of(this.by_name.get(topic)?.configs ?? {}));
  }

  private index(topic: TopicRecord): void {
    this.by_name.set(topic.name, topic);
    this.by_id.set(topic.id, topic);
  }

  /** Log settings of a storage partition, from its topic's configs (used when storage opens). */
  static log_config_for(state: MetadataState, partition: string) {
    const dash = partition.lastIndexOf('-');
    const topic = state.topics.find((t) => t.name === partition.slice(0, dash));
    return topic ? log_config_of(topic.configs) : undefined;
  }

  get(name: string): TopicRecord | undefined {
    return this.by_name.get(name);
  }

  get_by_id(id: string): TopicRecord | undefined {
    return this.by_id.get(id);
  }

  list(): TopicRecord[] {
    return [...this.by_name.values()];
  }

  /** The log of a partition; unknown_topic_or_partition when either does not exist. */
  log(topic: string, partition: number): PartitionLog {
    const log = this.local_log(topic, partition);
    if (!log) throw new BrokerError('not_leader_or_follower', `this broker holds no replica of ${topic}-${partition}`);
    return log;
  }

  /** The local log of an existing partition, or undefined when this broker holds no replica of it. */
  local_log(topic: string, partition: number): PartitionLog | undefined {
    const record = this.by_name.get(topic);
    if (!record || !Number.isInteger(partition) || partition < 0 || partition >= record.partitions) {
      throw new BrokerError('unknown_topic_or_partition', `unknown topic or partition ${topic}-${partition}`);
    }
    return this.storage.partition(partition_name(topic, partition));
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.chain.then(work);
    this.chain = next.catch(() => undefined);
    return next;
  }

  static validate_name(name: string): void {
    if (!TOPIC_NAME.test(name) || name === '.' || name === '..') {
      throw new BrokerError('invalid_topic', `invalid topic name ${JSON.stringify(name)}: use 1-249 of a-z A-Z 0-9 . _ -`);
    }
  }

  static validate_partition_count(partitions: number): void {
    if (!Number.isInteger(partitions) || partitions < 1 || partitions > PARTITIONS_MAX) {
      throw new BrokerError('invalid_partitions', `partition count ${partitions} must be between 1 and ${PARTITIONS_MAX}`);
    }
  }

  async create(name: string, partitions: number, configs: TopicConfigs = {}, options: { validate_only?: boolean; replication_factor?: number; assignment?: number[][] } = {}): Promise<TopicRecord> {
    TopicManager.validate_name(name);
    TopicManager.validate_partition_count(partitions);
    validate_configs(configs);
    return this.serial(async () => {
      if (this.by_name.has(name)) throw new BrokerError('topic_already_exists', `topic ${name} already exists`);
      const record: TopicRecord = { name, id: new_uuid(), partitions, configs: { ...configs }, created_ms: Date.now() };
      if (options.validate_only) return record;
      if (this.store.distributed) {
        await this.store.create_topic(options.assignment ? { ...record, assignment: options.assignment } as TopicRecord : record, options.replication_factor ?? -1);
        return this.by_name.get(name) ?? record;
      }
      if ((options.replication_factor ?? 1) > 1) {
        throw new BrokerError('invalid_replication_factor', `replication factor ${options.replication_factor} needs a cluster; this broker runs alone`);
      }
      const log_config = log_config_of(record.configs);
      for (let p = 0; p < partitions; p++) {
        // A leftover partition of a deleted topic of the same name is removed first.
        if (this.storage.partition(partition_name(name, p))) await this.storage.delete_partition(partition_name(name, p));
        await this.storage.create_partition(partition_name(name, p), log_config);
      }
      this.index(record);
      await this.store.create_topic(record, 1);
      return record;
    });
  }

  async delete(name: string): Promise<void> {
    return this.serial(async () => {
      const record = this.by_name.get(name);
      if (!record) throw new BrokerError('unknown_topic_or_partition', `unknown topic ${name}`);
      if (this.store.distributed) {
        await this.store.delete_topic(name);
        return;
      }
      this.by_name.delete(name);
      this.by_id.delete(record.id);
      await this.store.delete_topic(name);
      for (let p = 0; p < record.partitions; p++) {
        if (this.storage.partition(partition_name(name, p))) await this.storage.delete_partition(partition_name(name, p));
      }
    });
  }

  async add_partitions(name: string, total: number, options: { validate_only?: boolean } = {}): Promise<void> {
    return this.serial(async () => {
      const record = this.by_name.get(name);
      if (!record) throw new BrokerError('unknown_topic_or_partition', `unknown topic ${name}`);
      TopicManager.validate_partition_count(total);
      if (total <= record.partitions) {
        throw new BrokerError('invalid_partitions', `topic ${name} has ${record.partitions} partitions; the new count must be larger`);
      }
      if (options.validate_only) return;
      if (this.store.distributed) {
        await this.store.update_topic(name, (stored) => ({ ...stored, partitions: total }));
        return;
      }
      const log_config = log_config_of(record.configs);
      for (let p = record.partitions; p < total; p++) await this.storage.create_partition(partition_name(name, p), log_config);
      record.partitions = total;
      await this.store.update_topic(name, (stored) => ({ ...stored, partitions: total }));
    });
  }

  /** Replaces (or, with `merge`, updates) a topic's configs and applies them to its partitions. */
  async set_configs(name: string, configs: TopicConfigs, options: { validate_only?: boolean; merge?: boolean; remove?: string[] } = {}): Promise<void> {
    return this.serial(async () => {
      const record = this.by_name.get(name);
      if (!record) throw new BrokerError('unknown_topic_or_partition', `unknown topic ${name}`);
      const next: TopicConfigs = options.merge ? { ...record.configs, ...configs } : { ...configs };
      for (const key of options.remove ?? []) delete next[key];
      validate_configs(next);
      if (options.validate_only) return;
      if (this.store.distributed) {
        await this.store.update_topic(name, (stored) => ({ ...stored, configs: next }));
        return;
      }
      record.configs = next;
      const log_config = log_config_of(next);
      for (let p = 0; p < record.partitions; p++) this.storage.require(partition_name(name, p)).config = log_config;
      await this.store.update_topic(name, (stored) => ({ ...stored, configs: next }));
    });
  }
}
