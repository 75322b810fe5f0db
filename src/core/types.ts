// The values that cross the core API (api.ts): what front ends send in and get back. Plain data,
// protocol-neutral; the broker core's implementation files import these definitions, never the
// other way round.

// ------------------------------------------------------------------ topics and partitions

/** Kafka-named topic configs as set (unset ones take their defaults). */
export type TopicConfigs = Record<string, string>;
/** A share group's own configs (group configs in Kafka's terms). */
export type GroupConfigs = Record<string, string>;

export interface TopicRecord {
  name: string;
  /** Kafka topic id: 16 random bytes, base64url as Kafka prints them. */
  id: string;
  partitions: number;
  configs: TopicConfigs;
  created_ms: number;
}

/** A config value's type, as Kafka's DescribeConfigs names them. */
export type ConfigValueType = 'boolean' | 'string' | 'int' | 'long' | 'double' | 'list';

/**
 * Where a config's value in force comes from: set on the resource itself (a topic's, a group's or a
 * broker's own dynamic config), the cluster-wide dynamic broker default, the settings the broker
 * started with, or the built-in default.
 */
export type ConfigSourceName = 'resource' | 'cluster_default' | 'static' | 'default';

/** One value a config could take, in the order of precedence (DescribeConfigs' synonyms). */
export interface ConfigSynonym {
  name: string;
  value: string;
  source: ConfigSourceName;
}

/** A topic, group or broker config with the value in force and where it comes from. */
export interface ConfigEntry {
  name: string;
  value: string;
  is_set: boolean;
  /** The value when not set. */
  default?: string;
  type?: ConfigValueType;
  /** What it does (and, for one accepted without effect, why it has none). */
  documentation?: string;
  /** Absent: `resource` when set, else `default`. */
  source?: ConfigSourceName;
  /** Every value in precedence order, the one in force first (absent: derived from is_set and default). */
  synonyms?: ConfigSynonym[];
  /** A broker config that cannot change while the broker runs. */
  read_only?: boolean;
}

/** A topic the broker creates for itself at the first start (in a cluster, by the controller). */
export interface InternalTopic {
  name: string;
  configs: TopicConfigs;
}

export interface ProduceResult {
  base_offset: number;
  log_append_time_ms: number;
  log_start_offset: number;
}

export interface BrokerAddress {
  node_id: number;
  host: string;
  port: number;
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

/** A partition as this broker's own replica has it (the admin API's topic view). */
export interface LocalPartitionState {
  log_start_offset: number;
  high_watermark: number;
  log_end_offset: number;
  bytes: number;
  segments: number;
  offline: boolean;
  /** A compacted partition's cleaner progress here; null when it is not compacted (or not yet looked at). */
  compaction: CompactionProgress | null;
}

/** What the log cleaner has done to one compacted partition's local log. */
export interface CompactionProgress {
  /** Of the cleanable segments' bytes, the share not yet compacted. */
  dirty_ratio: number;
  /** Every key below this offset has been compacted. */
  first_dirty_offset: number;
  passes: number;
  bytes_read: number;
  bytes_written: number;
  /** When a pass last rewrote a segment (-1: never). */
  last_cleaned_ms: number;
}

/** A producer with state on a partition (DescribeProducers). */
export interface ActiveProducer {
  producer_id: number;
  producer_epoch: number;
  /** The last sequence number it wrote here; -1 when none is retained. */
  last_sequence: number;
  /** The largest timestamp of its last batch here; -1 when not known. */
  last_timestamp_ms: number;
  /** The first offset of its open transaction here; -1 when it has none. */
  current_txn_start_offset: number;
}

/** A transactional producer instance: its id, producer id and epoch. */
export interface TxnProducer {
  transactional_id: string;
  producer_id: number;
  producer_epoch: number;
}

/** What a transaction marker says; the leader that writes it stamps its own time. */
export interface TxnMarker {
  producer_id: number;
  producer_epoch: number;
  commit: boolean;
  /** The epoch of the coordinator that decided it. */
  coordinator_epoch: number;
}

export interface TopicPartition {
  topic: string;
  partition: number;
}

// ------------------------------------------------------------------ consumer groups

export type GroupState = 'empty' | 'preparing_rebalance' | 'completing_rebalance' | 'stable' | 'dead';

export interface JoinRequest {
  group_id: string;
  member_id: string;
  group_instance_id: string | null;
  client_id: string;
  client_host: string;
  session_timeout_ms: number;
  rebalance_timeout_ms: number;
  protocol_type: string;
  protocols: Array<{ name: string; metadata: Buffer }>;
  /** JoinGroup v4+: a member without id is told its id and must join again. */
  require_known_member_id: boolean;
}

export interface JoinResult {
  generation_id: number;
  protocol_type: string;
  protocol_name: string;
  leader: string;
  member_id: string;
  members: Array<{ member_id: string; group_instance_id: string | null; metadata: Buffer }>;
}

export interface GroupSummary {
  group_id: string;
  state: GroupState;
  protocol_type: string;
  protocol_name: string;
  generation_id: number;
  members: Array<{
    member_id: string;
    group_instance_id: string | null;
    client_id: string;
    client_host: string;
    metadata: Buffer;
    assignment: Buffer;
  }>;
}

/** A ConsumerGroupHeartbeat (KIP-848); each nullable field is null when unchanged. */
export interface ConsumerHeartbeatRequest {
  group_id: string;
  /** Empty on a v0 join: the coordinator makes one. */
  member_id: string;
  /** 0 joins, -1 leaves, -2 leaves for now (a static member), else the member's epoch. */
  member_epoch: number;
  instance_id: string | null;
  rack_id: string | null;
  /** -1: unchanged. */
  rebalance_timeout_ms: number;
  subscribed_topic_names: string[] | null;
  subscribed_topic_regex: string | null;
  server_assignor: string | null;
  /** Topic name -> partitions the member owns now. */
  owned: Map<string, number[]> | null;
  client_id: string;
  client_host: string;
  /** Which topics its regex may match (the principal's DESCRIBE permission); absent: every topic. */
  may_describe?: (topic: string) => boolean;
}

export interface ConsumerHeartbeatResult {
  member_id: string;
  member_epoch: number;
  heartbeat_interval_ms: number;
  /** Topic name -> partitions, when the member is to hear it; null otherwise. */
  assignment: Map<string, number[]> | null;
}

export type ConsumerGroupState = 'empty' | 'assigning' | 'reconciling' | 'stable';

export interface ConsumerGroupDescription {
  group_id: string;
  state: ConsumerGroupState;
  epoch: number;
  assignment_epoch: number;
  assignor: string;
  members: Array<{
    member_id: string;
    instance_id: string | null;
    rack_id: string | null;
    member_epoch: number;
    client_id: string;
    client_host: string;
    topics: string[];
    regex: string | null;
    assignment: Map<string, number[]>;
    target: Map<string, number[]>;
  }>;
}

export interface CommittedOffset {
  offset: number;
  metadata: string | null;
  leader_epoch: number;
  commit_timestamp_ms: number;
}

export interface OffsetCommitEntry {
  topic: string;
  partition: number;
  offset: number;
  metadata: string | null;
  leader_epoch: number;
}

export interface PartitionLag {
  topic: string;
  partition: number;
  committed: number;
  high_watermark: number;
  lag: number;
}

// ------------------------------------------------------------------ share groups (queues)

/** Acknowledge types as Kafka numbers them (0 gap: offsets without a record). */
export const AckType = { GAP: 0, ACCEPT: 1, RELEASE: 2, REJECT: 3 } as const;
export type AckTypeCode = (typeof AckType)[keyof typeof AckType];

export interface OffsetRange {
  first_offset: number;
  last_offset: number;
}

export interface AcquiredRange extends OffsetRange {
  delivery_count: number;
}

export interface AcknowledgeBatch extends OffsetRange {
  types: AckTypeCode[];
  /** Why the consumer released or rejected the records (kept in their dead letters). */
  reason?: string | null;
  /** For a release: wait this long before offering the records again (-1: the group's backoff). */
  release_delay_ms?: number;
}

export interface HeartbeatRequest {
  group_id: string;
  member_id: string;
  member_epoch: number;
  /** null: unchanged since the last heartbeat. */
  subscribed_topic_names: string[] | null;
  client_id: string;
  client_host: string;
}

export interface HeartbeatResult {
  member_id: string;
  member_epoch: number;
  heartbeat_interval_ms: number;
  /** Topic name -> partitions this member may fetch. */
  assignment: Map<string, number[]>;
}

export interface FetchedPartition {
  topic: string;
  partition: number;
  acquired: AcquiredRange[];
  batches: Buffer[];
  high_watermark: number;
  error: Error | null;
}

export interface ShareGroupDescription {
  group_id: string;
  epoch: number;
  members: Array<{
    member_id: string;
    member_epoch: number;
    client_id: string;
    client_host: string;
    topics: string[];
    assignment: Map<string, number[]>;
  }>;
}

export type Ordering = 'none' | 'key';
export type ShareIsolation = 'read_committed' | 'read_uncommitted';

/** What one share group runs with: the broker's defaults overlaid with the group's configs. */
export interface QueueSettings {
  record_lock_duration_ms: number;
  delivery_count_limit: number;
  records_in_flight_max: number;
  retry_backoff_ms: number[];
  auto_offset_reset: 'earliest' | 'latest';
  /** Dead letters go here instead of `<topic>.<group>.dlq` ('' = that default). */
  dead_letter_topic: string;
  ordering: Ordering;
  /** read_committed: records of open and aborted transactions are never handed out. */
  isolation_level: ShareIsolation;
}

/** Per share group, since the broker started. */
export interface QueueCounters {
  /** Records handed out again after a release, a lock timeout or a member leaving. */
  redeliveries: number;
  dead_lettered: number;
  expired: number;
}

/** The records of a share partition's window by state, and their highest delivery count. */
export interface QueueCensus {
  available: number;
  acquired: number;
  acknowledged: number;
  dead_lettering: number;
  archived: number;
  redelivering: number;
  delivery_count_max: number;
}

export interface QueuePartitionStats {
  topic: string;
  partition: number;
  start_offset: number;
  end_offset: number;
  high_watermark: number;
  in_flight: number;
  /** Records that may be handed out now or after their retry backoff, never-delivered ones included. */
  available: number;
  dead_letters_pending: number;
  /** With `detail`: the window's records per state and their delivery counts. */
  census?: QueueCensus;
}

export interface QueueStats {
  group_id: string;
  members: number;
  topics: string[];
  in_flight: number;
  available: number;
  counters: QueueCounters;
  partitions: QueuePartitionStats[];
}

// ------------------------------------------------------------------ dead letters, delays, traffic

export interface RedriveRequest {
  topic: string;
  /** Only these dead letters; null: every one the topic holds now. */
  offsets: Array<{ partition: number; offset: number }> | null;
  /** Send to this topic instead of each letter's origin. */
  to?: string;
}

export interface RedriveOutcome {
  selected: number;
  redriven: number;
  skipped_already_redriven: number;
}

export interface DelayedStatus {
  pending: number;
  counters: { scheduled: number; delivered: number; dropped: number };
  /** How late recent deliveries were, in arrival order (a bounded ring). */
  lateness_ms: readonly number[];
  index_bytes: number;
  delay_max_ms: number;
}

export interface PartitionTraffic {
  readonly topic: string;
  readonly partition: number;
  messages_in: number;
  bytes_in: number;
  messages_out: number;
  bytes_out: number;
}

export interface TrafficTotals {
  messages_in: number;
  bytes_in: number;
  messages_out: number;
  bytes_out: number;
}

/** Called with durations as they happen, by an exporter that keeps histograms. */
export interface StatsObserver {
  request(api: string, duration_ms: number): void;
}

/** Dead letters one redrive may name. */
export const REDRIVE_OFFSETS_MAX = 10_000;

// ------------------------------------------------------------------ routing (AMQP's model)

/**
 * How an exchange picks the queues and exchanges bound to it for a message; an x-delayed-message
 * exchange routes as its `x-delayed-type` argument says, once a message's `x-delay` has passed.
 */
export type ExchangeType = 'direct' | 'fanout' | 'topic' | 'headers' | 'x-delayed-message';
/** Declare and binding arguments as routing keeps them (AMQP field tables reduced to these). */
export type RoutingArgValue = string | number | boolean | null;
export type RoutingArgs = Record<string, RoutingArgValue>;

export interface ExchangeRecord {
  name: string;
  type: ExchangeType;
  durable: boolean;
  auto_delete: boolean;
  internal: boolean;
  arguments: RoutingArgs;
  /** The broker that declared it: a non-durable exchange goes when that broker restarts. */
  declared_by: number;
}

/** A queue: a topic's partitions read by one share group. */
export interface QueueRecord {
  name: string;
  /** The topic holding its messages (see docs/amqp-compatibility.md for the mapping). */
  topic: string;
  /** The share group whose state says what is delivered, acknowledged and dead-lettered. */
  group_id: string;
  durable: boolean;
  exclusive: boolean;
  auto_delete: boolean;
  arguments: RoutingArgs;
  /** False when the queue adopted a topic that existed before it: deleting the queue keeps the topic. */
  owns_topic: boolean;
  /** The broker that declared it: a non-durable or exclusive queue goes when that broker restarts. */
  declared_by: number;
}

export interface BindingRecord {
  /** The exchange messages come from. */
  source: string;
  destination: string;
  destination_type: 'queue' | 'exchange';
  routing_key: string;
  arguments: RoutingArgs;
}

/** What an exchange, queue or binding declaration asks for. */
export type ExchangeSpec = Omit<ExchangeRecord, 'declared_by'>;
export type QueueSpec = Pick<QueueRecord, 'name' | 'durable' | 'exclusive' | 'auto_delete' | 'arguments'>;

/** A virtual host's routing as the metadata store keeps it. */
export interface RoutingDefinitions {
  exchanges: ExchangeRecord[];
  queues: QueueRecord[];
  bindings: BindingRecord[];
}

/** An aborted transaction as a Fetch lists it: its producer and its first offset. */
export interface AbortedTransaction {
  producer_id: number;
  first_offset: number;
}

/** A partition's transactions as its leader's log shows them (read_committed reads). */
export interface PartitionTransactions {
  /** Below it every transaction has ended and its marker is replicated; the high watermark at most. */
  last_stable_offset(): number;
  /** The aborted transactions with records in [from, to). */
  aborted_in(from: number, to: number): AbortedTransaction[];
}

/** A transactional id's state as DescribeTransactions and ListTransactions give it. */
export interface TransactionDescription {
  transactional_id: string;
  producer_id: number;
  producer_epoch: number;
  /** Kafka's names: Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort. */
  state: string;
  timeout_ms: number;
  /** When the ongoing transaction began; -1 when none is. */
  start_ms: number;
  partitions: TopicPartition[];
}

export interface ProduceOptions {
  broker_append?: boolean;
  forward?: boolean;
  transactional_id?: string | null;
  /** Produce v12+ (transaction version 2): a transactional batch's partition joins its transaction. */
  join_txn?: boolean;
}
