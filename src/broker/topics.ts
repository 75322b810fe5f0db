// Topics and their partitions as the broker core knows them: names, ids, partition counts and
// configs, indexed by name and id, each partition the storage partition <topic>-<partition>. The
// index follows what the placement stores (apply_topics, on a single node and in a cluster alike);
// changes are checked here and written through the placement, one at a time.
import type { PartitionLog, Storage } from '../storage/index.ts';
import type { Clock } from '../core/clock.ts';
import { BrokerError } from '../core/errors.ts';
import { new_uuid } from '../core/metadata_store.ts';
import { PARTITIONS_MAX, partition_name } from '../core/names.ts';
import type { Placement, TopicPlacement } from '../core/placement.ts';
import type { TopicConfigs, TopicRecord } from '../core/types.ts';
import { log_config_of, validate_configs, type TopicDefault } from './topic_config.ts';

const TOPIC_NAME = /^[a-zA-Z0-9._-]{1,249}$/;

/** Appends a batch the broker writes itself to a partition, on its leader wherever that is. */
export type AppendRecords = (topic: string, partition: number, records: Buffer) => Promise<void>;

export interface CreateOptions {
  validate_only?: boolean;
  replication_factor?: number;
  assignment?: number[][];
}

/**
 * A manual assignment names every partition once, each with the same number of distinct replicas;
 * whether those brokers exist is the placement's to say.
 */
function check_assignment(assignment: readonly number[][], partitions: number): void {
  const problem = (message: string) => new BrokerError('invalid_replica_assignment', message);
  if (assignment.length !== partitions)
    throw problem(`${assignment.length} partitions assigned where ${partitions} are made`);
  const replicas = assignment[0]!.length;
  assignment.forEach((ids, partition) => {
    if (ids.length === 0) throw problem(`partition ${partition} has no replicas`);
    if (ids.length !== replicas)
      throw problem(`partition ${partition} has ${ids.length} replicas, partition 0 has ${replicas}`);
    if (new Set(ids).size !== ids.length) throw problem(`partition ${partition} names a broker twice: ${ids}`);
  });
}

export class TopicManager {
  private readonly by_name = new Map<string, TopicRecord>();
  private readonly by_id = new Map<string, TopicRecord>();
  private chain: Promise<unknown> = Promise.resolve();
  /** The cluster-wide topic defaults the local logs were last configured with (JSON). */
  private defaults_applied = '{}';

  constructor(
    private readonly storage: Storage,
    private readonly placement: Placement,
    private readonly clock: Clock,
    /** The cluster-wide dynamic defaults of topic configs (broker configs such as log.retention.ms). */
    readonly defaults: () => Readonly<Record<string, TopicDefault>> = () => ({}),
  ) {}

  /** A topic's configs in force: its own over the cluster-wide defaults (the built-in ones left out). */
  configs_in_force(topic: TopicRecord | undefined): TopicConfigs {
    const configs: TopicConfigs = {};
    for (const [name, { value }] of Object.entries(this.defaults())) configs[name] = value;
    return { ...configs, ...topic?.configs };
  }

  /**
   * The topics as the placement stores them: indexes them, applies changed configs to local logs,
   * and deletes the local partitions of topics that are gone. Local logs of new partitions are
   * created by ensure_log() when the placement asks for them.
   */
  async apply_view(topics: readonly TopicRecord[]): Promise<void> {
    const seen = new Set<string>();
    const defaults = JSON.stringify(this.defaults());
    const defaults_changed = defaults !== this.defaults_applied;
    this.defaults_applied = defaults;
    for (const topic of topics) {
      seen.add(topic.name);
      const known = this.by_name.get(topic.name);
      if (known && known.id !== topic.id) await this.drop_local(known);
      if (
        defaults_changed ||
        !known ||
        known.id !== topic.id ||
        JSON.stringify(known.configs) !== JSON.stringify(topic.configs)
      ) {
        const log_config = log_config_of(this.configs_in_force(topic));
        for (let p = 0; p < topic.partitions; p++) {
          const log = this.storage.partition(partition_name(topic.name, p));
          if (log) log.config = log_config;
        }
      }
      if (known) this.by_id.delete(known.id);
      this.by_name.set(topic.name, topic);
      this.by_id.set(topic.id, topic);
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

  /** The local log of a partition this broker holds, created when missing. */
  async ensure_log(topic: string, partition: number): Promise<PartitionLog> {
    const name = partition_name(topic, partition);
    const existing = this.storage.partition(name);
    if (existing) return existing;
    return this.storage.create_partition(name, log_config_of(this.configs_in_force(this.by_name.get(topic))));
  }

  /**
   * Log settings of a storage partition, from its topic's configs (used when storage opens; the
   * cluster-wide defaults apply once the topics are, apply_view).
   */
  static log_config_for(topics: readonly TopicRecord[], partition: string) {
    const dash = partition.lastIndexOf('-');
    const topic = topics.find((t) => t.name === partition.slice(0, dash));
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

  /** Whether the topic exists and has the partition. */
  has(topic: string, partition: number): boolean {
    const record = this.by_name.get(topic);
    return record !== undefined && Number.isInteger(partition) && partition >= 0 && partition < record.partitions;
  }

  /** Throws unknown_topic_or_partition unless the topic exists and has the partition. */
  check(topic: string, partition: number): void {
    if (!this.has(topic, partition)) {
      throw new BrokerError('unknown_topic_or_partition', `unknown topic or partition ${topic}-${partition}`);
    }
  }

  /** The local log of an existing partition, or undefined when this broker holds no replica of it. */
  local_log(topic: string, partition: number): PartitionLog | undefined {
    this.check(topic, partition);
    return this.storage.partition(partition_name(topic, partition));
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const next = this.chain.then(work);
    this.chain = next.catch(() => undefined);
    return next;
  }

  static validate_name(name: string): void {
    if (!TOPIC_NAME.test(name) || name === '.' || name === '..') {
      throw new BrokerError(
        'invalid_topic',
        `invalid topic name ${JSON.stringify(name)}: use 1-249 of a-z A-Z 0-9 . _ -`,
      );
    }
  }

  static validate_partition_count(partitions: number): void {
    if (!Number.isInteger(partitions) || partitions < 1 || partitions > PARTITIONS_MAX) {
      throw new BrokerError(
        'invalid_partitions',
        `partition count ${partitions} must be between 1 and ${PARTITIONS_MAX}`,
      );
    }
  }

  async create(
    name: string,
    partitions: number,
    configs: TopicConfigs = {},
    options: CreateOptions = {},
  ): Promise<TopicRecord> {
    TopicManager.validate_name(name);
    TopicManager.validate_partition_count(partitions);
    if (options.assignment) check_assignment(options.assignment, partitions);
    validate_configs(configs);
    return this.serial(async () => {
      if (this.by_name.has(name)) throw new BrokerError('topic_already_exists', `topic ${name} already exists`);
      const record: TopicRecord = {
        name,
        id: new_uuid(),
        partitions,
        configs: { ...configs },
        created_ms: this.clock.now_ms(),
      };
      if (options.validate_only) return record;
      const placement: TopicPlacement = {
        replication_factor: options.assignment?.[0]?.length ?? options.replication_factor ?? -1,
      };
      if (options.assignment) placement.assignment = options.assignment;
      await this.placement.create_topic(record, placement);
      return this.by_name.get(name) ?? record;
    });
  }

  /** create(), leaving a topic that exists alone (the broker's own topics). */
  async ensure(
    name: string,
    partitions: number,
    configs: TopicConfigs = {},
    options: CreateOptions = {},
  ): Promise<void> {
    if (this.by_name.has(name)) return;
    try {
      await this.create(name, partitions, configs, options);
    } catch (error) {
      if (!(error instanceof BrokerError && error.kind === 'topic_already_exists')) throw error;
    }
  }

  async delete(name: string): Promise<void> {
    return this.serial(async () => {
      if (!this.by_name.has(name)) throw new BrokerError('unknown_topic_or_partition', `unknown topic ${name}`);
      await this.placement.delete_topic(name);
    });
  }

  async add_partitions(
    name: string,
    total: number,
    options: { validate_only?: boolean; assignment?: number[][] } = {},
  ): Promise<void> {
    return this.serial(async () => {
      const record = this.by_name.get(name);
      if (!record) throw new BrokerError('unknown_topic_or_partition', `unknown topic ${name}`);
      TopicManager.validate_partition_count(total);
      if (total <= record.partitions) {
        throw new BrokerError(
          'invalid_partitions',
          `topic ${name} has ${record.partitions} partitions; the new count must be larger`,
        );
      }
      if (options.assignment) check_assignment(options.assignment, total - record.partitions);
      if (options.validate_only) return;
      await this.placement.update_topic(name, (stored) => ({ ...stored, partitions: total }), options.assignment);
    });
  }

  /** Replaces (or, with `merge`, updates) a topic's configs and applies them to its partitions. */
  async set_configs(
    name: string,
    configs: TopicConfigs,
    options: { validate_only?: boolean; merge?: boolean; remove?: string[] } = {},
  ): Promise<void> {
    return this.serial(async () => {
      const record = this.by_name.get(name);
      if (!record) throw new BrokerError('unknown_topic_or_partition', `unknown topic ${name}`);
      const next: TopicConfigs = options.merge ? { ...record.configs, ...configs } : { ...configs };
      for (const key of options.remove ?? []) delete next[key];
      validate_configs(next);
      if (options.validate_only) return;
      await this.placement.update_topic(name, (stored) => ({ ...stored, configs: next }));
    });
  }
}
