// The SDK's admin client: topics, partitions, records, configs, consumer groups and their committed
// offsets, and the cluster's brokers. The API follows kafkajs's admin client (method names, option
// and result shapes, offsets as strings) wherever kafkajs has the feature.
//
// Routing: topic administration goes to the controller, offsets lookups and record deletion to each
// partition's leader, group requests to the group's coordinator (FindCoordinator, cached per group),
// broker configs to that broker. Every request is retried with the cluster's backoff while its
// errors are retriable; a request about several resources (topics, partitions, groups) resends only
// the ones that failed, and the failures left are reported together in one AdminError.
import { type DeadLetter, type DeadLetterTopic, type ReadMessage, type RedriveOptions, type RedriveResult, dead_letter_of, list_dead_letter_topics, read_topic, redrive_dead_letters } from './dead_letters.ts';
import type { BrokerConnection, Cluster, TopicInfo } from './cluster.ts';
import { ConnectionError, KafkaProtocolError, SluiceError, UnsupportedApiError, check_code } from './errors.ts';
import type { Value } from '../protocol/kafka/codec.ts';
import type { RequestIn } from '../protocol/kafka/schema.ts';
import { ErrorCode } from '../protocol/kafka/error_codes.ts';
import { LIST_OFFSETS } from '../protocol/kafka/messages/02_list_offsets.ts';
import { METADATA } from '../protocol/kafka/messages/03_metadata.ts';
import { OFFSET_COMMIT } from '../protocol/kafka/messages/08_offset_commit.ts';
import { OFFSET_FETCH } from '../protocol/kafka/messages/09_offset_fetch.ts';
import { FIND_COORDINATOR } from '../protocol/kafka/messages/10_find_coordinator.ts';
import { DESCRIBE_GROUPS } from '../protocol/kafka/messages/15_describe_groups.ts';
import { LIST_GROUPS } from '../protocol/kafka/messages/16_list_groups.ts';
import { CREATE_TOPICS } from '../protocol/kafka/messages/19_create_topics.ts';
import { DELETE_TOPICS } from '../protocol/kafka/messages/20_delete_topics.ts';
import { DELETE_RECORDS } from '../protocol/kafka/messages/21_delete_records.ts';
import { DESCRIBE_CONFIGS } from '../protocol/kafka/messages/32_describe_configs.ts';
import { ALTER_CONFIGS } from '../protocol/kafka/messages/33_alter_configs.ts';
import { CREATE_PARTITIONS } from '../protocol/kafka/messages/37_create_partitions.ts';
import { DELETE_GROUPS } from '../protocol/kafka/messages/42_delete_groups.ts';
import { ALTER_PARTITION_REASSIGNMENTS } from '../protocol/kafka/messages/45_alter_partition_reassignments.ts';
import { LIST_PARTITION_REASSIGNMENTS } from '../protocol/kafka/messages/46_list_partition_reassignments.ts';
import { INCREMENTAL_ALTER_CONFIGS } from '../protocol/kafka/messages/44_incremental_alter_configs.ts';
import { DESCRIBE_CLUSTER } from '../protocol/kafka/messages/60_describe_cluster.ts';

// ---------------------------------------------------------------------------------------------
// Public types (kafkajs's names and shapes)

/** Resource types of DescribeConfigs / AlterConfigs (kafkajs's ConfigResourceTypes). */
export const ConfigResourceTypes = { UNKNOWN: 0, TOPIC: 2, BROKER: 4, BROKER_LOGGER: 8 } as const;
export type ConfigResourceType = (typeof ConfigResourceTypes)[keyof typeof ConfigResourceTypes];

/** Where a config value comes from (kafkajs's ConfigSource). */
export const ConfigSource = {
  UNKNOWN: 0,
  TOPIC_CONFIG: 1,
  DYNAMIC_BROKER_CONFIG: 2,
  DYNAMIC_DEFAULT_BROKER_CONFIG: 3,
  STATIC_BROKER_CONFIG: 4,
  DEFAULT_CONFIG: 5,
  DYNAMIC_BROKER_LOGGER_CONFIG: 6,
} as const;

/** IncrementalAlterConfigs operations (Kafka's AlterConfigOp.OpType). */
export const AlterConfigOperation = { SET: 0, DELETE: 1, APPEND: 2, SUBTRACT: 3 } as const;
export type AlterConfigOperationName = keyof typeof AlterConfigOperation;

export interface ConfigEntry {
  name: string;
  value: string;
}

export interface TopicConfig {
  topic: string;
  /** -1 or absent: the broker's default. */
  numPartitions?: number;
  /** -1 or absent: the broker's default. */
  replicationFactor?: number;
  replicaAssignment?: Array<{ partition: number; replicas: number[] }>;
  configEntries?: ConfigEntry[];
}

export interface TopicPartitionConfig {
  topic: string;
  /** The new total number of partitions. */
  count: number;
  assignments?: number[][];
}

export interface PartitionMetadata {
  partitionErrorCode: number;
  partitionId: number;
  leader: number;
  replicas: number[];
  isr: number[];
  offlineReplicas: number[];
}

export interface TopicMetadata {
  name: string;
  partitions: PartitionMetadata[];
}

/** A partition and an offset; offsets are strings as in kafkajs (numbers are accepted as input). */
export interface SeekEntry {
  partition: number;
  offset: string;
}

export interface SeekInput {
  partition: number;
  offset: string | number;
}

export interface TopicOffsets extends SeekEntry {
  high: string;
  low: string;
}

export interface FetchOffsetsPartition extends SeekEntry {
  metadata: string | null;
}

export interface ResourceConfigQuery {
  type: number;
  name: string;
  /** Absent or empty: every config of the resource. */
  configNames?: string[];
}

export interface ConfigSynonym {
  configName: string;
  configValue: string | null;
  configSource: number;
}

export interface ConfigDescription {
  configName: string;
  configValue: string | null;
  isDefault: boolean;
  configSource: number;
  isSensitive: boolean;
  readOnly: boolean;
  configSynonyms: ConfigSynonym[];
}

export interface DescribeConfigResponse {
  resources: Array<{
    configEntries: ConfigDescription[];
    errorCode: number;
    errorMessage: string | null;
    resourceName: string;
    resourceType: number;
  }>;
  throttleTime: number;
}

export interface ResourceConfig {
  type: number;
  name: string;
  configEntries: ConfigEntry[];
}

export interface IncrementalConfigEntry {
  name: string;
  /** Ignored (may be absent) for DELETE. */
  value?: string | null;
  operation: AlterConfigOperationName | number;
}

export interface IncrementalResourceConfig {
  type: number;
  name: string;
  configEntries: IncrementalConfigEntry[];
}

export interface AlterConfigsResponse {
  resources: Array<{ errorCode: number; errorMessage: string | null; resourceName: string; resourceType: number }>;
  throttleTime: number;
}

export interface GroupOverview {
  groupId: string;
  protocolType: string;
}

export interface MemberDescription {
  memberId: string;
  groupInstanceId: string | null;
  clientId: string;
  clientHost: string;
  /** The member's subscription as it sent it in JoinGroup (for consumers: ConsumerProtocolSubscription). */
  memberMetadata: Buffer;
  /** The member's assignment from SyncGroup (for consumers: ConsumerProtocolAssignment). */
  memberAssignment: Buffer;
}

export type GroupState = 'Unknown' | 'PreparingRebalance' | 'CompletingRebalance' | 'Stable' | 'Dead' | 'Empty';

export interface GroupDescription {
  groupId: string;
  members: MemberDescription[];
  protocol: string;
  protocolType: string;
  state: GroupState;
  errorCode: number;
}

export interface DeleteGroupsResult {
  groupId: string;
  errorCode: number;
}

/** Partitions being moved: all replicas now, and those that join or leave when the move ends. */
export interface PartitionReassignments {
  topics: Array<{ topic: string; partitions: Array<{ partition: number; replicas: number[]; addingReplicas: number[]; removingReplicas: number[] }> }>;
}

export interface ClusterDescription {
  brokers: Array<{ nodeId: number; host: string; port: number }>;
  controller: number | null;
  clusterId: string;
}

/** One resource an admin request failed for. */
export interface AdminFailure {
  /** What failed: `topic "orders"`, `partition 3 of "orders"`, `group "billing"`, `broker "1"`. */
  resource: string;
  /** The broker's error code; null when the request itself failed (connection lost, no answer). */
  code: number | null;
  /** Kafka's name of the code (UNKNOWN_TOPIC_OR_PARTITION), or the error's class for code null. */
  type: string;
  /** The broker's error message, or the request's error. */
  message: string | null;
  retriable: boolean;
  /** The thrown error, for a failure of the request itself (code null) or of a nested lookup. */
  cause?: unknown;
}

/**
 * An admin request failed for one or more resources. `code` and `type` are those of the first
 * failure that is not retriable (else of the first failure); `failures` names every failure.
 */
export class AdminError extends KafkaProtocolError {
  readonly failures: AdminFailure[];

  constructor(operation: string, failures: AdminFailure[]) {
    const coded = failures.filter((f) => f.code !== null);
    if (coded.length === 0) throw new RangeError('an AdminError needs at least one failure with a Kafka error code');
    const primary = coded.find((f) => !f.retriable) ?? coded[0]!;
    super(primary.code!, operation, primary.message);
    this.failures = failures;
    const describe = (f: AdminFailure) => `${f.resource}: ${f.type}${f.code !== null ? ` (${f.code})` : ''}${f.message ? `: ${f.message}` : ''}`;
    this.message = failures.length === 1 ? `${operation} ${describe(failures[0]!)}` : `${operation} failed for ${failures.length} resources: ${failures.map(describe).join('; ')}`;
    // Retriable only when every failure is (the retry then resends just the failed resources).
    Object.defineProperty(this, 'retriable', { value: failures.every((f) => f.retriable), enumerable: true });
  }
}

// ---------------------------------------------------------------------------------------------
// Internals

type Row = Record<string, unknown>;

function rows(value: unknown): Row[] {
  return (value ?? []) as Row[];
}

const LATEST = -1;
const EARLIEST = -2;
const NO_NODE = -1;
const TIMEOUT_MS_DEFAULT = 5_000;
const WAIT_POLL_MS = 100;
const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';
const NAMES = new Map<number, string>(Object.entries(ErrorCode).map(([name, code]) => [code, name]));
/** Codes after which cached partition leaders are stale. */
const LEADER_CODES = new Set<number>([ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.LEADER_NOT_AVAILABLE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 74, ErrorCode.UNKNOWN_LEADER_EPOCH]);
/** Codes after which a cached group coordinator is stale. */
const COORDINATOR_CODES = new Set<number>([ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE]);

function code_retriable(code: number): boolean {
  return new KafkaProtocolError(code, '').retriable;
}

/** A failure with a broker code; codes in `final` are not retried for this request. */
function coded_failure(resource: string, code: number, message: string | null, final: readonly number[] = []): AdminFailure {
  return { resource, code, type: NAMES.get(code) ?? `ERROR_${code}`, message, retriable: code_retriable(code) && !final.includes(code) };
}

/** A failure from a thrown error (a KafkaProtocolError keeps its code). */
function thrown_failure(resource: string, error: unknown, final: readonly number[] = []): AdminFailure {
  if (error instanceof KafkaProtocolError) return { ...coded_failure(resource, error.code, error.message, final), cause: error };
  const retriable = error instanceof SluiceError ? error.retriable : false;
  return { resource, code: null, type: error instanceof Error ? error.name : 'Error', message: error instanceof Error ? error.message : String(error), retriable, cause: error };
}

const no_answer = (resource: string): AdminFailure => coded_failure(resource, ErrorCode.UNKNOWN_SERVER_ERROR, 'the response has no result for it');

const topic_label = (name: string) => `topic ${JSON.stringify(name)}`;
const partition_label = (topic: string, partition: number) => `partition ${partition} of ${JSON.stringify(topic)}`;
const group_label = (group: string) => `group ${JSON.stringify(group)}`;
const resource_label = (type: number, name: string) =>
  `${type === ConfigResourceTypes.TOPIC ? 'topic' : type === ConfigResourceTypes.BROKER ? 'broker' : type === ConfigResourceTypes.BROKER_LOGGER ? 'broker logger' : `resource type ${type}`} ${JSON.stringify(name)}`;

function invalid(message: string): SluiceError {
  return new SluiceError(message, false);
}

function parse_offset(value: string | number, what: string): number {
  const offset = typeof value === 'number' ? value : /^-?\d+$/.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isSafeInteger(offset) || offset < EARLIEST) throw invalid(`${what}: offset ${JSON.stringify(value)} is not an offset (a non-negative integer, -1 for latest or -2 for earliest)`);
  return offset;
}

function group_by<T, K>(items: readonly T[], key: (item: T) => K): Map<K, T[]> {
  const groups = new Map<K, T[]>();
  for (const item of items) {
    const k = key(item);
    let list = groups.get(k);
    if (!list) groups.set(k, (list = []));
    list.push(item);
  }
  return groups;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** What one round of a request reports per resource: null when done, else why it failed. */
type Outcomes<K> = Map<K, AdminFailure | null>;

export class Admin {
  /** Group id → node id of its coordinator. */
  private readonly coordinators = new Map<string, number>();

  /** The admin owns `cluster`: disconnect() closes it. */
  constructor(private readonly cluster: Cluster) {}

  /** Connects to a bootstrap broker and reads the cluster's brokers and controller. */
  async connect(): Promise<void> {
    await this.cluster.with_retry('connect', () => this.cluster.refresh_metadata([]));
  }

  /** Closes every connection; the admin (and its cluster) cannot be used afterwards. */
  async disconnect(): Promise<void> {
    this.coordinators.clear();
    await this.cluster.close();
  }

  // -------------------------------------------------------------------------------------------
  // Topics

  /**
   * Creates topics. Resolves true when every topic was created, false when some already existed
   * (the others are created); other failures throw an AdminError naming each topic. With
   * `waitForLeaders` (the default) it waits, at most `timeout` ms, until metadata shows a leader for
   * every partition.
   */
  async createTopics(options: { topics: TopicConfig[]; validateOnly?: boolean; waitForLeaders?: boolean; timeout?: number }): Promise<boolean> {
    const topics = options?.topics;
    if (!Array.isArray(topics)) throw invalid('createTopics: topics must be an array');
    if (topics.some((t) => typeof t?.topic !== 'string')) throw invalid('createTopics: each topic needs a name (topic)');
    if (new Set(topics.map((t) => t.topic)).size < topics.length) throw invalid('createTopics: a topic is listed more than once');
    for (const t of topics) {
      if (t.configEntries !== undefined && (!Array.isArray(t.configEntries) || t.configEntries.some((e) => typeof e?.name !== 'string' || typeof e?.value !== 'string'))) {
        throw invalid(`createTopics: configEntries of topic ${JSON.stringify(t.topic)} must be an array of { name, value } strings`);
      }
    }
    if (topics.length === 0) return true;
    const timeout = options.timeout ?? TIMEOUT_MS_DEFAULT;
    const by_name = new Map(topics.map((t) => [t.topic, t]));
    let existed = false;
    await this.retry_pending('CreateTopics', [...by_name.keys()], async (pending) => {
      const controller = await this.cluster.controller();
      const { response } = await controller.send(CREATE_TOPICS, 0, 7, {
        topics: pending.map((name) => {
          const t = by_name.get(name)!;
          return {
            name,
            num_partitions: t.numPartitions ?? -1,
            replication_factor: t.replicationFactor ?? -1,
            assignments: (t.replicaAssignment ?? []).map((a) => ({ partition_index: a.partition, broker_ids: a.replicas })),
            configs: (t.configEntries ?? []).map((e) => ({ name: e.name, value: e.value })),
          };
        }),
        timeout_ms: timeout,
        validate_only: Boolean(options.validateOnly),
      });
      const outcomes: Outcomes<string> = new Map();
      for (const result of rows(response.topics)) {
        const name = result.name as string;
        const code = result.error_code as number;
        if (code === ErrorCode.TOPIC_ALREADY_EXISTS) existed = true;
        outcomes.set(name, code === ErrorCode.NONE || code === ErrorCode.TOPIC_ALREADY_EXISTS ? null : coded_failure(topic_label(name), code, result.error_message as string | null, [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]));
      }
      return outcomes;
    }, topic_label);
    for (const name of by_name.keys()) this.cluster.topics.delete(name);
    if (options.waitForLeaders !== false && !options.validateOnly) await this.wait_for_leaders([...by_name.keys()], timeout);
    return !existed;
  }

  /** Names of every topic in the cluster (internal ones included, as kafkajs lists them). */
  async listTopics(): Promise<string[]> {
    const topics = await this.metadata(null);
    return topics.map((t) => t.name);
  }

  /** Partitions, leaders and replicas of `topics` (of every topic when absent or empty). */
  async fetchTopicMetadata(options: { topics?: string[] } = {}): Promise<{ topics: TopicMetadata[] }> {
    const wanted = options.topics ?? [];
    if (!Array.isArray(wanted) || wanted.some((t) => typeof t !== 'string' || t === '')) throw invalid('fetchTopicMetadata: topics must be an array of topic names');
    return { topics: await this.metadata(wanted.length === 0 ? null : wanted) };
  }

  /** Deletes topics; a topic that does not exist fails with UNKNOWN_TOPIC_OR_PARTITION. */
  async deleteTopics(options: { topics: string[]; timeout?: number }): Promise<void> {
    const topics = options?.topics;
    if (!Array.isArray(topics) || topics.some((t) => typeof t !== 'string')) throw invalid('deleteTopics: topics must be an array of topic names');
    if (topics.length === 0) return;
    const timeout = options.timeout ?? TIMEOUT_MS_DEFAULT;
    await this.retry_pending('DeleteTopics', [...new Set(topics)], async (pending) => {
      const controller = await this.cluster.controller();
      const { response } = await controller.send(DELETE_TOPICS, 0, 6, (version) =>
        version >= 6 ? { topics: pending.map((name) => ({ name, topic_id: ZERO_UUID })), timeout_ms: timeout } : { topic_names: pending, timeout_ms: timeout },
      );
      const outcomes: Outcomes<string> = new Map();
      for (const result of rows(response.responses)) {
        const name = result.name as string;
        const code = result.error_code as number;
        outcomes.set(name, code === ErrorCode.NONE ? null : coded_failure(topic_label(name), code, (result.error_message as string | null) ?? null, [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]));
      }
      return outcomes;
    }, topic_label);
    for (const name of topics) this.cluster.topics.delete(name);
  }

  /** Raises the partition count of topics to `count`. */
  async createPartitions(options: { topicPartitions: TopicPartitionConfig[]; validateOnly?: boolean; timeout?: number }): Promise<void> {
    const list = options?.topicPartitions;
    if (!Array.isArray(list) || list.length === 0) throw invalid('createPartitions: topicPartitions must be a non-empty array');
    if (list.some((t) => typeof t?.topic !== 'string' || !Number.isInteger(t.count))) throw invalid('createPartitions: each entry needs a topic name and an integer count');
    const by_name = new Map(list.map((t) => [t.topic, t]));
    if (by_name.size < list.length) throw invalid('createPartitions: a topic is listed more than once');
    const timeout = options.timeout ?? TIMEOUT_MS_DEFAULT;
    await this.retry_pending('CreatePartitions', [...by_name.keys()], async (pending) => {
      const controller = await this.cluster.controller();
      const { response } = await controller.send(CREATE_PARTITIONS, 0, 3, {
        topics: pending.map((name) => {
          const t = by_name.get(name)!;
          return { name, count: t.count, assignments: t.assignments ? t.assignments.map((broker_ids) => ({ broker_ids })) : null };
        }),
        timeout_ms: timeout,
        validate_only: Boolean(options.validateOnly),
      });
      const outcomes: Outcomes<string> = new Map();
      for (const result of rows(response.results)) {
        const name = result.name as string;
        const code = result.error_code as number;
        outcomes.set(name, code === ErrorCode.NONE ? null : coded_failure(topic_label(name), code, (result.error_message as string | null) ?? null, [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]));
      }
      return outcomes;
    }, topic_label);
    for (const name of by_name.keys()) this.cluster.topics.delete(name);
  }

  /** Each partition's high watermark (`offset` and `high`) and log start offset (`low`). */
  async fetchTopicOffsets(topic: string): Promise<TopicOffsets[]> {
    if (typeof topic !== 'string' || topic === '') throw invalid(`fetchTopicOffsets: invalid topic ${JSON.stringify(topic)}`);
    const partitions = (await this.topic_info(topic)).partitions.map((p) => p.partition);
    const [high, low] = await Promise.all([this.list_offsets(topic, partitions, () => LATEST), this.list_offsets(topic, partitions, () => EARLIEST)]);
    return partitions.map((partition) => {
      const h = String(high.get(partition)!);
      return { partition, offset: h, high: h, low: String(low.get(partition)!) };
    });
  }

  /**
   * Each partition's first offset whose timestamp is at or after `timestamp` (ms), or its high
   * watermark when there is none; without a timestamp, the high watermark.
   */
  async fetchTopicOffsetsByTimestamp(topic: string, timestamp?: number): Promise<SeekEntry[]> {
    if (typeof topic !== 'string' || topic === '') throw invalid(`fetchTopicOffsetsByTimestamp: invalid topic ${JSON.stringify(topic)}`);
    if (timestamp !== undefined && (!Number.isSafeInteger(timestamp) || timestamp < 0)) throw invalid(`fetchTopicOffsetsByTimestamp: invalid timestamp ${timestamp}`);
    const partitions = (await this.topic_info(topic)).partitions.map((p) => p.partition);
    const high = await this.list_offsets(topic, partitions, () => LATEST);
    const found = timestamp === undefined ? high : await this.list_offsets(topic, partitions, () => timestamp);
    return partitions.map((partition) => {
      const offset = found.get(partition)!;
      return { partition, offset: String(offset >= 0 ? offset : high.get(partition)!) };
    });
  }

  /**
   * Deletes the records before `offset` in each partition (moves its log start offset); offset -1
   * means the high watermark (everything written so far).
   */
  async deleteTopicRecords(options: { topic: string; partitions: SeekInput[]; timeout?: number }): Promise<void> {
    const topic = options?.topic;
    if (typeof topic !== 'string' || topic === '') throw invalid(`deleteTopicRecords: invalid topic ${JSON.stringify(topic)}`);
    if (!Array.isArray(options.partitions) || options.partitions.length === 0) throw invalid('deleteTopicRecords: partitions must be a non-empty array');
    const offsets = new Map<number, number>();
    for (const { partition, offset } of options.partitions) {
      const value = parse_offset(offset, `deleteTopicRecords ${partition_label(topic, partition)}`);
      if (value === EARLIEST) throw invalid(`deleteTopicRecords ${partition_label(topic, partition)}: offset -2 is not valid here (-1 means the high watermark)`);
      offsets.set(partition, value);
    }
    await this.check_partitions('DeleteRecords', topic, [...offsets.keys()]);
    const timeout = options.timeout ?? TIMEOUT_MS_DEFAULT;
    await this.on_leaders('DeleteRecords', topic, [...offsets.keys()], async (connection, partitions) => {
      const { response } = await connection.send(DELETE_RECORDS, 0, 2, {
        topics: [{ name: topic, partitions: partitions.map((partition_index) => ({ partition_index, offset: offsets.get(partition_index)! })) }],
        timeout_ms: timeout,
      });
      return this.partition_outcomes(topic, response.topics);
    });
  }

  // -------------------------------------------------------------------------------------------
  // Configs

  /** Configs of topics (or brokers); `configNames` absent or empty means all of them. */
  async describeConfigs(options: { resources: ResourceConfigQuery[]; includeSynonyms?: boolean }): Promise<DescribeConfigResponse> {
    const resources = options?.resources;
    this.check_resources('describeConfigs', resources);
    if (resources.some((r) => r.configNames != null && !Array.isArray(r.configNames))) throw invalid('describeConfigs: configNames must be an array');
    const include_synonyms = Boolean(options.includeSynonyms);
    const results = new Map<number, Row>();
    let throttle = 0;
    await this.on_config_targets('DescribeConfigs', resources, async (connection, indexes) => {
      const { version, response } = await connection.send(DESCRIBE_CONFIGS, 0, 4, {
        resources: indexes.map((i) => ({
          resource_type: resources[i]!.type,
          resource_name: resources[i]!.name,
          configuration_keys: resources[i]!.configNames?.length ? resources[i]!.configNames : null,
        })),
        include_synonyms,
        include_documentation: false,
      });
      throttle = Math.max(throttle, response.throttle_time_ms as number);
      return this.resource_outcomes(resources, indexes, rows(response.results), (i, row) => results.set(i, { ...row, version }));
    });
    return {
      resources: resources.map((_, i) => {
        const row = results.get(i)!;
        return {
          configEntries: rows(row.configs).map((c) => {
            const source = row.version === 0 ? (c.is_default ? ConfigSource.DEFAULT_CONFIG : ConfigSource.UNKNOWN) : (c.config_source as number);
            return {
              configName: c.name as string,
              configValue: c.value as string | null,
              isDefault: row.version === 0 ? Boolean(c.is_default) : source === ConfigSource.DEFAULT_CONFIG,
              configSource: source,
              isSensitive: Boolean(c.is_sensitive),
              readOnly: Boolean(c.read_only),
              configSynonyms: rows(c.synonyms).map((s) => ({ configName: s.name as string, configValue: s.value as string | null, configSource: s.source as number })),
            };
          }),
          errorCode: row.error_code as number,
          errorMessage: (row.error_message as string | null) ?? null,
          resourceName: row.resource_name as string,
          resourceType: row.resource_type as number,
        };
      }),
      throttleTime: throttle,
    };
  }

  /**
   * Replaces the whole set of dynamic configs of each resource (AlterConfigs): keys left out go back
   * to their defaults. To change single keys, use incrementalAlterConfigs.
   */
  async alterConfigs(options: { resources: ResourceConfig[]; validateOnly?: boolean }): Promise<AlterConfigsResponse> {
    const resources = options?.resources;
    this.check_resources('alterConfigs', resources);
    for (const r of resources) {
      if (!Array.isArray(r.configEntries) || r.configEntries.some((e) => typeof e?.name !== 'string' || typeof e?.value !== 'string')) {
        throw invalid(`alterConfigs: configEntries of ${resource_label(r.type, r.name)} must be an array of { name, value } strings`);
      }
    }
    return this.alter('AlterConfigs', ALTER_CONFIGS, 2, resources, (r) => r.configEntries.map((e) => ({ name: e.name, value: e.value })), Boolean(options.validateOnly));
  }

  /** Sets or deletes single config keys (IncrementalAlterConfigs), leaving the others as they are. */
  async incrementalAlterConfigs(options: { resources: IncrementalResourceConfig[]; validateOnly?: boolean }): Promise<AlterConfigsResponse> {
    const resources = options?.resources;
    this.check_resources('incrementalAlterConfigs', resources);
    const operation_of = (e: IncrementalConfigEntry): number => {
      const op = typeof e.operation === 'number' ? e.operation : AlterConfigOperation[e.operation];
      if (!Object.values(AlterConfigOperation).includes(op as never)) throw invalid(`incrementalAlterConfigs: unknown operation ${JSON.stringify(e.operation)} for ${e.name}`);
      if (op !== AlterConfigOperation.DELETE && typeof e.value !== 'string') throw invalid(`incrementalAlterConfigs: ${e.name} needs a string value`);
      return op;
    };
    for (const r of resources) {
      if (!Array.isArray(r.configEntries) || r.configEntries.some((e) => typeof e?.name !== 'string')) throw invalid(`incrementalAlterConfigs: configEntries of ${resource_label(r.type, r.name)} must be an array of { name, value, operation }`);
      r.configEntries.forEach(operation_of);
    }
    return this.alter(
      'IncrementalAlterConfigs',
      INCREMENTAL_ALTER_CONFIGS,
      1,
      resources,
      (r) => r.configEntries.map((e) => ({ name: e.name, config_operation: operation_of(e), value: operation_of(e) === AlterConfigOperation.DELETE ? null : e.value })),
      Boolean(options.validateOnly),
    );
  }

  // -------------------------------------------------------------------------------------------
  // Groups

  /** Every group of every broker. */
  async listGroups(): Promise<{ groups: GroupOverview[] }> {
    await this.cluster.with_retry('metadata', () => this.cluster.refresh_metadata([]));
    const nodes = [...this.cluster.brokers.keys()].sort((a, b) => a - b);
    const lists = await Promise.all(
      nodes.map((node_id) =>
        this.cluster.with_retry('ListGroups', async () => {
          const connection = await this.cluster.node(node_id);
          const { response } = await connection.send(LIST_GROUPS, 0, 5, { states_filter: [], types_filter: [] });
          const code = response.error_code as number;
          if (code !== ErrorCode.NONE) throw new AdminError('ListGroups', [coded_failure(`broker ${node_id}`, code, null)]);
          return rows(response.groups).map((g) => ({ groupId: g.group_id as string, protocolType: g.protocol_type as string }));
        }),
      ),
    );
    return { groups: lists.flat() };
  }

  /**
   * State, protocol and members (with their metadata and assignment bytes) of each group; a group
   * that does not exist is described as state Dead without members.
   */
  async describeGroups(groupIds: string[]): Promise<{ groups: GroupDescription[] }> {
    this.check_group_ids('describeGroups', groupIds);
    const found = new Map<string, GroupDescription>();
    await this.on_coordinators('DescribeGroups', [...new Set(groupIds)], async (connection, groups) => {
      const { response } = await connection.send(DESCRIBE_GROUPS, 0, 6, { groups, include_authorized_operations: false });
      const outcomes: Outcomes<string> = new Map();
      for (const g of rows(response.groups)) {
        const group_id = g.group_id as string;
        const code = g.error_code as number;
        if (code === ErrorCode.GROUP_ID_NOT_FOUND) {
          // DescribeGroups v6 (Kafka 4) reports an unknown group so; earlier versions as state Dead.
          outcomes.set(group_id, null);
          found.set(group_id, { groupId: group_id, members: [], protocol: '', protocolType: '', state: 'Dead', errorCode: ErrorCode.NONE });
          continue;
        }
        if (code !== ErrorCode.NONE) {
          outcomes.set(group_id, coded_failure(group_label(group_id), code, (g.error_message as string | null) ?? null));
          continue;
        }
        outcomes.set(group_id, null);
        found.set(group_id, {
          groupId: group_id,
          members: rows(g.members).map((m) => ({
            memberId: m.member_id as string,
            groupInstanceId: (m.group_instance_id as string | null) ?? null,
            clientId: m.client_id as string,
            clientHost: m.client_host as string,
            memberMetadata: Buffer.from(m.member_metadata as Buffer),
            memberAssignment: Buffer.from(m.member_assignment as Buffer),
          })),
          protocol: g.protocol_data as string,
          protocolType: g.protocol_type as string,
          state: g.group_state as GroupState,
          errorCode: code,
        });
      }
      return outcomes;
    });
    return { groups: groupIds.map((id) => found.get(id)!) };
  }

  /**
   * Deletes groups and their committed offsets. A group with members fails with NON_EMPTY_GROUP, an
   * unknown one with GROUP_ID_NOT_FOUND; the others are deleted and the error names each failure.
   */
  async deleteGroups(groupIds: string[]): Promise<DeleteGroupsResult[]> {
    this.check_group_ids('deleteGroups', groupIds);
    const ids = [...new Set(groupIds)];
    await this.on_coordinators('DeleteGroups', ids, async (connection, groups) => {
      const { response } = await connection.send(DELETE_GROUPS, 0, 2, { groups_names: groups });
      const outcomes: Outcomes<string> = new Map();
      for (const r of rows(response.results)) {
        const code = r.error_code as number;
        outcomes.set(r.group_id as string, code === ErrorCode.NONE ? null : coded_failure(group_label(r.group_id as string), code, null));
      }
      return outcomes;
    });
    for (const id of ids) this.coordinators.delete(id);
    return ids.map((groupId) => ({ groupId, errorCode: ErrorCode.NONE }));
  }

  /**
   * A group's committed offsets: for each topic in `topics`, every partition ('-1' where nothing is
   * committed); without `topics`, every partition the group has committed.
   */
  async fetchOffsets(options: { groupId: string; topics?: string[] }): Promise<Array<{ topic: string; partitions: FetchOffsetsPartition[] }>> {
    const group_id = options?.groupId;
    if (typeof group_id !== 'string' || group_id === '') throw invalid(`fetchOffsets: invalid groupId ${JSON.stringify(group_id)}`);
    const topics = options.topics ?? [];
    if (!Array.isArray(topics) || topics.some((t) => typeof t !== 'string' || t === '')) throw invalid('fetchOffsets: topics must be an array of topic names');
    const wanted =
      topics.length === 0 ? null : await Promise.all([...new Set(topics)].map(async (name) => ({ name, partition_indexes: (await this.topic_info(name)).partitions.map((p) => p.partition) })));
    const result = await this.on_coordinator('OffsetFetch', group_id, async (connection) => {
      const { version, response } = await connection.send(OFFSET_FETCH, wanted === null ? 2 : 1, 9, (v) =>
        v >= 8 ? { groups: [{ group_id, member_id: null, member_epoch: -1, topics: wanted }], require_stable: false } : { group_id, topics: wanted, require_stable: false },
      );
      const group = version >= 8 ? rows(response.groups).find((g) => g.group_id === group_id) : response;
      if (!group) throw new AdminError('OffsetFetch', [no_answer(group_label(group_id))]);
      const code = group.error_code as number;
      if (code !== ErrorCode.NONE) throw new AdminError('OffsetFetch', [coded_failure(group_label(group_id), code, null)]);
      const failures: AdminFailure[] = [];
      const out = rows(group.topics).map((t) => ({
        topic: t.name as string,
        partitions: rows(t.partitions)
          .map((p) => {
            const partition_code = p.error_code as number;
            if (partition_code !== ErrorCode.NONE) failures.push(coded_failure(partition_label(t.name as string, p.partition_index as number), partition_code, null));
            return { partition: p.partition_index as number, offset: String(p.committed_offset), metadata: (p.metadata as string | null) || null };
          })
          .sort((a, b) => a.partition - b.partition),
      }));
      if (failures.length > 0) throw new AdminError('OffsetFetch', failures);
      return out;
    });
    if (wanted === null) return result.sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0));
    return wanted.map(({ name }) => result.find((t) => t.topic === name) ?? { topic: name, partitions: [] });
  }

  /**
   * Commits each partition of `topic` for `groupId` at its log start offset (`earliest`) or high
   * watermark: concrete offsets, read with ListOffsets. Refused while the group has members.
   */
  async resetOffsets(options: { groupId: string; topic: string; earliest?: boolean }): Promise<void> {
    const { groupId: group_id, topic } = options ?? ({} as { groupId: string; topic: string });
    if (typeof group_id !== 'string' || group_id === '') throw invalid(`resetOffsets: invalid groupId ${JSON.stringify(group_id)}`);
    if (typeof topic !== 'string' || topic === '') throw invalid(`resetOffsets: invalid topic ${JSON.stringify(topic)}`);
    await this.refuse_if_active('resetOffsets', group_id);
    const partitions = (await this.topic_info(topic)).partitions.map((p) => p.partition);
    const offsets = await this.list_offsets(topic, partitions, () => (options.earliest ? EARLIEST : LATEST));
    await this.commit_offsets(group_id, topic, offsets);
  }

  /**
   * Commits the given offsets for `groupId` (-1 and -2 are resolved to the high watermark and the
   * log start offset first, so the committed offsets are concrete). Refused while the group has
   * members.
   */
  async setOffsets(options: { groupId: string; topic: string; partitions: SeekInput[] }): Promise<void> {
    const { groupId: group_id, topic, partitions } = options ?? ({} as { groupId: string; topic: string; partitions: SeekInput[] });
    if (typeof group_id !== 'string' || group_id === '') throw invalid(`setOffsets: invalid groupId ${JSON.stringify(group_id)}`);
    if (typeof topic !== 'string' || topic === '') throw invalid(`setOffsets: invalid topic ${JSON.stringify(topic)}`);
    if (!Array.isArray(partitions) || partitions.length === 0) throw invalid('setOffsets: partitions must be a non-empty array');
    const offsets = new Map<number, number>();
    for (const { partition, offset } of partitions) offsets.set(partition, parse_offset(offset, `setOffsets ${partition_label(topic, partition)}`));
    await this.refuse_if_active('setOffsets', group_id);
    await this.check_partitions('OffsetCommit', topic, [...offsets.keys()]);
    const special = [...offsets].filter(([, offset]) => offset < 0).map(([partition]) => partition);
    if (special.length > 0) {
      const resolved = await this.list_offsets(topic, special, (partition) => offsets.get(partition)!);
      for (const [partition, offset] of resolved) offsets.set(partition, offset);
    }
    await this.commit_offsets(group_id, topic, offsets);
  }

  // -------------------------------------------------------------------------------------------
  // Cluster

  // -------------------------------------------------------------------------------------------
  // Dead letters of share groups

  /** The dead-letter topics (`<topic>.<group>.dlq`) and how many messages each holds. */
  listDeadLetterTopics(): Promise<DeadLetterTopic[]> {
    return list_dead_letter_topics(this);
  }

  /** Up to `max` dead letters of a dead-letter topic, oldest first, with where they came from and why. */
  async peekDeadLetters(topic: string, options: { max?: number } = {}): Promise<DeadLetter[]> {
    return (await read_topic(this.cluster, this, topic, options.max ?? 100)).map(dead_letter_of);
  }

  /**
   * Sends dead letters back to their origin topic (or `to`); each is recorded in `sluice.dlq.audit`
   * and is never sent twice, however often this is called.
   */
  redriveDeadLetters(options: RedriveOptions): Promise<RedriveResult> {
    return redrive_dead_letters(this.cluster, this, options);
  }

  /** Every message of a topic from its start to its end as of now (a broadcast read; exports). */
  readTopic(topic: string, options: { max?: number; onRead?: (count: number) => void } = {}): Promise<ReadMessage[]> {
    return read_topic(this.cluster, this, topic, options.max ?? Infinity, options.onRead);
  }

  /**
   * Moves partitions to new replica sets, preferred leader first (AlterPartitionReassignments). The
   * new replicas copy the partition; it switches to them once all are in sync. `replicas: null`
   * cancels a move in progress. Any broker of a cluster takes the request.
   */
  async alterPartitionReassignments(options: { topics: Array<{ topic: string; partitions: Array<{ partition: number; replicas: number[] | null }> }> }): Promise<void> {
    const topics = options?.topics;
    if (!Array.isArray(topics) || topics.length === 0) throw invalid('alterPartitionReassignments: topics must be a non-empty array');
    for (const t of topics) {
      if (typeof t?.topic !== 'string' || !Array.isArray(t.partitions)) throw invalid('alterPartitionReassignments: each entry needs a topic and partitions');
      for (const p of t.partitions) {
        if (!Number.isInteger(p?.partition) || (p.replicas !== null && (!Array.isArray(p.replicas) || p.replicas.some((id) => !Number.isInteger(id))))) {
          throw invalid(`alterPartitionReassignments: ${t.topic}: each partition needs a partition number and replicas (node ids, or null to cancel)`);
        }
      }
    }
    await this.cluster.with_retry('AlterPartitionReassignments', async () => {
      const connection = await this.cluster.any();
      const { response } = await connection.send(ALTER_PARTITION_REASSIGNMENTS, 0, 0, {
        timeout_ms: 60_000,
        topics: topics.map((t) => ({ name: t.topic, partitions: t.partitions.map((p) => ({ partition_index: p.partition, replicas: p.replicas })) })),
      });
      check_code(response.error_code as number, 'AlterPartitionReassignments', response.error_message as string | null);
      for (const t of rows(response.responses)) {
        for (const p of rows(t.partitions)) {
          check_code(p.error_code as number, `reassigning ${t.name as string}-${p.partition_index as number}`, p.error_message as string | null);
        }
      }
    });
  }

  /**
   * The reassignments in progress (ListPartitionReassignments): for the partitions given, or for
   * all when `topics` is left out. Partitions not being moved are not listed.
   */
  async listPartitionReassignments(options: { topics?: Array<{ topic: string; partitions: number[] }> } = {}): Promise<PartitionReassignments> {
    const topics = options.topics ?? null;
    if (topics !== null && (!Array.isArray(topics) || topics.some((t) => typeof t?.topic !== 'string' || !Array.isArray(t.partitions) || t.partitions.some((p) => !Number.isInteger(p))))) {
      throw invalid('listPartitionReassignments: topics must be an array of { topic, partitions: [numbers] }');
    }
    return this.cluster.with_retry('ListPartitionReassignments', async () => {
      const connection = await this.cluster.any();
      const { response } = await connection.send(LIST_PARTITION_REASSIGNMENTS, 0, 0, {
        timeout_ms: 60_000,
        topics: topics === null ? null : topics.map((t) => ({ name: t.topic, partition_indexes: t.partitions })),
      });
      check_code(response.error_code as number, 'ListPartitionReassignments', response.error_message as string | null);
      return {
        topics: rows(response.topics).map((t) => ({
          topic: t.name as string,
          partitions: rows(t.partitions).map((p) => ({
            partition: p.partition_index as number,
            replicas: p.replicas as number[],
            addingReplicas: p.adding_replicas as number[],
            removingReplicas: p.removing_replicas as number[],
          })),
        })),
      };
    });
  }

  /** The brokers, the controller and the cluster id (DescribeCluster, or Metadata on older brokers). */
  async describeCluster(): Promise<ClusterDescription> {
    return this.cluster.with_retry('DescribeCluster', async () => {
      const connection = await this.cluster.any();
      let response: Value;
      try {
        response = (await connection.send(DESCRIBE_CLUSTER, 0, 2, { include_cluster_authorized_operations: false, endpoint_type: 1, include_fenced_brokers: false })).response;
      } catch (error) {
        if (!(error instanceof UnsupportedApiError)) throw error;
        await this.cluster.refresh_metadata([]);
        return {
          brokers: [...this.cluster.brokers.values()].map((b) => ({ nodeId: b.node_id, host: b.host, port: b.port })).sort((a, b) => a.nodeId - b.nodeId),
          controller: this.cluster.controller_id < 0 ? null : this.cluster.controller_id,
          clusterId: this.cluster.cluster_id ?? '',
        };
      }
      const code = response.error_code as number;
      if (code !== ErrorCode.NONE) throw new KafkaProtocolError(code, 'DescribeCluster', response.error_message as string | null);
      const controller = response.controller_id as number;
      return {
        brokers: rows(response.brokers)
          .map((b) => ({ nodeId: b.broker_id as number, host: b.host as string, port: b.port as number }))
          .sort((a, b) => a.nodeId - b.nodeId),
        controller: controller < 0 ? null : controller,
        clusterId: response.cluster_id as string,
      };
    });
  }

  // -------------------------------------------------------------------------------------------
  // Request plumbing

  /**
   * Runs rounds of a request about several resources until each has succeeded: `round(pending)`
   * reports an outcome per resource; retriable failures are sent again after the cluster's backoff,
   * the others (or the retriable ones once retries run out) are thrown as one AdminError.
   */
  private async retry_pending<K>(operation: string, keys: K[], round: (pending: K[]) => Promise<Outcomes<K>>, label: (key: K) => string = String): Promise<void> {
    let pending = keys;
    await this.cluster.with_retry(operation, async () => {
      let outcomes: Outcomes<K>;
      try {
        outcomes = await round(pending);
      } catch (error) {
        this.forget_routes(error instanceof AdminError ? error.failures.map((f) => f.code ?? ErrorCode.NONE) : error instanceof KafkaProtocolError ? [error.code] : [], error instanceof ConnectionError);
        throw error;
      }
      const failures: AdminFailure[] = [];
      pending = pending.filter((key) => {
        const outcome = outcomes.has(key) ? outcomes.get(key)! : no_answer(label(key));
        if (outcome !== null) failures.push(outcome);
        return outcome !== null;
      });
      if (failures.length === 0) return;
      this.forget_routes(
        failures.map((f) => f.code ?? ErrorCode.NONE),
        failures.some((f) => f.code === null),
      );
      if (failures.every((f) => f.code === null)) throw failures[0]!.cause ?? new SluiceError(failures[0]!.message ?? operation, failures[0]!.retriable);
      throw new AdminError(operation, failures);
    });
  }

  /** Drops cached routes that `codes` (or a lost connection) show to be stale. */
  private forget_routes(codes: number[], connection_lost: boolean): void {
    if (connection_lost || codes.includes(ErrorCode.NOT_CONTROLLER)) this.cluster.controller_id = NO_NODE;
    if (connection_lost || codes.some((c) => COORDINATOR_CODES.has(c))) this.coordinators.clear();
    if (connection_lost || codes.some((c) => LEADER_CODES.has(c))) this.cluster.topics.clear();
  }

  /** Metadata of `topics` (all when null), with per-topic errors thrown together. */
  private async metadata(topics: string[] | null): Promise<TopicMetadata[]> {
    const found = new Map<string, TopicMetadata>();
    const all: TopicMetadata[] = [];
    const keys = topics === null ? ['*'] : [...new Set(topics)];
    await this.retry_pending('Metadata', keys, async (pending) => {
      const connection = await this.cluster.any();
      const { response } = await connection.send(METADATA, 1, 12, {
        topics: topics === null ? null : pending.map((name) => ({ name, topic_id: ZERO_UUID })),
        allow_auto_topic_creation: false,
        include_cluster_authorized_operations: false,
        include_topic_authorized_operations: false,
      });
      const outcomes: Outcomes<string> = new Map();
      if (topics === null) outcomes.set('*', null);
      for (const t of rows(response.topics)) {
        const name = t.name as string;
        const code = t.error_code as number;
        if (code !== ErrorCode.NONE) {
          outcomes.set(name, coded_failure(topic_label(name), code, null, [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]));
          continue;
        }
        const metadata: TopicMetadata = {
          name,
          partitions: rows(t.partitions)
            .map((p) => ({
              partitionErrorCode: p.error_code as number,
              partitionId: p.partition_index as number,
              leader: p.leader_id as number,
              replicas: p.replica_nodes as number[],
              isr: p.isr_nodes as number[],
              offlineReplicas: (p.offline_replicas as number[] | undefined) ?? [],
            }))
            .sort((a, b) => a.partitionId - b.partitionId),
        };
        if (topics === null) all.push(metadata);
        else {
          found.set(name, metadata);
          outcomes.set(name, null);
        }
      }
      return outcomes;
    }, topic_label);
    return topics === null ? all : keys.map((name) => found.get(name)!);
  }

  /** Polls metadata until every partition of `topics` has a leader, at most `timeout_ms`. */
  private async wait_for_leaders(topics: string[], timeout_ms: number): Promise<void> {
    const deadline = Date.now() + timeout_ms;
    for (;;) {
      let waiting: string | null = null;
      try {
        const metadata = await this.metadata(topics);
        const unled = metadata.find((t) => t.partitions.length === 0 || t.partitions.some((p) => p.leader < 0));
        if (!unled) return;
        waiting = `topic ${JSON.stringify(unled.name)} has partitions without a leader`;
      } catch (error) {
        if (!(error instanceof KafkaProtocolError) || ![ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.LEADER_NOT_AVAILABLE].includes(error.code as never)) throw error;
        waiting = error.message;
      }
      if (Date.now() + WAIT_POLL_MS > deadline) throw new KafkaProtocolError(ErrorCode.LEADER_NOT_AVAILABLE, 'CreateTopics', `timed out after ${timeout_ms} ms waiting for topic leaders (${waiting})`);
      await sleep(WAIT_POLL_MS);
    }
  }

  /** Fresh metadata of one topic (not cached: partitions may have been added). */
  private async topic_info(topic: string): Promise<TopicInfo> {
    return this.cluster.with_retry(`metadata for ${topic}`, async () => {
      const errors = await this.cluster.refresh_metadata([topic]);
      const code = errors.get(topic);
      if (code !== undefined) throw new AdminError('Metadata', [coded_failure(topic_label(topic), code, null, [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION])]);
      const info = this.cluster.topics.get(topic);
      if (!info) throw new AdminError('Metadata', [no_answer(topic_label(topic))]);
      return info;
    });
  }

  /** Fails with UNKNOWN_TOPIC_OR_PARTITION naming each partition the topic does not have. */
  private async check_partitions(operation: string, topic: string, partitions: number[]): Promise<void> {
    const info = await this.topic_info(topic);
    const missing = partitions.filter((p) => !info.partitions.some((q) => q.partition === p));
    if (missing.length > 0) {
      throw new AdminError(
        operation,
        missing.map((p) => coded_failure(partition_label(topic, p), ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `the topic has ${info.partitions.length} partitions`, [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION])),
      );
    }
  }

  /** Sends a request about `partitions` of `topic` to each partition's leader. */
  private async on_leaders(operation: string, topic: string, partitions: number[], send: (connection: BrokerConnection, partitions: number[]) => Promise<Outcomes<number>>): Promise<void> {
    await this.retry_pending(
      operation,
      partitions,
      async (pending) => {
        const info = this.cluster.topics.get(topic) ?? (await this.topic_info(topic));
        const outcomes: Outcomes<number> = new Map();
        const by_leader = group_by(pending, (p) => info.partitions.find((q) => q.partition === p)?.leader ?? NO_NODE);
        await Promise.all(
          [...by_leader].map(async ([leader, list]) => {
            if (leader < 0) {
              for (const p of list) outcomes.set(p, coded_failure(partition_label(topic, p), ErrorCode.LEADER_NOT_AVAILABLE, 'no leader in the metadata'));
              return;
            }
            try {
              for (const [p, outcome] of await send(await this.cluster.node(leader), list)) outcomes.set(p, outcome);
            } catch (error) {
              for (const p of list) outcomes.set(p, thrown_failure(partition_label(topic, p), error));
            }
          }),
        );
        return outcomes;
      },
      (p) => partition_label(topic, p),
    );
  }

  /** Outcomes per partition of a response's `topics[].partitions[]` with `error_code`s. */
  private partition_outcomes(topic: string, response_topics: unknown, on_success?: (row: Row) => void, final: readonly number[] = []): Outcomes<number> {
    const outcomes: Outcomes<number> = new Map();
    for (const t of rows(response_topics)) {
      if (t.name !== topic) continue;
      for (const p of rows(t.partitions)) {
        const code = p.error_code as number;
        if (code === ErrorCode.NONE) on_success?.(p);
        outcomes.set(p.partition_index as number, code === ErrorCode.NONE ? null : coded_failure(partition_label(topic, p.partition_index as number), code, null, final));
      }
    }
    return outcomes;
  }

  /** ListOffsets for `partitions` of `topic` (timestamp per partition; -1 latest, -2 earliest). */
  private async list_offsets(topic: string, partitions: number[], timestamp: (partition: number) => number): Promise<Map<number, number>> {
    const offsets = new Map<number, number>();
    await this.on_leaders('ListOffsets', topic, partitions, async (connection, list) => {
      const { response } = await connection.send(LIST_OFFSETS, 1, 10, {
        replica_id: -1,
        isolation_level: 0,
        topics: [{ name: topic, partitions: list.map((partition_index) => ({ partition_index, current_leader_epoch: -1, timestamp: timestamp(partition_index), max_num_offsets: 1 })) }],
        timeout_ms: 30_000,
      });
      return this.partition_outcomes(topic, response.topics, (p) => offsets.set(p.partition_index as number, p.offset as number));
    });
    return offsets;
  }

  /** The connection to the coordinator of `group_id` (FindCoordinator, then cached). */
  private async coordinator(group_id: string): Promise<BrokerConnection> {
    let node_id = this.coordinators.get(group_id);
    if (node_id === undefined) {
      const connection = await this.cluster.any();
      const { version, response } = await connection.send(FIND_COORDINATOR, 0, 6, (v) => (v >= 4 ? { key_type: 0, coordinator_keys: [group_id] } : { key: group_id, key_type: 0 }));
      const entry = version >= 4 ? rows(response.coordinators).find((c) => c.key === group_id) : response;
      if (!entry) throw new AdminError('FindCoordinator', [no_answer(group_label(group_id))]);
      const code = entry.error_code as number;
      if (code !== ErrorCode.NONE) throw new KafkaProtocolError(code, `FindCoordinator for ${group_label(group_id)}`, entry.error_message as string | null);
      node_id = entry.node_id as number;
      if (!this.cluster.brokers.has(node_id)) this.cluster.brokers.set(node_id, { node_id, host: entry.host as string, port: entry.port as number });
      this.coordinators.set(group_id, node_id);
    }
    return this.cluster.node(node_id);
  }

  /** Runs `work` against the coordinator of one group, retrying (and looking it up again). */
  private async on_coordinator<T>(operation: string, group_id: string, work: (connection: BrokerConnection) => Promise<T>): Promise<T> {
    return this.cluster.with_retry(operation, async () => {
      try {
        return await work(await this.coordinator(group_id));
      } catch (error) {
        const codes = error instanceof AdminError ? error.failures.map((f) => f.code ?? 0) : error instanceof KafkaProtocolError ? [error.code] : [];
        if (error instanceof ConnectionError || codes.some((c) => COORDINATOR_CODES.has(c))) this.coordinators.delete(group_id);
        throw error;
      }
    });
  }

  /** Sends a request about `group_ids` to each group's coordinator, one request per coordinator. */
  private async on_coordinators(operation: string, group_ids: string[], send: (connection: BrokerConnection, groups: string[]) => Promise<Outcomes<string>>): Promise<void> {
    await this.retry_pending(
      operation,
      group_ids,
      async (pending) => {
        const outcomes: Outcomes<string> = new Map();
        const located: Array<{ group: string; connection: BrokerConnection }> = [];
        await Promise.all(
          pending.map(async (group) => {
            try {
              located.push({ group, connection: await this.coordinator(group) });
            } catch (error) {
              outcomes.set(group, thrown_failure(group_label(group), error));
            }
          }),
        );
        await Promise.all(
          [...group_by(located, (l) => l.connection)].map(async ([connection, list]) => {
            const groups = list.map((l) => l.group);
            try {
              for (const [group, outcome] of await send(connection, groups)) outcomes.set(group, outcome);
            } catch (error) {
              for (const group of groups) outcomes.set(group, thrown_failure(group_label(group), error));
            }
          }),
        );
        return outcomes;
      },
      group_label,
    );
  }

  /** Refuses offset changes while `group_id` has members (their commits would race ours). */
  private async refuse_if_active(operation: string, group_id: string): Promise<void> {
    const [group] = (await this.describeGroups([group_id])).groups;
    if (group && group.members.length > 0) {
      throw new KafkaProtocolError(
        ErrorCode.NON_EMPTY_GROUP,
        `${operation} for ${group_label(group_id)}`,
        `the consumer group must have no running instances; it has ${group.members.length} member(s), state ${group.state}`,
      );
    }
  }

  /** Commits `offsets` for a group without members (generation -1, empty member id). */
  private async commit_offsets(group_id: string, topic: string, offsets: Map<number, number>): Promise<void> {
    await this.retry_pending(
      'OffsetCommit',
      [...offsets.keys()],
      async (pending) => {
        let connection: BrokerConnection;
        try {
          connection = await this.coordinator(group_id);
        } catch (error) {
          return new Map(pending.map((p) => [p, thrown_failure(partition_label(topic, p), error)]));
        }
        const { response } = await connection.send(OFFSET_COMMIT, 2, 9, {
          group_id,
          generation_id_or_member_epoch: -1,
          member_id: '',
          group_instance_id: null,
          retention_time_ms: -1,
          topics: [
            {
              name: topic,
              partitions: pending.map((partition_index) => ({ partition_index, committed_offset: offsets.get(partition_index)!, committed_leader_epoch: -1, commit_timestamp: -1, committed_metadata: null })),
            },
          ],
        });
        const outcomes = this.partition_outcomes(topic, response.topics, undefined, [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
        for (const outcome of outcomes.values()) {
          if (outcome?.code === ErrorCode.UNKNOWN_MEMBER_ID || outcome?.code === ErrorCode.ILLEGAL_GENERATION) {
            outcome.message = 'the group has members now; stop its consumers before changing its offsets';
          }
        }
        return outcomes;
      },
      (p) => partition_label(topic, p),
    );
  }

  private check_resources(operation: string, resources: Array<{ type: number; name: string }>): void {
    if (!Array.isArray(resources) || resources.length === 0) throw invalid(`${operation}: resources must be a non-empty array`);
    const types: number[] = Object.values(ConfigResourceTypes);
    const bad_type = resources.find((r) => !types.includes(r?.type));
    if (bad_type) throw invalid(`${operation}: invalid resource type ${JSON.stringify(bad_type.type)}`);
    const bad_name = resources.find((r) => typeof r.name !== 'string' || (r.name === '' && r.type === ConfigResourceTypes.TOPIC));
    if (bad_name) throw invalid(`${operation}: invalid resource name ${JSON.stringify(bad_name.name)}`);
  }

  private check_group_ids(operation: string, group_ids: string[]): void {
    if (!Array.isArray(group_ids) || group_ids.some((g) => typeof g !== 'string' || g === '')) throw invalid(`${operation}: groupIds must be an array of group ids`);
  }

  /**
   * Sends a config request about `resources` (by index) to their targets: broker resources to that
   * broker (any broker for the cluster default, name ''), the others to the controller.
   */
  private async on_config_targets(operation: string, resources: Array<{ type: number; name: string }>, send: (connection: BrokerConnection, indexes: number[]) => Promise<Outcomes<number>>): Promise<void> {
    const label = (i: number) => resource_label(resources[i]!.type, resources[i]!.name);
    await this.retry_pending(
      operation,
      resources.map((_, i) => i),
      async (pending) => {
        const outcomes: Outcomes<number> = new Map();
        const target = (i: number): string => {
          const r = resources[i]!;
          if (r.type !== ConfigResourceTypes.BROKER && r.type !== ConfigResourceTypes.BROKER_LOGGER) return 'controller';
          return r.name === '' ? 'any' : `node:${r.name}`;
        };
        await Promise.all(
          [...group_by(pending, target)].map(async ([where, indexes]) => {
            try {
              const connection =
                where === 'controller' ? await this.cluster.controller() : where === 'any' ? await this.cluster.any() : await this.cluster.node(Number(where.slice(5)));
              for (const [i, outcome] of await send(connection, indexes)) outcomes.set(i, outcome);
            } catch (error) {
              for (const i of indexes) outcomes.set(i, thrown_failure(label(i), error));
            }
          }),
        );
        return outcomes;
      },
      label,
    );
  }

  /** Matches a config response's rows to the requested resources (by type and name). */
  private resource_outcomes(resources: Array<{ type: number; name: string }>, indexes: number[], results: Row[], on_success: (index: number, row: Row) => void): Outcomes<number> {
    const outcomes: Outcomes<number> = new Map();
    for (const i of indexes) {
      const r = resources[i]!;
      const row = results.find((x) => x.resource_type === r.type && x.resource_name === r.name);
      if (!row) continue;
      const code = row.error_code as number;
      if (code === ErrorCode.NONE) on_success(i, row);
      outcomes.set(i, code === ErrorCode.NONE ? null : coded_failure(resource_label(r.type, r.name), code, (row.error_message as string | null) ?? null, [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]));
    }
    return outcomes;
  }

  /** AlterConfigs and IncrementalAlterConfigs: same request and response layout apart from the entries. */
  private async alter<R extends { type: number; name: string }>(
    operation: string,
    api: typeof ALTER_CONFIGS | typeof INCREMENTAL_ALTER_CONFIGS,
    max_version: number,
    resources: R[],
    configs: (resource: R) => Row[],
    validate_only: boolean,
  ): Promise<AlterConfigsResponse> {
    const results = new Map<number, Row>();
    let throttle = 0;
    await this.on_config_targets(operation, resources, async (connection, indexes) => {
      const { response } = await connection.send(api, 0, max_version, {
        resources: indexes.map((i) => ({ resource_type: resources[i]!.type, resource_name: resources[i]!.name, configs: configs(resources[i]!) })) as unknown as RequestIn<typeof ALTER_CONFIGS>['resources'],
        validate_only,
      });
      throttle = Math.max(throttle, response.throttle_time_ms as number);
      return this.resource_outcomes(resources, indexes, rows(response.responses), (i, row) => results.set(i, row));
    });
    return {
      resources: resources.map((_, i) => {
        const row = results.get(i)!;
        return { errorCode: row.error_code as number, errorMessage: (row.error_message as string | null) ?? null, resourceName: row.resource_name as string, resourceType: row.resource_type as number };
      }),
      throttleTime: throttle,
    };
  }
}
