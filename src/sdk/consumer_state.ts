// What the parts of a consumer share: its resolved configuration, the subscription, the assigned
// partitions with their positions, pauses, pending seeks, whether it runs or must join again, the
// instrumentation events and the small helpers they all use. It sends no requests: the group
// protocol is consumer_group.ts, commits consumer_committer.ts, fetching consumer_fetcher.ts and
// the handlers consumer_runner.ts; consumer.ts puts them together.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { Cluster } from './cluster.ts';
import { SluiceError } from './errors.ts';
import { ErrorCode } from '../protocol/kafka/error_codes.ts';
import {
  ConsumerEvents,
  type ConsumerConfig,
  type ConsumerEventName,
  type ConsumerRunConfig,
  type InstrumentationEvent,
  type TopicPartitions,
} from './consumer_types.ts';

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

export type ResolvedConsumerConfig = Required<Pick<ConsumerConfig, keyof typeof DEFAULTS>> & ConsumerConfig;

/** Group errors after which the member joins again. */
export const REJOIN_CODES = new Set<number>([
  ErrorCode.REBALANCE_IN_PROGRESS,
  ErrorCode.ILLEGAL_GENERATION,
  ErrorCode.UNKNOWN_MEMBER_ID,
  // KIP-848 members: a commit with an epoch the coordinator moved past; a member out of the group.
  ErrorCode.STALE_MEMBER_EPOCH,
  ErrorCode.FENCED_MEMBER_EPOCH,
]);
/** The coordinator moved or is not ready: find it again. */
export const COORDINATOR_CODES = new Set<number>([
  ErrorCode.NOT_COORDINATOR,
  ErrorCode.COORDINATOR_NOT_AVAILABLE,
  ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
]);
export const EARLIEST = -2;
export const LATEST = -1;

export interface PartitionState {
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
  /**
   * Ordered mode: offsets at or after the position already handled (other keys ran ahead); skipped
   * when fetched again.
   */
  done_ahead: Set<number>;
}

export type SeekTarget = { offset: number } | { reset: 'earliest' | 'latest' };

export interface ResolvedRunConfig {
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

/** What a thrown value says about itself: its `message` when it has one. */
function message_of(cause: unknown): unknown {
  const message = typeof cause === 'object' && cause !== null && 'message' in cause ? cause.message : undefined;
  return message ?? cause;
}

/** A handler (eachMessage / eachBatch / listener) threw: the work is retried after a backoff. */
export class HandlerError extends SluiceError {
  constructor(cause: unknown) {
    super(`a consumer handler failed: ${String(message_of(cause))}`, true, { cause });
  }
}

/** A sleep that ends early when fired. */
export class Signal {
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

export interface Deferred {
  promise: Promise<void>;
  resolve(): void;
  reject(error: unknown): void;
  settled: boolean;
}

export function deferred(): Deferred {
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

export function key_of(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

export function to_offset(value: string | number, what: string): number {
  const offset = typeof value === 'number' ? value : Number(value);
  if (!Number.isSafeInteger(offset)) throw new SluiceError(`${what}: offset ${String(value)} is not an integer`, false);
  return offset;
}

export function group_by<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = groups.get(k);
    if (list) list.push(item);
    else groups.set(k, [item]);
  }
  return groups;
}

export function new_partition_state(topic: string, partition: number): PartitionState {
  return {
    topic,
    partition,
    key: key_of(topic, partition),
    position: null,
    reset: null,
    commit_on_resolve: false,
    resolved: null,
    committed: null,
    uncommitted: 0,
    epoch: 0,
    done_ahead: new Set(),
  };
}

/** `value` unless it is undefined (a key given as undefined counts as left out). */
function or_default<T>(value: T | undefined, fallback: T): T {
  return value === undefined ? fallback : value;
}

function resolve_config(config: ConsumerConfig): ResolvedConsumerConfig {
  return {
    ...config,
    sessionTimeout: or_default(config.sessionTimeout, DEFAULTS.sessionTimeout),
    rebalanceTimeout: or_default(config.rebalanceTimeout, DEFAULTS.rebalanceTimeout),
    heartbeatInterval: or_default(config.heartbeatInterval, DEFAULTS.heartbeatInterval),
    metadataMaxAge: or_default(config.metadataMaxAge, DEFAULTS.metadataMaxAge),
    maxWaitTimeInMs: or_default(config.maxWaitTimeInMs, DEFAULTS.maxWaitTimeInMs),
    minBytes: or_default(config.minBytes, DEFAULTS.minBytes),
    maxBytes: or_default(config.maxBytes, DEFAULTS.maxBytes),
    maxBytesPerPartition: or_default(config.maxBytesPerPartition, DEFAULTS.maxBytesPerPartition),
    readUncommitted: read_uncommitted(config),
  };
}

/** `isolationLevel` and kafkajs's `readUncommitted` name one setting: read_committed unless either says otherwise. */
function read_uncommitted({ isolationLevel, readUncommitted }: ConsumerConfig): boolean {
  if (isolationLevel === undefined) return readUncommitted ?? false;
  if (isolationLevel !== 'read_committed' && isolationLevel !== 'read_uncommitted') {
    throw new SluiceError(
      `isolationLevel must be 'read_committed' or 'read_uncommitted', not ${String(isolationLevel)}`,
      false,
    );
  }
  const uncommitted = isolationLevel === 'read_uncommitted';
  if (readUncommitted !== undefined && readUncommitted !== uncommitted) {
    throw new SluiceError(`readUncommitted ${readUncommitted} contradicts isolationLevel ${isolationLevel}`, false);
  }
  return uncommitted;
}

type Listener = (event: InstrumentationEvent<never>) => void;

/** The state every part of one consumer reads and changes. */
export class ConsumerContext {
  readonly config: ResolvedConsumerConfig;
  readonly group_id: string | null;
  /** Set while a handler or listener of this consumer runs (stop() from inside one returns at once). */
  readonly in_handler = new AsyncLocalStorage<boolean>();
  private readonly listeners = new Map<string, Set<Listener>>();
  private next_event_id = 0;

  /** topic → fromBeginning */
  readonly subscriptions = new Map<string, boolean>();
  readonly assignment = new Map<string, PartitionState>();
  readonly pending_seeks = new Map<string, SeekTarget>();
  private readonly paused_topics = new Set<string>();
  private readonly paused_partitions = new Set<string>();

  run_config: ResolvedRunConfig | null = null;
  running = false;
  needs_rejoin = true;
  first_join: Deferred | null = null;
  /** Wakes the main loop from its waits (stop, seek, resume, rebalance). */
  readonly wakeup = new Signal();
  /** When partition counts were last checked (metadataMaxAge). */
  last_metadata_check = Date.now();

  constructor(
    readonly cluster: Cluster,
    config: ConsumerConfig,
  ) {
    this.config = resolve_config(config);
    this.group_id = config.groupId ?? null;
  }

  // ---------------------------------------------------------------- events

  on<T>(event: ConsumerEventName, listener: (event: InstrumentationEvent<T>) => void): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    const listeners = set;
    listeners.add(listener);
    return () => listeners.delete(listener);
  }

  emit(type: ConsumerEventName, payload: Record<string, unknown> = {}): void {
    const set = this.listeners.get(type);
    if (!set || set.size === 0) return;
    // Listeners name the payload type they expect (on<T>); the payloads are built for them.
    const event = { id: this.next_event_id++, type, timestamp: Date.now(), payload } as InstrumentationEvent<never>;
    for (const listener of set) {
      try {
        listener(event);
      } catch {
        // a listener's failure is its own
      }
    }
  }

  /** A failure the consumer goes on after (a commit, a leave): reported as a crash with restart. */
  report(error: unknown): void {
    this.emit(ConsumerEvents.CRASH, { error, groupId: this.group_id, restart: true });
  }

  // ---------------------------------------------------------------- pauses and the assignment

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
        for (const key of [...this.paused_partitions]) {
          if (key.startsWith(`${topic}\u0000`)) this.paused_partitions.delete(key);
        }
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

  /**
   * The paused topic partitions among those assigned (whole topics paused are listed with their
   * assigned partitions).
   */
  paused(): TopicPartitions[] {
    const out = new Map<string, number[]>();
    for (const state of this.assignment.values()) {
      if (this.is_paused(state)) out.set(state.topic, [...(out.get(state.topic) ?? []), state.partition]);
    }
    for (const topic of this.paused_topics) if (!out.has(topic)) out.set(topic, []);
    return [...out].map(([topic, partitions]) => ({ topic, partitions: partitions.sort((a, b) => a - b) }));
  }

  is_paused(state: PartitionState): boolean {
    return this.paused_topics.has(state.topic) || this.paused_partitions.has(state.key);
  }

  assignment_list(): TopicPartitions[] {
    const by_topic = group_by([...this.assignment.values()], (s) => s.topic);
    return [...by_topic].map(([topic, states]) => ({
      topic,
      partitions: states.map((s) => s.partition).sort((a, b) => a - b),
    }));
  }

  /** Where a partition without a committed offset starts: the subscription's fromBeginning. */
  default_reset(topic: string): 'earliest' | 'latest' {
    return this.subscriptions.get(topic) ? 'earliest' : 'latest';
  }

  async call_listener(
    name: 'onPartitionsAssigned' | 'onPartitionsRevoked',
    assignment: TopicPartitions[],
  ): Promise<void> {
    const listener = this.config[name];
    if (!listener) return;
    try {
      await this.in_handler.run(true, () => listener(assignment));
    } catch (error) {
      throw new HandlerError(error);
    }
  }
}
