// The SDK consumer, in kafkajs's shape: subscribe, run with eachMessage or eachBatch, commit, seek,
// pause and resume, rebalance listeners.
//
// Two modes:
//  - with a `groupId`, a member of a classic consumer group: FindCoordinator, JoinGroup (leader
//    computes the assignment with the chosen assignor), SyncGroup, Heartbeat in the background,
//    starting positions from OffsetFetch, OffsetCommit of the next offset to consume, LeaveGroup on
//    stop. Rebalances are eager: every partition is revoked (after committing what is done and
//    calling onPartitionsRevoked) before the member joins again.
//  - without a `groupId`, broadcast mode: the consumer reads every partition of its subscribed
//    topics itself, with no group, no coordinator and no commits; each such consumer receives
//    everything. Positions start from `fromBeginning` (earliest or latest) or from `seek`.
//
// Fetching works in rounds: one Fetch per partition leader (isolation level read_committed unless
// `readUncommitted`), then the fetched partitions are handed to the handlers (at most
// `partitionsConsumedConcurrently` partitions at once, each partition's messages in order), then
// the next round. A partition's position only moves past a message once its handler finished, and
// only such offsets are committed. With `concurrency` > 1 or `orderBy: 'key'` the round's messages
// of all partitions go through one OrderedRunner (ordered_runner.ts) instead: up to `concurrency`
// at once, one at a time per key (or partition), and each partition commits its lowest offset not
// done yet.
//
// The group traffic (JoinGroup can block for a whole rebalance) uses a connection of its own to the
// coordinator, with a request timeout above the rebalance timeout; fetches, metadata and ListOffsets
// use the Cluster given. Fetches long-poll for up to `maxWaitTimeInMs` and a broker answers a
// connection's requests in order, so a Cluster shared with a producer delays its requests by up to
// that long: give each consumer a Cluster of its own for low latency elsewhere.
import { AsyncLocalStorage } from 'node:async_hooks';
import { Cluster, type BrokerConnection } from './cluster.ts';
import { ConnectionError, KafkaProtocolError, SluiceError, check_code, is_retriable } from './errors.ts';
import { AssignerProtocol, roundRobin, type Assigner, type PartitionAssigner } from './assignors.ts';
import { decode_fetched, type KafkaMessage } from './records.ts';
import { OrderedRunner, type OrderedMessage } from './ordered_runner.ts';
import type { ApiSpec } from '../protocol/kafka/schema.ts';
import type { Value } from '../protocol/kafka/codec.ts';
import { ErrorCode } from '../protocol/kafka/error_codes.ts';
import { FETCH } from '../protocol/kafka/messages/01_fetch.ts';
import { LIST_OFFSETS } from '../protocol/kafka/messages/02_list_offsets.ts';
import { OFFSET_COMMIT } from '../protocol/kafka/messages/08_offset_commit.ts';
import { OFFSET_FETCH } from '../protocol/kafka/messages/09_offset_fetch.ts';
import { FIND_COORDINATOR } from '../protocol/kafka/messages/10_find_coordinator.ts';
import { JOIN_GROUP } from '../protocol/kafka/messages/11_join_group.ts';
import { HEARTBEAT } from '../protocol/kafka/messages/12_heartbeat.ts';
import { LEAVE_GROUP } from '../protocol/kafka/messages/13_leave_group.ts';
import { SYNC_GROUP } from '../protocol/kafka/messages/14_sync_group.ts';

export type { KafkaMessage, IHeaders } from './records.ts';

// ------------------------------------------------------------------ public types (kafkajs names)

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
  /** The consumer group. Without it the consumer runs in broadcast mode (see the top of this file). */
  groupId?: string;
  /** Assignors offered to the group, most preferred first. Default [roundRobin]. */
  partitionAssigners?: PartitionAssigner[];
  /** Default 30000. */
  sessionTimeout?: number;
  /** Default 60000. */
  rebalanceTimeout?: number;
  /** Default 3000. */
  heartbeatInterval?: number;
  /** How often partition counts are checked (new partitions trigger a rebalance or, in broadcast mode, are read too). Default 300000. */
  metadataMaxAge?: number;
  /** Default 500. */
  maxWaitTimeInMs?: number;
  /** Default 1. */
  minBytes?: number;
  /** Default 10 MiB. */
  maxBytes?: number;
  /** Default 1 MiB. */
  maxBytesPerPartition?: number;
  /** Static membership (group.instance.id): a restart within the session timeout keeps the assignment without a rebalance. Static members do not leave the group on stop. */
  groupInstanceId?: string;
  /** Read records of open and aborted transactions too (isolation level 0). Default false (read_committed). */
  readUncommitted?: boolean;
  /** Subscribing may create missing topics when the broker allows it. Default true (as kafkajs). */
  allowAutoTopicCreation?: boolean;
  rackId?: string;
  /** Called (and awaited) after each assignment, before fetching starts. */
  onPartitionsAssigned?: (assignment: TopicPartitions[]) => void | Promise<void>;
  /** Called (and awaited) before the consumer joins again or leaves, after committing what is done; the app may commit here. */
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
  /** Partitions handled at once (each partition's messages stay in order). Default 1. Ignored when `concurrency` or `orderBy` is given. */
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

export type ConsumerSubscription = { topics: Array<string | RegExp>; fromBeginning?: boolean } | { topic: string | RegExp; fromBeginning?: boolean };

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

// ------------------------------------------------------------------ internals

const DEFAULTS = {
  sessionTimeout: 30_000,
  rebalanceTimeout: 60_000,
  heartbeatInterval: 3_000,
  metadataMaxAge: 300_000,
  maxWaitTimeInMs: 500,
  minBytes: 1,
  maxBytes: 10 * 1024 * 1024,
  maxBytesPerPartition: 1024 * 1024,
};

/** Group errors after which the member joins again. */
const REJOIN_CODES = new Set<number>([ErrorCode.REBALANCE_IN_PROGRESS, ErrorCode.ILLEGAL_GENERATION, ErrorCode.UNKNOWN_MEMBER_ID]);
/** The coordinator moved or is not ready: find it again. */
const COORDINATOR_CODES = new Set<number>([ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS]);
/** Fetch and ListOffsets errors cured by fresh metadata. */
const METADATA_CODES = new Set<number>([
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.LEADER_NOT_AVAILABLE,
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.UNKNOWN_LEADER_EPOCH,
  74, // FENCED_LEADER_EPOCH
  ErrorCode.KAFKA_STORAGE_ERROR,
  ErrorCode.UNKNOWN_TOPIC_ID,
]);
const EARLIEST = -2;
const LATEST = -1;
const JOIN_ATTEMPTS_MAX = 50;

interface PartitionState {
  topic: string;
  partition: number;
  key: string;
  /** The next offset to fetch; null until known (committed offset, reset or seek). */
  position: number | null;
  /** With position null: where to start instead of the committed offset. */
  reset: 'earliest' | 'latest' | null;
  /** A seek to earliest/latest: commit the position once it is known. */
  commit_on_resolve: boolean;
  /** The next offset after the last message whose handler finished; null when none yet. */
  resolved: number | null;
  /** The offset last committed (or read back from the group). */
  committed: number | null;
  /** Messages resolved since the last commit. */
  uncommitted: number;
  /** Bumped by every seek: work started before it is discarded. */
  epoch: number;
  /** Ordered mode: offsets at or after the position already handled (other keys ran ahead); skipped when fetched again. */
  done_ahead: Set<number>;
}

/** A partition in a Fetch: its state, the offset asked for and the state's epoch at the time. */
interface FetchSnapshotEntry {
  state: PartitionState;
  offset: number;
  epoch: number;
}

/** A handler (eachMessage / eachBatch / listener) threw: the work is retried after a backoff. */
class HandlerError extends SluiceError {
  constructor(cause: unknown) {
    super(`a consumer handler failed: ${String((cause as Error)?.message ?? cause)}`, true, { cause });
  }
}

/** A sleep that ends early when fired. */
class Signal {
  private readonly waiters = new Set<() => void>();
  wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }
  fire(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}

interface Deferred {
  promise: Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
  settled: boolean;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  const d: Deferred = {
    promise,
    settled: false,
    resolve: () => {
      d.settled = true;
      resolve();
    },
    reject: (error) => {
      d.settled = true;
      reject(error);
    },
  };
  promise.catch(() => {});
  return d;
}

function key_of(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

function to_offset(value: string | number, what: string): number {
  const offset = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(offset)) throw new SluiceError(`${what}: offset ${String(value)} is not an integer`, false);
  return offset;
}

function group_by<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = groups.get(k);
    if (list) list.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

function rows(value: unknown): Value[] {
  return (value as Value[] | null | undefined) ?? [];
}

class FetchedBatch implements Batch {
  constructor(
    readonly topic: string,
    readonly partition: number,
    readonly highWatermark: string,
    readonly messages: KafkaMessage[],
  ) {}
  isEmpty(): boolean {
    return this.messages.length === 0;
  }
  firstOffset(): string | null {
    return this.messages[0]?.offset ?? null;
  }
  lastOffset(): string {
    return this.messages.at(-1)?.offset ?? String(Number(this.highWatermark) - 1);
  }
  offsetLag(): string {
    return String(Math.max(0, Number(this.highWatermark) - 1 - Number(this.lastOffset())));
  }
  offsetLagLow(): string {
    const first = this.firstOffset();
    return String(first === null ? 0 : Math.max(0, Number(this.highWatermark) - 1 - Number(first)));
  }
}

interface ResolvedRunConfig {
  eachMessage: ConsumerRunConfig['eachMessage'];
  eachBatch: ConsumerRunConfig['eachBatch'];
  eachBatchAutoResolve: boolean;
  autoCommit: boolean;
  autoCommitInterval: number | null;
  autoCommitThreshold: number | null;
  partitionsConsumedConcurrently: number;
  concurrency: number;
  orderBy: 'key' | 'partition';
  /** concurrency > 1 or orderBy 'key': messages go through an OrderedRunner. */
  ordered: boolean;
}

// ------------------------------------------------------------------ the consumer

export class Consumer {
  readonly events = ConsumerEvents;
  private readonly config: Required<Pick<ConsumerConfig, keyof typeof DEFAULTS>> & ConsumerConfig;
  private readonly group_id: string | null;
  private readonly assigners: Assigner[];
  private readonly listeners = new Map<string, Set<(event: InstrumentationEvent<never>) => void>>();
  private next_event_id = 0;
  private readonly in_handler = new AsyncLocalStorage<boolean>();

  /** topic → fromBeginning */
  private readonly subscriptions = new Map<string, boolean>();
  private readonly assignment = new Map<string, PartitionState>();
  private readonly pending_seeks = new Map<string, { offset: number } | { reset: 'earliest' | 'latest' }>();
  private readonly paused_topics = new Set<string>();
  private readonly paused_partitions = new Set<string>();

  private run_config: ResolvedRunConfig | null = null;
  private running = false;
  private loop: Promise<void> | null = null;
  private first_join: Deferred | null = null;
  private stopping: Promise<void> | null = null;
  private readonly wakeup = new Signal();

  // group membership
  private member_id = '';
  private generation_id = -1;
  private leader_id = '';
  private protocol_name: string | null = null;
  /** The partition counts the last assignment was computed from (the leader watches them). */
  private assigned_counts = new Map<string, number>();
  private needs_rejoin = true;
  private joining = false;
  private coordinator_cluster: Cluster | null = null;
  private coordinator_lookup: Promise<Cluster> | null = null;
  private heartbeat_wakeup = new Signal();
  private heartbeat_in_flight: Promise<void> | null = null;
  private last_heartbeat = 0;
  private last_commit = 0;
  private last_metadata_check = Date.now();
  private commit_chain: Promise<void> = Promise.resolve();
  /** Ordered mode: an auto commit started while handlers run. */
  private background_commit: Promise<void> | null = null;
  /** Per partition leader: the Fetch sent for the next round while the current round's handlers ran. */
  private prefetched = new Map<number, { snapshot: Map<string, FetchSnapshotEntry>; response: Promise<Value> }>();

  constructor(
    private readonly cluster: Cluster,
    config: ConsumerConfig = {},
  ) {
    this.config = { ...DEFAULTS, ...Object.fromEntries(Object.entries(config).filter(([, v]) => v !== undefined)) } as Consumer['config'];
    this.group_id = config.groupId ?? null;
    if (this.group_id === '') throw new SluiceError('groupId must not be empty (leave it out for broadcast mode)', false);
    const factories = config.partitionAssigners && config.partitionAssigners.length > 0 ? config.partitionAssigners : [roundRobin];
    this.assigners = factories.map((factory) => factory({ cluster, groupId: this.group_id ?? '' }));
  }

  // ---------------------------------------------------------------- events

  /** Listens to an instrumentation event; returns a function that removes the listener. */
  on<T = Record<string, unknown>>(event: ConsumerEventName, listener: (event: InstrumentationEvent<T>) => void): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    set.add(listener as (event: InstrumentationEvent<never>) => void);
    return () => set.delete(listener as (event: InstrumentationEvent<never>) => void);
  }

  private emit(type: ConsumerEventName, payload: Record<string, unknown> = {}): void {
    const set = this.listeners.get(type);
    if (!set || set.size === 0) return;
    const event = { id: this.next_event_id++, type, timestamp: Date.now(), payload } as InstrumentationEvent<never>;
    for (const listener of set) {
      try {
        listener(event);
      } catch {
        // a listener's failure is its own
      }
    }
  }

  // ---------------------------------------------------------------- lifecycle

  async connect(): Promise<void> {
    await this.cluster.any();
    this.emit(ConsumerEvents.CONNECT);
  }

  /** Adds topics (names or patterns matched against the existing topics) to the subscription. */
  async subscribe(subscription: ConsumerSubscription): Promise<void> {
    if (this.loop) throw new SluiceError('cannot subscribe while the consumer is running; stop it first', false);
    const wanted = 'topics' in subscription ? subscription.topics : [subscription.topic];
    if (!Array.isArray(wanted) || wanted.length === 0) throw new SluiceError('subscribe needs a topic or topics', false);
    const from_beginning = Boolean(subscription.fromBeginning);
    const names: string[] = [];
    const patterns = wanted.filter((t): t is RegExp => t instanceof RegExp);
    if (patterns.length > 0) {
      await this.cluster.with_retry('metadata', () => this.cluster.refresh_metadata(null));
      for (const info of this.cluster.topics.values()) {
        if (!info.is_internal && patterns.some((p) => new RegExp(p.source, p.flags.replace('g', '')).test(info.name))) names.push(info.name);
      }
    }
    for (const topic of wanted) {
      if (typeof topic !== 'string') continue;
      if (topic === '') throw new SluiceError('a topic name must not be empty', false);
      await this.cluster.topic(topic, this.config.allowAutoTopicCreation ?? true);
      names.push(topic);
    }
    for (const name of names) this.subscriptions.set(name, from_beginning);
  }

  /**
   * Starts consuming in the background; resolves once the first assignment is in place (after the
   * first JoinGroup/SyncGroup, or in broadcast mode once the partitions are known) and its starting
   * positions are known, so anything produced afterwards is received. Rejects when that fails for
   * good.
   */
  async run(config: ConsumerRunConfig = {}): Promise<void> {
    if (this.stopping) await this.stopping;
    if (this.loop) throw new SluiceError('the consumer is already running', false);
    if (!config.eachMessage === !config.eachBatch) throw new SluiceError('run needs exactly one of eachMessage and eachBatch', false);
    if (this.subscriptions.size === 0) throw new SluiceError('subscribe to a topic before run', false);
    const interval = config.autoCommitInterval === undefined ? 5_000 : config.autoCommitInterval;
    this.run_config = {
      eachMessage: config.eachMessage,
      eachBatch: config.eachBatch,
      eachBatchAutoResolve: config.eachBatchAutoResolve ?? true,
      autoCommit: config.autoCommit ?? true,
      autoCommitInterval: interval || null,
      autoCommitThreshold: config.autoCommitThreshold || null,
      partitionsConsumedConcurrently: Math.max(1, Math.floor(config.partitionsConsumedConcurrently ?? 1)),
      concurrency: Math.max(1, Math.floor(config.concurrency ?? 1)),
      orderBy: config.orderBy ?? 'partition',
      ordered: false,
    };
    if (this.run_config.orderBy !== 'key' && this.run_config.orderBy !== 'partition') throw new SluiceError(`orderBy must be 'key' or 'partition', not ${String(config.orderBy)}`, false);
    this.run_config.ordered = this.run_config.concurrency > 1 || this.run_config.orderBy === 'key';
    if (this.run_config.ordered && config.eachBatch) throw new SluiceError('concurrency and orderBy apply to eachMessage, not eachBatch', false);
    this.running = true;
    this.needs_rejoin = true;
    this.last_commit = Date.now();
    this.first_join = deferred();
    const first = this.first_join;
    this.loop = this.main_loop();
    await first.promise;
  }

  /**
   * Stops fetching, waits for the handlers in progress, commits what they finished (with autoCommit),
   * calls onPartitionsRevoked and leaves the group (static members stay until their session ends).
   * Called from inside a handler, it returns at once and the stop completes after that handler.
   */
  stop(): Promise<void> {
    const stopping = this.begin_stop();
    return this.in_handler.getStore() ? Promise.resolve() : stopping;
  }

  /** Starts stopping (once) and returns the promise of the whole stop. */
  private begin_stop(): Promise<void> {
    if (this.stopping) return this.stopping;
    if (!this.loop) return Promise.resolve();
    this.running = false;
    this.wakeup.fire();
    this.heartbeat_wakeup.fire();
    // A JoinGroup may wait for a whole rebalance: abandon it (the member is left below).
    if (this.joining) this.forget_coordinator();
    const loop = this.loop;
    this.stopping = (async () => {
      await loop.catch(() => {});
      await this.finish_stop();
    })().finally(() => {
      this.loop = null;
      this.stopping = null;
    });
    return this.stopping;
  }

  private async finish_stop(): Promise<void> {
    if (this.group_id) {
      if (this.run_config?.autoCommit && this.generation_id >= 0) await this.commit_resolved().catch((error) => this.report(error));
      if (this.assignment.size > 0) await this.call_listener('onPartitionsRevoked', this.assignment_list()).catch((error) => this.report(error));
      await this.leave_group().catch((error) => this.report(error));
    }
    this.assignment.clear();
    this.prefetched.clear();
    this.first_join?.resolve();
    this.emit(ConsumerEvents.STOP);
  }

  /** Stops (see stop) and closes the consumer's own coordinator connection; the Cluster given stays open. */
  disconnect(): Promise<void> {
    const done = this.begin_stop().then(() => {
      this.forget_coordinator();
      this.emit(ConsumerEvents.DISCONNECT);
    });
    return this.in_handler.getStore() ? Promise.resolve() : done;
  }

  // ---------------------------------------------------------------- positions, pause

  /**
   * Moves the position of a partition: the next message handed over is at `offset` (-2 / '-2' =
   * earliest, -1 / '-1' = latest). The new position counts as resolved: the next commit stores it.
   * For a partition not assigned yet (before run, or during a rebalance), it applies when the next
   * assignment includes the partition, and is dropped otherwise.
   */
  seek({ topic, partition, offset }: TopicPartitionOffset): void {
    const value = to_offset(offset, `seek ${topic}/${partition}`);
    if (value < EARLIEST) throw new SluiceError(`seek ${topic}/${partition}: offset must be >= 0, -1 (latest) or -2 (earliest)`, false);
    const target = value === EARLIEST ? { reset: 'earliest' as const } : value === LATEST ? { reset: 'latest' as const } : { offset: value };
    const state = this.assignment.get(key_of(topic, partition));
    if (!state) {
      this.pending_seeks.set(key_of(topic, partition), target);
      return;
    }
    this.apply_seek(state, target);
    this.wakeup.fire();
  }

  /** Seeks to the first message with a timestamp at or after `timestamp` (ms); past the end when there is none. */
  async seekToTimestamp({ topic, partition, timestamp }: { topic: string; partition: number; timestamp: number | string }): Promise<void> {
    const time = to_offset(timestamp, `seekToTimestamp ${topic}/${partition}`);
    const offsets = await this.list_offsets([{ topic, partition, timestamp: time }]);
    let offset = offsets.get(key_of(topic, partition)) ?? -1;
    if (offset < 0) offset = (await this.list_offsets([{ topic, partition, timestamp: LATEST }])).get(key_of(topic, partition)) ?? LATEST;
    this.seek({ topic, partition, offset });
  }

  private apply_seek(state: PartitionState, target: { offset: number } | { reset: 'earliest' | 'latest' }): void {
    state.epoch++;
    state.done_ahead.clear();
    if ('offset' in target) {
      state.position = target.offset;
      state.reset = null;
      state.commit_on_resolve = false;
      state.resolved = target.offset;
    } else {
      state.position = null;
      state.reset = target.reset;
      state.commit_on_resolve = true;
    }
  }

  /** Stops fetching the given topics (all their partitions) or partitions until resumed. */
  pause(topics: Array<{ topic: string; partitions?: number[] }>): void {
    for (const { topic, partitions } of topics) {
      if (!partitions) this.paused_topics.add(topic);
      else for (const partition of partitions) this.paused_partitions.add(key_of(topic, partition));
    }
  }

  resume(topics: Array<{ topic: string; partitions?: number[] }>): void {
    for (const { topic, partitions } of topics) {
      if (!partitions) {
        this.paused_topics.delete(topic);
        for (const key of [...this.paused_partitions]) if (key.startsWith(`${topic}\u0000`)) this.paused_partitions.delete(key);
        continue;
      }
      if (this.paused_topics.delete(topic)) {
        // The topic was paused as a whole: keep its other known partitions paused.
        const count = this.cluster.topics.get(topic)?.partitions.length ?? 0;
        for (let p = 0; p < count; p++) this.paused_partitions.add(key_of(topic, p));
      }
      for (const partition of partitions) this.paused_partitions.delete(key_of(topic, partition));
    }
    this.wakeup.fire();
  }

  /** The paused topic partitions among those assigned (whole topics paused are listed with their assigned partitions). */
  paused(): TopicPartitions[] {
    const out = new Map<string, number[]>();
    for (const state of this.assignment.values()) {
      if (this.is_paused(state)) out.set(state.topic, [...(out.get(state.topic) ?? []), state.partition]);
    }
    for (const topic of this.paused_topics) if (!out.has(topic)) out.set(topic, []);
    return [...out].map(([topic, partitions]) => ({ topic, partitions: partitions.sort((a, b) => a - b) }));
  }

  private is_paused(state: PartitionState): boolean {
    return this.paused_topics.has(state.topic) || this.paused_partitions.has(state.key);
  }

  /** The partitions currently assigned to this consumer. */
  assignments(): TopicPartitions[] {
    return this.assignment_list();
  }

  private assignment_list(): TopicPartitions[] {
    const by_topic = group_by([...this.assignment.values()], (s) => s.topic);
    return [...by_topic].map(([topic, states]) => ({ topic, partitions: states.map((s) => s.partition).sort((a, b) => a - b) }));
  }

  // ---------------------------------------------------------------- commits

  /** Commits the given offsets (each the next offset to consume, kafkajs's convention). Needs a groupId. */
  async commitOffsets(offsets: TopicPartitionOffsetAndMetadata[]): Promise<void> {
    if (!this.group_id) throw new SluiceError('commitOffsets needs a groupId: a consumer in broadcast mode has no group to commit to', false);
    const entries = offsets.map((o) => ({ topic: o.topic, partition: o.partition, offset: to_offset(o.offset, `commit ${o.topic}/${o.partition}`), metadata: o.metadata ?? null }));
    await this.serialized_commit(entries);
  }

  private serialized_commit(entries: Array<{ topic: string; partition: number; offset: number; metadata: string | null }>): Promise<void> {
    const work = this.commit_chain.then(() => this.send_commit(entries));
    this.commit_chain = work.catch(() => {});
    return work;
  }

  /** Commits every resolved offset not committed yet. */
  private async commit_resolved(): Promise<void> {
    if (!this.group_id) return;
    const states = [...this.assignment.values()].filter((s) => s.resolved !== null && s.resolved !== s.committed);
    this.last_commit = Date.now();
    if (states.length === 0) return;
    const entries = states.map((s) => ({ topic: s.topic, partition: s.partition, offset: s.resolved!, metadata: null }));
    await this.serialized_commit(entries);
  }

  private async send_commit(entries: Array<{ topic: string; partition: number; offset: number; metadata: string | null }>): Promise<void> {
    if (entries.length === 0) return;
    const body = {
      group_id: this.group_id,
      generation_id_or_member_epoch: this.generation_id,
      member_id: this.member_id,
      group_instance_id: this.config.groupInstanceId ?? null,
      retention_time_ms: -1,
      topics: [...group_by(entries, (e) => e.topic)].map(([name, list]) => ({
        name,
        partitions: list.map((e) => ({ partition_index: e.partition, committed_offset: e.offset, committed_leader_epoch: -1, committed_metadata: e.metadata })),
      })),
    };
    const response = await this.group_call('OffsetCommit', OFFSET_COMMIT, this.config.groupInstanceId ? 7 : 2, 8, body, () => {});
    let failure: KafkaProtocolError | null = null;
    for (const topic of rows(response.topics)) {
      for (const partition of rows(topic.partitions)) {
        const code = partition.error_code as number;
        const key = key_of(topic.name as string, partition.partition_index as number);
        if (code === ErrorCode.NONE) {
          const state = this.assignment.get(key);
          const entry = entries.find((e) => key_of(e.topic, e.partition) === key);
          if (state && entry) {
            state.committed = entry.offset;
            state.uncommitted = 0;
          }
        } else failure ??= new KafkaProtocolError(code, `OffsetCommit ${topic.name as string}/${partition.partition_index as number}`);
      }
    }
    if (failure) {
      if (REJOIN_CODES.has(failure.code)) this.on_group_error(failure.code);
      throw failure;
    }
    this.emit(ConsumerEvents.COMMIT_OFFSETS, { groupId: this.group_id, memberId: this.member_id, groupGenerationId: this.generation_id, topics: body.topics });
  }

  private async maybe_auto_commit(): Promise<void> {
    const run = this.run_config;
    if (!this.group_id || !run?.autoCommit || this.generation_id < 0) return;
    if (!this.commit_due(run)) return;
    await this.commit_resolved().catch((error) => this.report(error));
  }

  private commit_due(run: ResolvedRunConfig): boolean {
    const interval_due = run.autoCommitInterval !== null && Date.now() - this.last_commit >= run.autoCommitInterval;
    let resolved = 0;
    for (const state of this.assignment.values()) resolved += state.uncommitted;
    const threshold_due = run.autoCommitThreshold !== null && resolved >= run.autoCommitThreshold;
    const every_batch = run.autoCommitInterval === null && run.autoCommitThreshold === null;
    return interval_due || threshold_due || every_batch;
  }

  private uncommitted_offsets(): OffsetsByTopicPartition {
    const states = [...this.assignment.values()].filter((s) => s.resolved !== null && s.resolved !== s.committed);
    return {
      topics: [...group_by(states, (s) => s.topic)].map(([topic, list]) => ({ topic, partitions: list.map((s) => ({ partition: s.partition, offset: String(s.resolved) })) })),
    };
  }

  // ---------------------------------------------------------------- the main loop

  private async main_loop(): Promise<void> {
    let failures = 0;
    let joined_once = false;
    while (this.running) {
      try {
        if (this.needs_rejoin) {
          this.prefetched.clear();
          if (this.group_id) await this.rebalance();
          else await this.assign_all();
          if (!this.running) break;
          joined_once = true;
        }
        await this.check_metadata();
        await this.resolve_positions();
        // run() returns once the starting positions are known: what is produced after it is seen.
        if (joined_once && !this.needs_rejoin) this.first_join?.resolve();
        if (!this.running || this.needs_rejoin) continue;
        await this.fetch_round();
        await this.maybe_auto_commit();
        failures = 0;
      } catch (error) {
        if (!this.running) break;
        failures++;
        const group_error = error instanceof KafkaProtocolError && (REJOIN_CODES.has(error.code) || COORDINATOR_CODES.has(error.code));
        const retriable = error instanceof HandlerError || is_retriable(error) || group_error;
        // Until run() has returned, retries are bounded by the cluster's retry setting; after that
        // the consumer keeps trying (with backoff) until it is stopped.
        const starting = !(this.first_join?.settled ?? true);
        const give_up = !retriable || (starting && failures > this.cluster.options.retry.retries);
        this.emit(ConsumerEvents.CRASH, { error, groupId: this.group_id, restart: !give_up });
        if (give_up) {
          this.running = false;
          this.first_join?.reject(error);
          // Leave the group and settle in the background; stop() or disconnect() waits for it.
          void this.begin_stop();
          break;
        }
        const { initial_retry_ms, max_retry_ms } = this.cluster.options.retry;
        await this.wakeup.wait(Math.min(max_retry_ms, initial_retry_ms * 2 ** Math.min(failures - 1, 16)) * (0.8 + Math.random() * 0.4));
      }
    }
  }

  private report(error: unknown): void {
    this.emit(ConsumerEvents.CRASH, { error, groupId: this.group_id, restart: true });
  }

  private new_state(topic: string, partition: number): PartitionState {
    return { topic, partition, key: key_of(topic, partition), position: null, reset: null, commit_on_resolve: false, resolved: null, committed: null, uncommitted: 0, epoch: 0, done_ahead: new Set() };
  }

  private apply_pending_seeks(): void {
    for (const [key, target] of this.pending_seeks) {
      const state = this.assignment.get(key);
      if (state) this.apply_seek(state, target);
    }
    this.pending_seeks.clear();
  }

  /** Broadcast mode: every partition of every subscribed topic, positions kept across refreshes. */
  private async assign_all(): Promise<void> {
    const topics = [...this.subscriptions.keys()];
    await this.cluster.with_retry('metadata', () => this.cluster.refresh_metadata(topics));
    const added: PartitionState[] = [];
    for (const topic of topics) {
      const info = this.cluster.topics.get(topic);
      for (const p of info?.partitions ?? []) {
        if (this.assignment.has(key_of(topic, p.partition))) continue;
        const state = this.new_state(topic, p.partition);
        this.assignment.set(state.key, state);
        added.push(state);
      }
    }
    this.needs_rejoin = false;
    this.apply_pending_seeks();
    if (added.length > 0) {
      const list = [...group_by(added, (s) => s.topic)].map(([topic, states]) => ({ topic, partitions: states.map((s) => s.partition) }));
      await this.call_listener('onPartitionsAssigned', list);
    }
  }

  /** Every metadataMaxAge: new partitions are read (broadcast) or make the leader rebalance. */
  private async check_metadata(): Promise<void> {
    if (Date.now() - this.last_metadata_check < this.config.metadataMaxAge) return;
    this.last_metadata_check = Date.now();
    if (!this.group_id) {
      this.needs_rejoin = true;
      return;
    }
    if (this.leader_id !== this.member_id || this.assigned_counts.size === 0) return;
    const topics = [...this.assigned_counts.keys()];
    await this.cluster.refresh_metadata(topics).catch(() => null);
    for (const topic of topics) {
      const count = this.cluster.topics.get(topic)?.partitions.length;
      if (count !== undefined && count !== this.assigned_counts.get(topic)) {
        this.request_rejoin();
        return;
      }
    }
  }

  private async call_listener(name: 'onPartitionsAssigned' | 'onPartitionsRevoked', assignment: TopicPartitions[]): Promise<void> {
    const listener = this.config[name];
    if (!listener) return;
    try {
      await this.in_handler.run(true, () => listener(assignment));
    } catch (error) {
      throw new HandlerError(error);
    }
  }

  private default_reset(topic: string): 'earliest' | 'latest' {
    return this.subscriptions.get(topic) ? 'earliest' : 'latest';
  }

  /** Positions for assigned partitions without one: seek, committed offset, or earliest/latest. */
  private async resolve_positions(): Promise<void> {
    const unknown = [...this.assignment.values()].filter((s) => s.position === null);
    if (unknown.length === 0) return;
    const epochs = new Map(unknown.map((s) => [s, s.epoch]));
    const current = (s: PartitionState) => this.assignment.get(s.key) === s && s.epoch === epochs.get(s) && s.position === null;
    const need_committed = this.group_id ? unknown.filter((s) => s.reset === null) : [];
    if (need_committed.length > 0) {
      const committed = await this.fetch_committed(need_committed);
      for (const state of need_committed) {
        if (!current(state)) continue;
        const offset = committed.get(state.key) ?? -1;
        if (offset >= 0) {
          state.position = offset;
          state.committed = offset;
        } else state.reset = this.default_reset(state.topic);
      }
    }
    const to_list = unknown.filter((s) => current(s));
    for (const state of to_list) state.reset ??= this.default_reset(state.topic);
    if (to_list.length === 0) return;
    const offsets = await this.list_offsets(to_list.map((s) => ({ topic: s.topic, partition: s.partition, timestamp: s.reset === 'earliest' ? EARLIEST : LATEST })));
    for (const state of to_list) {
      const offset = offsets.get(state.key);
      if (!current(state) || offset === undefined || offset < 0) continue;
      state.position = offset;
      state.reset = null;
      if (state.commit_on_resolve) {
        state.resolved = offset;
        state.commit_on_resolve = false;
      }
    }
  }

  private async leader_of(topic: string, partition: number): Promise<number> {
    let info = this.cluster.topics.get(topic);
    if (!info || !info.partitions[partition]) {
      this.cluster.topics.delete(topic);
      info = await this.cluster.topic(topic);
    }
    const leader = info.partitions.find((p) => p.partition === partition)?.leader ?? -1;
    if (leader < 0) throw new KafkaProtocolError(ErrorCode.LEADER_NOT_AVAILABLE, `partition ${topic}/${partition}`);
    return leader;
  }

  /** ListOffsets (by leader): the offset for each timestamp (-2 earliest, -1 latest); -1 when none. */
  private async list_offsets(requests: Array<{ topic: string; partition: number; timestamp: number }>): Promise<Map<string, number>> {
    return this.cluster.with_retry('ListOffsets', async () => {
      const out = new Map<string, number>();
      const with_leaders = await Promise.all(requests.map(async (r) => ({ ...r, leader: await this.leader_of(r.topic, r.partition) })));
      await Promise.all(
        [...group_by(with_leaders, (r) => String(r.leader))].map(async ([leader, list]) => {
          const connection = await this.cluster.node(Number(leader));
          const { response } = await connection.send(LIST_OFFSETS, 1, 6, {
            replica_id: -1,
            isolation_level: this.config.readUncommitted ? 0 : 1,
            topics: [...group_by(list, (r) => r.topic)].map(([name, parts]) => ({
              name,
              partitions: parts.map((r) => ({ partition_index: r.partition, current_leader_epoch: -1, timestamp: r.timestamp })),
            })),
            timeout_ms: this.cluster.options.request_timeout_ms,
          });
          for (const topic of rows(response.topics)) {
            for (const partition of rows(topic.partitions)) {
              check_code(partition.error_code as number, `ListOffsets ${topic.name as string}/${partition.partition_index as number}`);
              out.set(key_of(topic.name as string, partition.partition_index as number), partition.offset as number);
            }
          }
        }),
      );
      return out;
    });
  }

  // ---------------------------------------------------------------- fetching

  private async fetch_round(): Promise<void> {
    const run = this.run_config!;
    // Prefetches of the previous round that no longer match what this round fetches are dropped.
    const prefetched = this.prefetched;
    this.prefetched = new Map();
    const fetchable = [...this.assignment.values()].filter((s) => s.position !== null && !this.is_paused(s));
    if (fetchable.length === 0) {
      await this.wakeup.wait(this.config.maxWaitTimeInMs);
      return;
    }
    const by_leader = new Map<number, PartitionState[]>();
    for (const state of fetchable) {
      const leader = await this.leader_of(state.topic, state.partition);
      const list = by_leader.get(leader);
      if (list) list.push(state);
      else by_leader.set(leader, [state]);
    }
    // Partitions handed to the handlers, at most partitionsConsumedConcurrently at once.
    const jobs: Array<Promise<void>> = [];
    let active = 0;
    const queue: Array<() => void> = [];
    const limited = (work: () => Promise<void>): Promise<void> =>
      new Promise<void>((resolve) => {
        const start = () => {
          active++;
          resolve(
            work().finally(() => {
              active--;
              queue.shift()?.();
            }),
          );
        };
        if (active < run.partitionsConsumedConcurrently) start();
        else queue.push(start);
      });
    let metadata_stale = false;
    const ordered = run.ordered ? this.ordered_round(run) : null;
    const fetches = [...by_leader].map(async ([leader, states]) => {
      const snapshot = new Map(states.map((s) => [s.key, { state: s, offset: s.position!, epoch: s.epoch }]));
      const ahead = prefetched.get(leader);
      prefetched.delete(leader);
      const response = ahead && this.prefetch_matches(ahead.snapshot, snapshot) ? await ahead.response : await this.send_fetch(leader, states, snapshot);
      check_code((response.error_code as number | undefined) ?? 0, `Fetch from broker ${leader}`);
      // The next offsets of this response, for a prefetch of the next round (null: no prefetch).
      let next: Map<string, FetchSnapshotEntry> | null = this.running && !this.needs_rejoin ? new Map() : null;
      for (const topic of rows(response.responses)) {
        for (const partition of rows(topic.partitions)) {
          const entry = snapshot.get(key_of(topic.topic as string, partition.partition_index as number));
          if (!entry) continue;
          const { state, offset, epoch } = entry;
          const stale = () => this.assignment.get(state.key) !== state || state.epoch !== epoch;
          if (stale()) {
            next = null;
            continue;
          }
          const code = partition.error_code as number;
          if (code !== ErrorCode.NONE) next = null;
          if (code === ErrorCode.OFFSET_OUT_OF_RANGE) {
            state.position = null;
            state.reset = this.default_reset(state.topic);
            state.done_ahead.clear();
            continue;
          }
          if (METADATA_CODES.has(code)) {
            this.cluster.topics.delete(state.topic);
            metadata_stale = true;
            continue;
          }
          check_code(code, `Fetch ${state.topic}/${state.partition}`);
          const aborted = rows(partition.aborted_transactions).map((a) => ({ producer_id: a.producer_id as number, first_offset: a.first_offset as number }));
          const fetched = await decode_fetched(partition.records as Buffer | null, offset, { aborted_transactions: this.config.readUncommitted ? null : aborted });
          if (stale()) {
            next = null;
            continue;
          }
          const high_watermark = String(partition.high_watermark as number);
          next?.set(state.key, { state, offset: fetched.next_offset, epoch });
          if (fetched.messages.length === 0) {
            state.position = fetched.next_offset; // control batches, aborted records or nothing
            continue;
          }
          if (ordered) ordered.submit(state, epoch, offset, fetched.messages, fetched.next_offset);
          else jobs.push(limited(() => this.process(state, epoch, fetched.messages, fetched.next_offset, high_watermark)));
        }
      }
      // Fetch the next round from this broker while the handlers run: used when every partition
      // ends the round at the offset predicted (no seek, pause, failure, rebalance or leader change).
      if (next && next.size === snapshot.size && this.running && !this.needs_rejoin) {
        const ahead_states = [...next.values()].map((e) => e.state);
        const ahead_response = this.send_fetch(leader, ahead_states, next);
        ahead_response.catch(() => {}); // a dropped prefetch's failure is nobody's concern; a used one's is rethrown
        this.prefetched.set(leader, { snapshot: next, response: ahead_response });
      }
    });
    const fetch_results = await Promise.allSettled(fetches);
    if (ordered) jobs.push(ordered.finish());
    const job_results = await Promise.allSettled(jobs);
    const failure = [...fetch_results, ...job_results].find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failure) {
      if (failure.reason instanceof ConnectionError) this.cluster.topics.clear();
      throw failure.reason;
    }
    if (metadata_stale) await this.wakeup.wait(this.cluster.options.retry.initial_retry_ms);
  }

  /** Sends one Fetch to `leader` for `states`, each from the offset in `snapshot`. */
  private async send_fetch(leader: number, states: PartitionState[], snapshot: Map<string, FetchSnapshotEntry>): Promise<Value> {
    const connection = await this.cluster.node(leader);
    const { response } = await connection.send(FETCH, 4, 12, {
      replica_id: -1,
      max_wait_ms: this.config.maxWaitTimeInMs,
      min_bytes: this.config.minBytes,
      max_bytes: this.config.maxBytes,
      isolation_level: this.config.readUncommitted ? 0 : 1,
      session_id: 0,
      session_epoch: -1,
      topics: [...group_by(states, (s) => s.topic)].map(([topic, list]) => ({
        topic,
        partitions: list.map((s) => ({ partition: s.partition, current_leader_epoch: -1, fetch_offset: snapshot.get(s.key)!.offset, last_fetched_epoch: -1, log_start_offset: -1, partition_max_bytes: this.config.maxBytesPerPartition })),
      })),
      forgotten_topics_data: [],
      rack_id: this.config.rackId ?? '',
    });
    return response;
  }

  /** A prefetch serves this round when it asked for exactly these partitions, from their positions now, in the same epochs. */
  private prefetch_matches(ahead: Map<string, FetchSnapshotEntry>, now: Map<string, FetchSnapshotEntry>): boolean {
    if (ahead.size !== now.size) return false;
    for (const [key, entry] of now) {
      const predicted = ahead.get(key);
      if (!predicted || predicted.state !== entry.state || predicted.offset !== entry.offset || predicted.epoch !== entry.epoch) return false;
    }
    return true;
  }

  /**
   * Ordered mode (concurrency / orderBy): the round's messages of every partition go through one
   * OrderedRunner. A partition's resolved offset follows its watermark (the lowest offset not done)
   * as handlers finish, and auto commits may run meanwhile. A partition stops at a failed message,
   * or when it is paused, sought, revoked or the consumer stops; what runs finishes first.
   */
  private ordered_round(run: ResolvedRunConfig): {
    submit(state: PartitionState, epoch: number, fetch_offset: number, messages: KafkaMessage[], next_offset: number): void;
    finish(): Promise<void>;
  } {
    type Item = OrderedMessage & { state: PartitionState; epoch: number; message: KafkaMessage };
    const parts = new Map<string, { state: PartitionState; epoch: number; fetch_offset: number; next_offset: number }>();
    const same = (state: PartitionState, epoch: number) => this.assignment.get(state.key) === state && state.epoch === epoch;
    const heartbeat = () => this.heartbeat_if_due();
    const runner = new OrderedRunner<Item>({
      concurrency: run.concurrency,
      orderBy: run.orderBy,
      may_start: ({ state, epoch }) => this.running && !this.needs_rejoin && same(state, epoch) && !this.is_paused(state),
      handle: ({ state, message }) => {
        const pause = () => {
          this.pause([{ topic: state.topic, partitions: [state.partition] }]);
          return () => this.resume([{ topic: state.topic, partitions: [state.partition] }]);
        };
        return this.in_handler.run(true, () => run.eachMessage!({ topic: state.topic, partition: state.partition, message, heartbeat, pause }));
      },
      on_done: ({ state, epoch }, watermark) => {
        if (!same(state, epoch)) return;
        state.uncommitted++;
        if (state.resolved === null || watermark > state.resolved) state.resolved = watermark;
        this.commit_in_background(run);
      },
    });
    return {
      submit: (state, epoch, fetch_offset, messages, next_offset) => {
        parts.set(state.key, { state, epoch, fetch_offset, next_offset });
        for (const message of messages) {
          const offset = Number(message.offset);
          if (state.done_ahead.delete(offset)) continue; // handled before a retry, a pause or a stop of its partition
          runner.submit({ partition: state.key, key: message.key === null ? null : message.key.toString('latin1'), offset, state, epoch, message });
        }
      },
      finish: async () => {
        await runner.idle();
        let failure: { error: unknown } | null = null;
        for (const { state, epoch, fetch_offset, next_offset } of parts.values()) {
          failure ??= runner.failure(state.key);
          if (!same(state, epoch)) continue; // a seek or a rebalance: the position is not ours
          if (!runner.halted(state.key)) {
            state.position = next_offset;
            state.resolved = next_offset;
          } else {
            const watermark = runner.watermark(state.key)!;
            state.position = watermark;
            if (watermark > (state.resolved ?? fetch_offset)) state.resolved = watermark;
            for (const offset of runner.done_above_watermark(state.key)) state.done_ahead.add(offset);
          }
          for (const offset of state.done_ahead) if (offset < state.position) state.done_ahead.delete(offset);
        }
        if (failure) throw new HandlerError(failure.error);
      },
    };
  }

  /** Ordered mode: an auto commit while handlers still run, when one is due (one at a time). */
  private commit_in_background(run: ResolvedRunConfig): void {
    if (this.background_commit || !this.group_id || !run.autoCommit || this.generation_id < 0 || !this.commit_due(run)) return;
    this.background_commit = this.commit_resolved()
      .catch((error) => this.report(error))
      .finally(() => {
        this.background_commit = null;
      });
  }

  /** Hands one partition's fetched messages to the handler, in order. */
  private async process(state: PartitionState, epoch: number, messages: KafkaMessage[], next_offset: number, high_watermark: string): Promise<void> {
    const run = this.run_config!;
    const same = () => this.assignment.get(state.key) === state && state.epoch === epoch;
    const live = () => this.running && !this.needs_rejoin && same() && !this.is_paused(state);
    const pause = () => {
      this.pause([{ topic: state.topic, partitions: [state.partition] }]);
      return () => this.resume([{ topic: state.topic, partitions: [state.partition] }]);
    };
    const heartbeat = () => this.heartbeat_if_due();
    const resolve = (offset: number) => {
      if (!same() || (state.resolved !== null && offset + 1 <= state.resolved)) return;
      state.uncommitted += state.resolved === null ? 1 : offset + 1 - state.resolved;
      state.resolved = offset + 1;
    };
    if (run.eachMessage) {
      for (let i = 0; i < messages.length; i++) {
        const message = messages[i]!;
        const offset = Number(message.offset);
        if (!live()) {
          if (same()) state.position = offset;
          return;
        }
        try {
          await this.in_handler.run(true, () => run.eachMessage!({ topic: state.topic, partition: state.partition, message, heartbeat, pause }));
        } catch (error) {
          if (same()) state.position = offset;
          throw new HandlerError(error);
        }
        if (!same()) return; // a seek during the handler: the position is the seek's
        state.resolved = offset + 1;
        state.uncommitted++;
      }
      if (same()) {
        state.position = next_offset;
        state.resolved = next_offset;
      }
      return;
    }
    const first = Number(messages[0]!.offset);
    const last = Number(messages.at(-1)!.offset);
    const before = state.resolved;
    const batch = new FetchedBatch(state.topic, state.partition, high_watermark, messages);
    const payload: EachBatchPayload = {
      batch,
      resolveOffset: (offset) => resolve(to_offset(offset, 'resolveOffset')),
      heartbeat,
      pause,
      commitOffsetsIfNecessary: async (offsets) => {
        if (!this.group_id) return;
        if (offsets) {
          await this.commitOffsets(offsets.topics.flatMap((t) => t.partitions.map((p) => ({ topic: t.topic, partition: p.partition, offset: p.offset }))));
        } else if (this.commit_due(run)) await this.commit_resolved();
      },
      uncommittedOffsets: () => this.uncommitted_offsets(),
      isRunning: () => this.running,
      isStale: () => !live(),
    };
    const resume_point = () => {
      const resolved = state.resolved !== null && state.resolved !== before ? state.resolved : null;
      if (resolved === null || resolved < first) return first;
      return resolved > last ? next_offset : resolved;
    };
    try {
      await this.in_handler.run(true, () => run.eachBatch!(payload));
    } catch (error) {
      if (same()) state.position = resume_point();
      throw new HandlerError(error);
    }
    if (!same()) return;
    if (run.eachBatchAutoResolve) {
      resolve(last);
      state.resolved = next_offset;
      state.position = next_offset;
    } else state.position = resume_point();
  }

  // ---------------------------------------------------------------- the group protocol

  private async coordinator(): Promise<BrokerConnection> {
    if (!this.coordinator_cluster) {
      this.coordinator_lookup ??= this.find_coordinator().finally(() => {
        this.coordinator_lookup = null;
      });
      this.coordinator_cluster = await this.coordinator_lookup;
    }
    return this.coordinator_cluster.any();
  }

  private async find_coordinator(): Promise<Cluster> {
    const group_id = this.group_id!;
    const { host, port } = await this.cluster.with_retry('FindCoordinator', async () => {
      const connection = await this.cluster.any();
      const { version, response } = await connection.send(FIND_COORDINATOR, 0, 4, { key: group_id, key_type: 0, coordinator_keys: [group_id] });
      const entry = version >= 4 ? rows(response.coordinators)[0] : response;
      if (!entry) throw new KafkaProtocolError(ErrorCode.COORDINATOR_NOT_AVAILABLE, `FindCoordinator for group ${group_id}`);
      check_code(entry.error_code as number, `FindCoordinator for group ${group_id}`, entry.error_message as string | null);
      return { host: entry.host as string, port: entry.port as number };
    });
    const options = this.cluster.options;
    // JoinGroup may be held by the coordinator for up to the rebalance timeout.
    return new Cluster({ ...options, brokers: [`${host}:${port}`], request_timeout_ms: Math.max(options.request_timeout_ms, this.config.rebalanceTimeout + 5_000) });
  }

  private forget_coordinator(): void {
    const cluster = this.coordinator_cluster;
    this.coordinator_cluster = null;
    void cluster?.close();
  }

  private async group_send(api: ApiSpec, min: number, max: number, body: Value): Promise<{ version: number; response: Value }> {
    try {
      const connection = await this.coordinator();
      return await connection.send(api, min, max, body);
    } catch (error) {
      if (error instanceof ConnectionError) this.forget_coordinator();
      throw error;
    }
  }

  /**
   * A group request with retries for connection and coordinator errors; `check` reads the response
   * (and throws for errors of its own).
   */
  private group_call(what: string, api: ApiSpec, min: number, max: number, body: Value, check: (response: Value, version: number) => void): Promise<Value> {
    return this.cluster.with_retry(what, async () => {
      const { version, response } = await this.group_send(api, min, max, body);
      const code = (response.error_code as number | undefined) ?? 0;
      if (COORDINATOR_CODES.has(code)) {
        this.forget_coordinator();
        throw new KafkaProtocolError(code, `${what} for group ${this.group_id!}`);
      }
      for (const topic of rows(response.topics)) {
        for (const partition of rows(topic.partitions)) {
          if (COORDINATOR_CODES.has(partition.error_code as number)) {
            this.forget_coordinator();
            throw new KafkaProtocolError(partition.error_code as number, `${what} for group ${this.group_id!}`);
          }
        }
      }
      check(response, version);
      return response;
    });
  }

  private async fetch_committed(states: PartitionState[]): Promise<Map<string, number>> {
    const response = await this.group_call(
      'OffsetFetch',
      OFFSET_FETCH,
      1,
      7,
      {
        group_id: this.group_id,
        topics: [...group_by(states, (s) => s.topic)].map(([name, list]) => ({ name, partition_indexes: list.map((s) => s.partition) })),
        require_stable: true,
      },
      (r, version) => {
        if (version >= 2) check_code(r.error_code as number, `OffsetFetch for group ${this.group_id!}`);
      },
    );
    const out = new Map<string, number>();
    for (const topic of rows(response.topics)) {
      for (const partition of rows(topic.partitions)) {
        check_code(partition.error_code as number, `OffsetFetch ${topic.name as string}/${partition.partition_index as number}`);
        out.set(key_of(topic.name as string, partition.partition_index as number), partition.committed_offset as number);
      }
    }
    return out;
  }

  private request_rejoin(): void {
    if (!this.needs_rejoin) {
      this.needs_rejoin = true;
      this.emit(ConsumerEvents.REBALANCING, { groupId: this.group_id, memberId: this.member_id });
    }
    this.wakeup.fire();
    this.heartbeat_wakeup.fire();
  }

  private on_group_error(code: number): void {
    if (code === ErrorCode.UNKNOWN_MEMBER_ID) {
      this.member_id = '';
      this.generation_id = -1;
    }
    this.request_rejoin();
  }

  /** Revokes everything (commit, onPartitionsRevoked), joins, syncs, and takes the new assignment. */
  private async rebalance(): Promise<void> {
    this.heartbeat_wakeup.fire();
    if (this.assignment.size > 0) {
      if (this.run_config?.autoCommit && this.generation_id >= 0) await this.commit_resolved().catch((error) => this.report(error));
      const revoked = this.assignment_list();
      this.assignment.clear();
      await this.call_listener('onPartitionsRevoked', revoked);
    }
    if (!this.running) return;
    const started = Date.now();
    const assigned = await this.join_and_sync();
    if (!this.running) return;
    for (const [topic, partitions] of Object.entries(assigned)) {
      if (!this.subscriptions.has(topic)) continue; // a leader's mistake: not ours to read
      for (const partition of partitions) {
        const state = this.new_state(topic, partition);
        this.assignment.set(state.key, state);
      }
    }
    this.needs_rejoin = false;
    this.start_heartbeats(this.generation_id);
    this.apply_pending_seeks();
    const list = this.assignment_list();
    this.emit(ConsumerEvents.GROUP_JOIN, {
      groupId: this.group_id,
      memberId: this.member_id,
      leaderId: this.leader_id,
      isLeader: this.leader_id === this.member_id,
      memberAssignment: Object.fromEntries(list.map((t) => [t.topic, t.partitions])),
      groupProtocol: this.protocol_name,
      duration: Date.now() - started,
    });
    await this.call_listener('onPartitionsAssigned', list);
  }

  private protocols(): Array<{ name: string; metadata: Buffer }> {
    const topics = [...this.subscriptions.keys()].sort();
    const out: Array<{ name: string; metadata: Buffer }> = [];
    for (const assigner of this.assigners) {
      const { name, metadata } = assigner.protocol({ topics });
      for (const offered of [name, ...(assigner.aliases ?? [])]) {
        if (!out.some((p) => p.name === offered)) out.push({ name: offered, metadata });
      }
    }
    return out;
  }

  private async join_and_sync(): Promise<Record<string, number[]>> {
    const group_id = this.group_id!;
    const instance_id = this.config.groupInstanceId ?? null;
    const protocols = this.protocols();
    this.joining = true;
    try {
      for (let attempt = 0; attempt < JOIN_ATTEMPTS_MAX; attempt++) {
        if (!this.running) return {};
        const { response: join } = await this.group_send(JOIN_GROUP, instance_id ? 5 : 0, 7, {
          group_id,
          session_timeout_ms: this.config.sessionTimeout,
          rebalance_timeout_ms: this.config.rebalanceTimeout,
          member_id: this.member_id,
          group_instance_id: instance_id,
          protocol_type: 'consumer',
          protocols,
          reason: null,
        });
        const join_code = join.error_code as number;
        if (join_code === ErrorCode.MEMBER_ID_REQUIRED) {
          this.member_id = join.member_id as string;
          continue;
        }
        if (join_code === ErrorCode.UNKNOWN_MEMBER_ID) {
          this.member_id = '';
          continue;
        }
        if (join_code === ErrorCode.REBALANCE_IN_PROGRESS) continue;
        if (COORDINATOR_CODES.has(join_code)) {
          this.forget_coordinator();
          await this.wakeup.wait(this.cluster.options.retry.initial_retry_ms);
          continue;
        }
        check_code(join_code, `JoinGroup ${group_id}`);
        this.member_id = join.member_id as string;
        this.generation_id = join.generation_id as number;
        this.leader_id = join.leader as string;
        this.protocol_name = (join.protocol_name as string | null) ?? null;
        const assignments = this.leader_id === this.member_id ? await this.compute_assignment(rows(join.members)) : [];
        const { response: sync } = await this.group_send(SYNC_GROUP, instance_id ? 3 : 0, 5, {
          group_id,
          generation_id: this.generation_id,
          member_id: this.member_id,
          group_instance_id: instance_id,
          protocol_type: 'consumer',
          protocol_name: this.protocol_name,
          assignments,
        });
        const sync_code = sync.error_code as number;
        if (REJOIN_CODES.has(sync_code)) {
          if (sync_code === ErrorCode.UNKNOWN_MEMBER_ID) this.member_id = '';
          continue;
        }
        if (COORDINATOR_CODES.has(sync_code)) {
          this.forget_coordinator();
          await this.wakeup.wait(this.cluster.options.retry.initial_retry_ms);
          continue;
        }
        check_code(sync_code, `SyncGroup ${group_id}`);
        return AssignerProtocol.MemberAssignment.decode(sync.assignment as Buffer)?.assignment ?? {};
      }
      throw new KafkaProtocolError(ErrorCode.REBALANCE_IN_PROGRESS, `joining group ${group_id} did not settle after ${JOIN_ATTEMPTS_MAX} attempts`);
    } finally {
      this.joining = false;
    }
  }

  /** The leader's work: every member's assignment, by the assignor the group chose. */
  private async compute_assignment(members: Value[]): Promise<Array<{ member_id: string; assignment: Buffer }>> {
    const protocol = this.protocol_name ?? '';
    const assigner = this.assigners.find((a) => a.name === protocol || (a.aliases ?? []).includes(protocol));
    if (!assigner) throw new SluiceError(`group ${this.group_id!} chose assignor ${protocol}, which this consumer does not have`, false);
    const group_members = members.map((m) => ({ memberId: m.member_id as string, memberMetadata: m.metadata as Buffer, groupInstanceId: (m.group_instance_id as string | null | undefined) ?? null }));
    const topics = [...new Set(group_members.flatMap((m) => AssignerProtocol.MemberMetadata.decode(m.memberMetadata)?.topics ?? []))].sort();
    await this.cluster.with_retry('metadata', () => this.cluster.refresh_metadata(topics));
    this.assigned_counts = new Map(topics.flatMap((t) => {
      const info = this.cluster.topics.get(t);
      return info ? [[t, info.partitions.length] as [string, number]] : [];
    }));
    this.last_metadata_check = Date.now();
    const result = await assigner.assign({ members: group_members, topics });
    const empty = AssignerProtocol.MemberAssignment.encode({ version: 0, assignment: {} });
    return group_members.map((m) => ({ member_id: m.memberId, assignment: result.find((r) => r.memberId === m.memberId)?.memberAssignment ?? empty }));
  }

  private start_heartbeats(generation: number): void {
    this.heartbeat_wakeup = new Signal();
    const wakeup = this.heartbeat_wakeup;
    this.last_heartbeat = Date.now();
    const current = () => this.running && this.generation_id === generation && !this.needs_rejoin && this.heartbeat_wakeup === wakeup;
    void (async () => {
      while (current()) {
        await wakeup.wait(Math.max(0, this.config.heartbeatInterval - (Date.now() - this.last_heartbeat)));
        if (!current()) return;
        await this.heartbeat().catch(() => {});
      }
    })();
  }

  /** The payload's heartbeat(): the background heartbeats usually make it a no-op. Never throws. */
  private async heartbeat_if_due(): Promise<void> {
    if (!this.group_id || this.generation_id < 0 || Date.now() - this.last_heartbeat < this.config.heartbeatInterval) return;
    await this.heartbeat().catch((error) => this.report(error));
  }

  private heartbeat(): Promise<void> {
    this.heartbeat_in_flight ??= (async () => {
      const generation = this.generation_id;
      const { response } = await this.group_send(HEARTBEAT, this.config.groupInstanceId ? 3 : 0, 4, {
        group_id: this.group_id,
        generation_id: generation,
        member_id: this.member_id,
        group_instance_id: this.config.groupInstanceId ?? null,
      });
      this.last_heartbeat = Date.now();
      const code = response.error_code as number;
      if (generation !== this.generation_id) return;
      if (code === ErrorCode.NONE) {
        this.emit(ConsumerEvents.HEARTBEAT, { groupId: this.group_id, memberId: this.member_id, groupGenerationId: generation });
        return;
      }
      if (REJOIN_CODES.has(code)) return this.on_group_error(code);
      if (COORDINATOR_CODES.has(code)) return this.forget_coordinator();
      // FENCED_INSTANCE_ID and the like: this member is out for good.
      const error = new KafkaProtocolError(code, `Heartbeat for group ${this.group_id!}`);
      this.emit(ConsumerEvents.CRASH, { error, groupId: this.group_id, restart: false });
      this.running = false;
      this.first_join?.reject(error);
      void this.begin_stop();
    })().finally(() => {
      this.heartbeat_in_flight = null;
    });
    return this.heartbeat_in_flight;
  }

  private async leave_group(): Promise<void> {
    this.heartbeat_wakeup.fire();
    const member_id = this.member_id;
    const instance_id = this.config.groupInstanceId ?? null;
    this.generation_id = -1;
    this.leader_id = '';
    this.needs_rejoin = true;
    // Static members keep their place until the session times out, so a restart does not rebalance.
    if (instance_id !== null || member_id === '') return;
    this.member_id = '';
    const { version, response } = await this.group_send(LEAVE_GROUP, 0, 4, {
      group_id: this.group_id,
      member_id,
      members: [{ member_id, group_instance_id: null, reason: 'the consumer is stopping' }],
    });
    const code = version >= 3 ? ((response.error_code as number) || ((rows(response.members)[0]?.error_code as number | undefined) ?? 0)) : (response.error_code as number);
    if (code !== ErrorCode.NONE && code !== ErrorCode.UNKNOWN_MEMBER_ID) throw new KafkaProtocolError(code, `LeaveGroup ${this.group_id!}`);
  }
}
