// The admin client's public types, in kafkajs's names and shapes (topics, configs, groups,
// offsets, reassignments, the cluster), the config constants, and AdminError, which names every
// resource a request failed for. admin.ts re-exports them; the requests are in admin_*.ts.
import { KafkaProtocolError } from './errors.ts';
import type { TopicPartitions } from './consumer_types.ts';

/** Resource types of DescribeConfigs / AlterConfigs (kafkajs's ConfigResourceTypes). */
export const ConfigResourceTypes = { UNKNOWN: 0, TOPIC: 2, BROKER: 4, BROKER_LOGGER: 8, GROUP: 32 } as const;
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

/** A KIP-848 consumer group (ConsumerGroupDescribe). */
export interface ConsumerGroupDescription {
  groupId: string;
  /** Empty, Assigning, Reconciling or Stable (Dead: no such group). */
  state: string;
  groupEpoch: number;
  assignmentEpoch: number;
  assignor: string;
  members: Array<{
    memberId: string;
    instanceId: string | null;
    rackId: string | null;
    memberEpoch: number;
    clientId: string;
    clientHost: string;
    subscribedTopics: string[];
    subscribedTopicRegex: string | null;
    /** What the member owns now, and what the assignor wants it to own. */
    assignment: TopicPartitions[];
    targetAssignment: TopicPartitions[];
  }>;
}

export interface DeleteGroupsResult {
  groupId: string;
  errorCode: number;
}

/** Partitions being moved: all replicas now, and those that join or leave when the move ends. */
export interface PartitionReassignments {
  topics: Array<{
    topic: string;
    partitions: Array<{ partition: number; replicas: number[]; addingReplicas: number[]; removingReplicas: number[] }>;
  }>;
}

export interface ClusterDescription {
  brokers: Array<{ nodeId: number; host: string; port: number }>;
  controller: number | null;
  clusterId: string;
}

/** A compacted partition's log cleaner progress on one broker (a Sluice broker's DescribeLogDirs). */
export interface LogCleanerProgress {
  /** Of the cleanable segments' bytes, the share not compacted yet. */
  dirtyRatio: number;
  /** Every key below this offset has been compacted. */
  firstDirtyOffset: number;
  bytesRead: number;
  bytesWritten: number;
  /** When the cleaner last rewrote a segment of it (-1: never). */
  lastCleanedMs: number;
}

/** One broker's log directories and the partitions it holds in them (DescribeLogDirs). */
export interface BrokerLogDirs {
  brokerId: number;
  logDirs: Array<{
    logDir: string;
    /** The file system's size and the bytes still free there (-1: not told). */
    totalBytes: number;
    usableBytes: number;
    topics: Array<{
      topic: string;
      partitions: Array<{
        partition: number;
        sizeBytes: number;
        offsetLag: number;
        /** null when the partition is not compacted, or the broker does not tell. */
        compaction: LogCleanerProgress | null;
      }>;
    }>;
  }>;
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
    const describe = (f: AdminFailure) =>
      `${f.resource}: ${f.type}${f.code !== null ? ` (${f.code})` : ''}${f.message ? `: ${f.message}` : ''}`;
    this.message =
      failures.length === 1
        ? `${operation} ${describe(failures[0]!)}`
        : `${operation} failed for ${failures.length} resources: ${failures.map(describe).join('; ')}`;
    // Retriable only when every failure is (the retry then resends just the failed resources).
    Object.defineProperty(this, 'retriable', { value: failures.every((f) => f.retriable), enumerable: true });
  }
}
