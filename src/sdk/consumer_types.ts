// The consumer's public types, in kafkajs's names and shapes: configuration, subscriptions, the
// eachMessage / eachBatch payloads, and the instrumentation events. consumer.ts re-exports them;
// the consumer's behaviour lives in consumer.ts and the consumer_*.ts files it is made of.
import type { PartitionAssigner } from './assignors.ts';
import type { KafkaMessage } from './records.ts';

export interface TopicPartitions {
  topic: string;
  partitions: number[];
}

export interface TopicPartition {
  topic: string;
  partition: number;
}

export interface TopicPartitionOffset extends TopicPartition {
  /** The offset, as a string (kafkajs); a number is accepted too. */
  offset: string | number;
}

export interface TopicPartitionOffsetAndMetadata extends TopicPartitionOffset {
  metadata?: string | null;
}

export interface ConsumerConfig {
  /** The consumer group. Without it the consumer runs in broadcast mode (see consumer.ts). */
  groupId?: string;
  /** Assignors offered to the group, most preferred first. Default [roundRobin]. Classic protocol only. */
  partitionAssigners?: PartitionAssigner[];
  /**
   * 'classic' (the default): JoinGroup and SyncGroup, the group's leader assigns, every rebalance
   * revokes every partition first. 'consumer' (KIP-848): the broker assigns (`groupRemoteAssignor`)
   * and a member gives up or gets only the partitions that move, while it keeps reading the rest.
   * `sessionTimeout` and `heartbeatInterval` are then the broker's (group.consumer.*).
   */
  groupProtocol?: 'classic' | 'consumer';
  /** With groupProtocol 'consumer': the broker's assignor, 'uniform' or 'range'. Default: the broker's. */
  groupRemoteAssignor?: string;
  /** Default 30000. */
  sessionTimeout?: number;
  /** Default 60000. */
  rebalanceTimeout?: number;
  /** Default 3000. */
  heartbeatInterval?: number;
  /**
   * How often partition counts are checked (new partitions trigger a rebalance or, in broadcast
   * mode, are read too). Default 300000. A group leader that assigned while a subscribed topic
   * was missing from the metadata checks every second until it shows.
   */
  metadataMaxAge?: number;
  /** Default 500. */
  maxWaitTimeInMs?: number;
  /** Default 1. */
  minBytes?: number;
  /** Default 10 MiB. */
  maxBytes?: number;
  /** Default 1 MiB. */
  maxBytesPerPartition?: number;
  /**
   * Fetch within a session per broker (KIP-227): after the first, a Fetch names only partitions
   * whose offset moved, and the answer only partitions with news. Default true.
   */
  fetchSessions?: boolean;
  /**
   * Static membership (group.instance.id): a restart within the session timeout keeps the
   * assignment without a rebalance. Static members do not leave the group on stop.
   */
  groupInstanceId?: string;
  /**
   * 'read_committed' (the default): records of open transactions wait until they end, and those of
   * aborted ones are skipped. 'read_uncommitted': every record up to the high watermark. On a topic
   * without transactions both read the same records.
   */
  isolationLevel?: 'read_committed' | 'read_uncommitted';
  /** kafkajs's name for `isolationLevel: 'read_uncommitted'`. Default false. */
  readUncommitted?: boolean;
  /** Subscribing may create missing topics when the broker allows it. Default true (as kafkajs). */
  allowAutoTopicCreation?: boolean;
  rackId?: string;
  /** Called (and awaited) after each assignment, before fetching starts. */
  onPartitionsAssigned?: (assignment: TopicPartitions[]) => void | Promise<void>;
  /**
   * Called (and awaited) before the consumer joins again or leaves, after committing what is done;
   * the app may commit here.
   */
  onPartitionsRevoked?: (assignment: TopicPartitions[]) => void | Promise<void>;
}

export interface EachMessagePayload {
  topic: string;
  partition: number;
  message: KafkaMessage;
  heartbeat(): Promise<void>;
  /** Pauses this partition after the current message; returns a function that resumes it. */
  pause(): () => void;
}

export interface OffsetsByTopicPartition {
  topics: Array<{ topic: string; partitions: Array<{ partition: number; offset: string }> }>;
}

export interface Batch {
  topic: string;
  partition: number;
  highWatermark: string;
  messages: KafkaMessage[];
  isEmpty(): boolean;
  firstOffset(): string | null;
  lastOffset(): string;
  offsetLag(): string;
  offsetLagLow(): string;
}

export interface EachBatchPayload {
  batch: Batch;
  /** Marks `offset` (and everything before it) as processed: committed and not fetched again. */
  resolveOffset(offset: string | number): void;
  heartbeat(): Promise<void>;
  pause(): () => void;
  /** Commits the given offsets, or else the resolved offsets when the interval or threshold says so. */
  commitOffsetsIfNecessary(offsets?: OffsetsByTopicPartition): Promise<void>;
  uncommittedOffsets(): OffsetsByTopicPartition;
  isRunning(): boolean;
  /** True once the rest of this batch should not be processed (rebalance, seek, pause, stop). */
  isStale(): boolean;
}

export interface ConsumerRunConfig {
  eachMessage?: (payload: EachMessagePayload) => Promise<void>;
  eachBatch?: (payload: EachBatchPayload) => Promise<void>;
  /** Default true: after eachBatch returns, its last message counts as processed. */
  eachBatchAutoResolve?: boolean;
  /** Default true. */
  autoCommit?: boolean;
  /** Default 5000; null or 0 with no threshold commits after every batch. */
  autoCommitInterval?: number | null;
  /** Commit once this many messages were processed since the last commit. */
  autoCommitThreshold?: number | null;
  /**
   * Partitions handled at once (each partition's messages stay in order). Default 1. Ignored when
   * `concurrency` or `orderBy` is given.
   */
  partitionsConsumedConcurrently?: number;
  /**
   * eachMessage only: messages handled at once across all assigned partitions. Default 1 (one
   * message at a time per partition, as without it). See `orderBy` and docs/sdk.md.
   */
  concurrency?: number;
  /**
   * eachMessage only: what must not run at the same time and stays in offset order. 'partition'
   * (default): a partition's messages, one after the other. 'key': a partition's messages with the
   * same key (null keys: all of the partition's null-key messages), so different keys of one
   * partition run in parallel, up to `concurrency`.
   */
  orderBy?: 'key' | 'partition';
}

export type ConsumerSubscription =
  { topics: Array<string | RegExp>; fromBeginning?: boolean } | { topic: string | RegExp; fromBeginning?: boolean };

export const ConsumerEvents = {
  CONNECT: 'consumer.connect',
  DISCONNECT: 'consumer.disconnect',
  STOP: 'consumer.stop',
  CRASH: 'consumer.crash',
  GROUP_JOIN: 'consumer.group_join',
  REBALANCING: 'consumer.rebalancing',
  HEARTBEAT: 'consumer.heartbeat',
  COMMIT_OFFSETS: 'consumer.commit_offsets',
} as const;

export type ConsumerEventName = (typeof ConsumerEvents)[keyof typeof ConsumerEvents];

export interface InstrumentationEvent<T = Record<string, unknown>> {
  id: number;
  type: ConsumerEventName;
  timestamp: number;
  payload: T;
}
