// The core API: the one interface every front end (Kafka, HTTP, later AMQP) uses to reach the
// broker core — produce and read, topics and configs, consumer groups and committed offsets, share
// groups (queues), delayed delivery, dead letters, stats. Protocol-neutral: a front end decodes
// its protocol, calls these, and encodes the answer; errors come as the core's errors (errors.ts).
// Where a partition lives is not a front end's concern: on a single node or in a cluster the same
// calls work, and answer not_leader_or_follower / not_coordinator where clients must go elsewhere.
import type { AclsApi } from './acls.ts';
import type { QuotasApi } from './quotas.ts';
import type { Clock, Logger } from './clock.ts';
import type { ConsumerSource, PartitionReader } from './partition_reader.ts';
import type {
  AcknowledgeBatch,
  ActiveProducer,
  BindingRecord,
  BrokerAddress,
  CommittedOffset,
  ConfigEntry,
  DelayedStatus,
  ExchangeRecord,
  ExchangeSpec,
  FetchedPartition,
  GroupConfigs,
  GroupState,
  GroupSummary,
  ConsumerGroupDescription,
  ConsumerHeartbeatRequest,
  ConsumerHeartbeatResult,
  HeartbeatRequest,
  HeartbeatResult,
  JoinRequest,
  JoinResult,
  LocalPartitionState,
  CompactionProgress,
  OffsetCommitEntry,
  PartitionInfo,
  PartitionLag,
  PartitionReassignment,
  PartitionTraffic,
  PartitionTransactions,
  ProduceOptions,
  ProduceResult,
  QueueRecord,
  QueueSettings,
  QueueSpec,
  QueueStats,
  RedriveOutcome,
  RedriveRequest,
  RoutingArgs,
  ShareGroupDescription,
  StatsObserver,
  TopicConfigs,
  TopicPartition,
  TopicRecord,
  TxnMarker,
  TxnProducer,
  TransactionDescription,
  TrafficTotals,
} from './types.ts';
import type { BrokerError } from './errors.ts';
import type { Election } from './placement.ts';
import type { BatchRecord } from '../protocol/record_batch.ts';

export interface Core {
  readonly node_id: number;
  readonly cluster_id: string;
  /** Where this broker keeps its logs (its one log directory, as DescribeLogDirs names it). */
  readonly data_dir: string;
  /** The wall clock: timestamps. */
  readonly clock: Clock;
  /** For deadlines and timeouts (long polls, heartbeats): it does not jump when the wall clock is stepped. */
  readonly monotonic_clock: Clock;
  readonly logger: Logger;
  readonly topics: TopicsApi;
  readonly partitions: PartitionsApi;
  readonly cluster: ClusterApi;
  readonly groups: GroupsApi;
  readonly shares: SharesApi;
  readonly transactions: TransactionsApi;
  readonly delayed: DelayedApi;
  readonly dead_letters: DeadLettersApi;
  readonly stats: StatsApi;
  readonly routing: RoutingApi;
  readonly acls: AclsApi;
  readonly users: UsersApi;
  readonly quotas: QuotasApi;
  readonly configs: BrokerConfigsApi;
}

export interface SetBrokerConfigsOptions {
  remove?: readonly string[];
  /** Replace the scope's whole set of dynamic configs (AlterConfigs); otherwise merge into it. */
  replace?: boolean;
  validate_only?: boolean;
}

/**
 * Broker configs (Kafka's BROKER resource): the settings in force, and the dynamic ones set while
 * the broker runs, for one broker (resource name: its node id) or cluster-wide (resource name '').
 */
export interface BrokerConfigsApi {
  /** This broker's every config (its node id), or the cluster-wide defaults set (''). */
  entries(resource_name: string): ConfigEntry[];
  /** Sets and removes dynamic configs; read-only, unknown or invalid ones are refused (invalid_config). */
  set(
    resource_name: string,
    configs: Readonly<Record<string, string>>,
    options?: SetBrokerConfigsOptions,
  ): Promise<void>;
  /** The value in force here of a setting (by canonical name), dynamic changes included. */
  setting_value(setting_name: string): string;
  /** Calls `listener` whenever the dynamic configs in force may have changed. */
  on_change(listener: () => void): void;
}

/** A user and its SCRAM mechanisms; `mechanisms` null: no such user. */
export interface ScramUserInfo {
  name: string;
  /** From the users file (read-only here), else managed while the broker runs. */
  from_file: boolean;
  mechanisms: Array<{ hash: 'sha256' | 'sha512'; iterations: number }> | null;
}

/** Users managed while the broker runs (AlterUserScramCredentials), beside those of the users file. */
export interface UsersApi {
  /** The users named, or every user (null). */
  describe(names: readonly string[] | null): ScramUserInfo[];
  /** Sets a user's credential from a password the client salted (salt, iterations, salted password). */
  set_scram(name: string, hash: 'sha256' | 'sha512', salt: Buffer, iterations: number, salted: Buffer): Promise<void>;
  /** Removes a user's credential; with none left the user is gone. */
  remove_scram(name: string, hash: 'sha256' | 'sha512'): Promise<void>;
}

export interface CreateTopicOptions {
  validate_only?: boolean;
  /** -1: the cluster's default. */
  replication_factor?: number;
  /**
   * Replica node ids per partition, the preferred leader first (CreateTopics' manual assignment):
   * the partition count and replication factor follow from it.
   */
  assignment?: number[][];
}

export interface SetConfigsOptions {
  validate_only?: boolean;
  /** Keep configs not named (IncrementalAlterConfigs); otherwise `configs` replaces them all. */
  merge?: boolean;
  remove?: string[];
}

export interface TopicsApi {
  get(name: string): TopicRecord | undefined;
  get_by_id(id: string): TopicRecord | undefined;
  list(): TopicRecord[];
  /** Partitions of a topic created without a count. */
  readonly default_partitions: number;
  /** The topic, created with the default partition count when auto-creation is on and allowed. */
  ensure(name: string, allow_auto_create: boolean): Promise<void>;
  /** `partitions` -1: the default count. */
  create(name: string, partitions: number, configs?: TopicConfigs, options?: CreateTopicOptions): Promise<TopicRecord>;
  /** Deletes the topic, its partitions and the offsets groups committed for it. */
  delete(name: string): Promise<void>;
  /** Raises the partition count to `total`; `assignment`: the new partitions' replicas (CreatePartitions). */
  add_partitions(
    name: string,
    total: number,
    options?: { validate_only?: boolean; assignment?: number[][] },
  ): Promise<void>;
  set_configs(name: string, configs: TopicConfigs, options?: SetConfigsOptions): Promise<void>;
  /** Every topic config with the value in force. */
  config_entries(topic: TopicRecord): ConfigEntry[];
}

export interface PartitionsApi {
  /**
   * Appends one record batch (idempotence, delays and overflow caps applied). acks 0/1: local write.
   * `broker_append`: a batch another broker writes for itself; its delay headers are not acted on.
   * `forward`: a partition led elsewhere is produced through its leader (acks=all there) instead of
   * refused; the result then knows the base offset only (-1 for the times and log start).
   * `transactional_id`: the producer's, with its transactional batches.
   */
  produce(
    topic: string,
    partition: number,
    records: Buffer,
    acks: -1 | 0 | 1,
    options?: ProduceOptions,
  ): Promise<ProduceResult>;
  /** A partition this broker leads, for consumers (Fetch, ListOffsets, DeleteRecords). */
  consumer_source(topic: string, partition: number): ConsumerSource;
  /** The transactions of a partition this broker leads (read_committed Fetch and ListOffsets). */
  transactions(topic: string, partition: number): PartitionTransactions;
  /** A follower's fetch reaching this leader: records its progress; returns what it reads. */
  replica_source(
    replica_id: number,
    topic: string,
    partition: number,
    fetch_offset: number,
    current_leader_epoch: number,
  ): ConsumerSource;
  /** Where `epoch` ends in a partition's log on its leader (OffsetForLeaderEpoch). */
  end_offset_for_epoch(
    topic: string,
    partition: number,
    epoch: number,
    current_leader_epoch: number,
  ): { epoch: number; end_offset: number };
  /** Deletes records below `offset` (-1: the high watermark); the new log start. */
  delete_records(topic: string, partition: number, offset: number): Promise<number>;
  /** Where this broker reads a partition for its own tools: bounds known once resolved. */
  reader(topic: string, partition: number): Promise<PartitionReader>;
  /** reader() without waiting: a remote partition's bounds are zero until first heard. */
  reader_now(topic: string, partition: number): PartitionReader;
  /** Decoded records from `offset` below the high watermark, with the partition's bounds. */
  read_records(
    reader: PartitionReader,
    from_offset: number,
    records_max: number,
    bytes_max: number,
  ): Promise<RecordsRead>;
  /** The producers with state on a partition this broker leads (DescribeProducers). */
  active_producers(topic: string, partition: number): ActiveProducer[];
  /** The partition as this broker's own replica has it; null when it holds none. */
  local_state(topic: string, partition: number): LocalPartitionState | null;
  /** The log cleaner's progress on each compacted partition held here. */
  compaction(): Array<CompactionProgress & { topic: string; partition: number }>;
  /** Local partitions taken offline by a failed write or fsync. */
  offline(): string[];
  /** Local partitions whose tail recovery cut at start (torn, cut short or corrupt on disk). */
  cut_at_recovery(): string[];
  allocate_producer_id(): Promise<number>;
}

export interface RecordsRead {
  records: import('../protocol/record_batch.ts').DecodedRecord[];
  /** Where the next read continues (past the last record returned, or past skipped gaps). */
  next_offset: number;
}

export interface ClusterApi {
  /** Said in descriptions only: whether this broker is a member of a cluster of several. */
  readonly clustered: boolean;
  /**
   * Brokers clients may connect to, at their addresses on the listener named `listener` (a broker
   * without one is left out); `self` is this broker's address on it.
   */
  brokers(self: { host: string; port: number }, listener: string): BrokerAddress[];
  /** -1 while there is none. */
  controller_id(): number;
  partition_info(topic: string, partition: number): PartitionInfo;
  partition_reassignment(topic: string, partition: number): PartitionReassignment | null;
  /** Moves a partition to `replicas`; null gives up the move in progress. */
  reassign(topic: string, partition: number, replicas: number[] | null): Promise<void>;
  /** ElectLeaders for one partition (see Placement.elect_leader). */
  elect_leader(topic: string, partition: number, election: Election): Promise<void>;
  /** The node that coordinates consumer groups or share groups; -1 when none. */
  coordinator_node(kind: 'group' | 'share' | 'transaction'): number;
}

/**
 * Transactions (Kafka's protocol): every call needs this broker to coordinate transactions now
 * (the leader of __transaction_state), else it answers not_coordinator.
 */
export interface TransactionsApi {
  readonly is_coordinator: boolean;
  /** The transaction.version feature offered to clients (1, or 2 for KIP-890). */
  readonly version: number;
  /** A producer id and epoch for the transactional id; an earlier instance's transaction is aborted. */
  init_producer_id(
    transactional_id: string,
    timeout_ms: number,
    expected: { producer_id: number; producer_epoch: number } | null,
  ): Promise<{ producer_id: number; producer_epoch: number }>;
  /** AddPartitionsToTxn: per partition, its error or null. */
  add_partitions(
    transactional_id: string,
    producer_id: number,
    producer_epoch: number,
    partitions: TopicPartition[],
  ): Promise<Array<TopicPartition & { error: BrokerError | null }>>;
  /** AddOffsetsToTxn: the group's committed offsets join the transaction. */
  add_offsets(transactional_id: string, producer_id: number, producer_epoch: number, group_id: string): Promise<void>;
  /**
   * TxnOffsetCommit (on the group coordinator): the offsets apply when the transaction commits.
   * `join_txn` (v5, transaction version 2): the group's offsets join the transaction first.
   */
  commit_offsets(
    transactional_id: string,
    group_id: string,
    producer_id: number,
    producer_epoch: number,
    entries: OffsetCommitEntry[],
    join_txn: boolean,
  ): Promise<void>;
  /** AddPartitionsToTxn v4 verify only, a partition leader asking: per partition, its error or null. */
  verify(producer: TxnProducer, partitions: TopicPartition[]): Array<TopicPartition & { error: BrokerError | null }>;
  /**
   * WriteTxnMarkers, on any broker: the marker appended to each partition this broker leads;
   * per partition, its error or null (not_leader_or_follower where another broker leads it).
   */
  write_markers(
    marker: TxnMarker,
    partitions: TopicPartition[],
  ): Promise<Array<TopicPartition & { error: Error | null }>>;
  /**
   * EndTxn: resolves once the outcome is durable and its markers are written, to the producer id
   * and epoch to write under next. `bump_epoch` (EndTxn v5, transaction version 2): the end takes
   * the next epoch (a retry under the previous one is answered again).
   */
  end(
    transactional_id: string,
    producer_id: number,
    producer_epoch: number,
    commit: boolean,
    bump_epoch: boolean,
  ): Promise<{ producer_id: number; producer_epoch: number }>;
  describe(transactional_id: string): TransactionDescription | null;
  list(): TransactionDescription[];
}

export interface GroupsApi {
  /** True when this broker coordinates consumer groups now (the calls below need it). */
  readonly is_coordinator: boolean;
  join(request: JoinRequest): Promise<JoinResult>;
  sync(
    group_id: string,
    member_id: string,
    generation_id: number,
    instance_id: string | null,
    assignments: Array<{ member_id: string; assignment: Buffer }>,
  ): Promise<{ protocol_type: string; protocol_name: string; assignment: Buffer }>;
  heartbeat(group_id: string, member_id: string, generation_id: number, instance_id: string | null): void;
  leave(
    group_id: string,
    leavers: Array<{ member_id: string; group_instance_id: string | null }>,
  ): Array<BrokerError | null>;
  describe(group_id: string): GroupSummary;
  /** A ConsumerGroupHeartbeat of a KIP-848 consumer group. */
  consumer_heartbeat(request: ConsumerHeartbeatRequest): ConsumerHeartbeatResult;
  /** A KIP-848 consumer group with members; null when there is none of that id. */
  consumer_describe(group_id: string): ConsumerGroupDescription | null;
  /** An OffsetFetch from a KIP-848 member: it must be in the group at that epoch. */
  validate_offset_fetch(group_id: string, member_id: string, member_epoch: number): void;
  /** Every group: its protocol type, state and kind (classic, or KIP-848 consumer group). */
  list(): Array<{ group_id: string; protocol_type: string; state: GroupState; type: 'classic' | 'consumer' }>;
  delete(group_id: string): Promise<void>;
  /** Removes committed offsets (OffsetDelete): per partition null, or why it was kept. */
  delete_offsets(
    group_id: string,
    partitions: ReadonlyArray<{ topic: string; partition: number }>,
  ): Promise<Array<BrokerError | null>>;
  validate_commit(group_id: string, member_id: string, generation_id: number, instance_id: string | null): void;
  /** Resolves once the commit is durable. */
  commit(group_id: string, entries: OffsetCommitEntry[]): Promise<void>;
  committed(group_id: string, topic: string, partition: number): CommittedOffset | undefined;
  /** Whether a transaction not yet ended holds a commit of the partition's offset (TxnOffsetCommit). */
  commit_pending(group_id: string, topic: string, partition: number): boolean;
  committed_all(group_id: string): Array<CommittedOffset & TopicPartition>;
  /** Groups with committed offsets. */
  ids_with_offsets(): string[];
  /** Lag per committed partition, high watermarks of remote partitions heard first. */
  lag(group_id: string): Promise<PartitionLag[]>;
  /** lag() with the high watermarks known now. */
  lag_now(group_id: string): PartitionLag[];
}

export interface SharesApi {
  /** True when this broker coordinates share groups now (the calls below need it). */
  readonly is_coordinator: boolean;
  /** The broker-wide default lock duration (ShareFetch answers carry it). */
  readonly record_lock_duration_ms: number;
  heartbeat(request: HeartbeatRequest): HeartbeatResult;
  describe(group_id: string): ShareGroupDescription | null;
  /** Throws unknown_member_id for a member the group does not know. */
  check_member(group_id: string, member_id: string): void;
  /** Per partition key (`topic\0partition`), the error of that partition's acknowledgements, or none. */
  acknowledge(
    group_id: string,
    member_id: string,
    acks: ReadonlyArray<TopicPartition & { batches: AcknowledgeBatch[] }>,
  ): Promise<Map<string, unknown>>;
  fetch(
    group_id: string,
    member_id: string,
    partitions: readonly TopicPartition[],
    records_max: number,
    bytes_max: number,
  ): Promise<FetchedPartition[]>;
  /**
   * Keeps the group's state for every partition of `topic` from now on, with no member yet: its
   * records expire by their time to live and its depth is known before anyone consumes.
   */
  track(group_id: string, topic: string): Promise<void>;
  /** Calls `listener` when records of the group become available again; returns the unsubscribe. */
  on_available(group_id: string, listener: () => void): () => void;
  group_ids(): string[];
  queue_stats(group_id: string, options?: { detail?: boolean }): QueueStats | null;
  settings_of(group_id: string): QueueSettings;
  /** The group's configs with the values in force. */
  config_entries(group_id: string): ConfigEntry[];
  /** Sets (or, with `replace`, replaces) a group's configs; they apply at once and survive restarts. */
  set_configs(
    group_id: string,
    configs: GroupConfigs,
    options?: { remove?: string[]; replace?: boolean; validate_only?: boolean },
  ): Promise<void>;
}

export interface DelayedApi {
  /** True when delayed delivery runs on this broker. */
  readonly is_host: boolean;
  /** Throws not_leader_or_follower where delayed delivery runs elsewhere. */
  status(): DelayedStatus;
}

export interface DeadLettersApi {
  /** Copies dead letters back to their origin (or `to`), recording each in the audit topic. */
  redrive(request: RedriveRequest): Promise<RedriveOutcome>;
}

export interface StatsApi {
  readonly totals: TrafficTotals;
  /** A produced batch was accepted. */
  record_in(topic: string, partition: number, messages: number, bytes: number): void;
  /** Batches were handed to a consumer. */
  record_out(topic: string, partition: number, messages: number, bytes: number): void;
  request_done(api: string, duration_ms: number): void;
  traffic(): IterableIterator<PartitionTraffic>;
  /** Drops the counters of partitions of deleted topics. */
  prune(): void;
  /** Set by a metrics exporter; null when none listens. */
  observer: StatsObserver | null;
  /** Called with the duration of every group-commit flush round; null when none listens. */
  set_flush_observer(observer: ((duration_ms: number) => void) | null): void;
  /** Free space and size of the file system of the data directory. */
  disk_space(): Promise<{ free_bytes: number; total_bytes: number }>;
}

/**
 * Exchanges, queues and bindings per virtual host (AMQP's routing model): routing metadata kept in
 * the metadata store; a queue's messages are a topic's records and its deliveries a share group's.
 * Refusals are RoutingErrors. Non-durable declarations last until the broker stops.
 */
export interface RoutingApi {
  exchange(vhost: string, name: string): ExchangeRecord | undefined;
  exchanges(vhost: string): ExchangeRecord[];
  /** The exchange as it is; precondition_failed when it exists with other properties. */
  declare_exchange(vhost: string, spec: ExchangeSpec): Promise<ExchangeRecord>;
  /** Deletes it and the bindings to and from it. */
  delete_exchange(vhost: string, name: string, options: { if_unused: boolean }): Promise<void>;
  queue(vhost: string, name: string): QueueRecord | undefined;
  queues(vhost: string): QueueRecord[];
  /** The topic a queue of that name holds (or would hold) its messages in. */
  queue_topic(vhost: string, name: string): string;
  /** Creates the queue (and its topic) or checks an existing one against `spec`. */
  declare_queue(vhost: string, spec: QueueSpec): Promise<QueueRecord>;
  /** Deletes the queue, its bindings, and the topic when the queue made it. */
  delete_queue(vhost: string, name: string): Promise<void>;
  bindings(vhost: string): BindingRecord[];
  bind(vhost: string, binding: BindingRecord): Promise<void>;
  unbind(vhost: string, binding: BindingRecord): Promise<void>;
  /** The queues a message reaches from `exchange`, through exchange bindings and alternates. */
  route(vhost: string, exchange: string, routing_key: string, headers: RoutingArgs | null): QueueRecord[];
  /**
   * Dead-letters messages a full queue refused (x-overflow reject-publish-dlx) through its
   * dead-letter exchange, with x-death reason maxlen; false when it has none or it routes nowhere.
   */
  dead_letter_rejected(vhost: string, queue: QueueRecord, records: readonly BatchRecord[]): Promise<boolean>;
}
