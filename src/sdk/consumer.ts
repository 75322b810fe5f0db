// The SDK consumer, in kafkajs's shape: subscribe, run with eachMessage or eachBatch, commit, seek,
// pause and resume, rebalance listeners. This file is the public Consumer: its lifecycle, the main
// loop and what happens around a rebalance; the work is done by its parts:
//   consumer_state.ts      the state they share (assignment, positions, pauses, events)
//   consumer_group.ts      group membership: coordinator, JoinGroup/SyncGroup, heartbeats, LeaveGroup
//   consumer_committer.ts  committed offsets: OffsetFetch, OffsetCommit, auto commits
//   consumer_fetcher.ts    starting positions (ListOffsets) and the Fetch rounds
//   consumer_runner.ts     the eachMessage / eachBatch handlers (and ordered mode)
//   consumer_types.ts      the public types, re-exported here
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
import type { Cluster } from './cluster.ts';
import { KafkaProtocolError, SluiceError, is_retriable } from './errors.ts';
import { roundRobin } from './assignors.ts';
import {
  ConsumerEvents,
  type ConsumerConfig,
  type ConsumerEventName,
  type ConsumerRunConfig,
  type ConsumerSubscription,
  type InstrumentationEvent,
  type TopicPartitionOffset,
  type TopicPartitionOffsetAndMetadata,
  type TopicPartitions,
} from './consumer_types.ts';
import {
  COORDINATOR_CODES,
  ConsumerContext,
  EARLIEST,
  HandlerError,
  LATEST,
  REJOIN_CODES,
  deferred,
  group_by,
  key_of,
  new_partition_state,
  to_offset,
  type PartitionState,
  type SeekTarget,
} from './consumer_state.ts';
import { GroupMembership } from './consumer_group.ts';
import { ConsumerProtocolMembership, reconcile } from './consumer_group_protocol.ts';
import { OffsetCommitter } from './consumer_committer.ts';
import { Fetcher } from './consumer_fetcher.ts';
import { Runner } from './consumer_runner.ts';
import { transactional_each_batch, type TransactionalRunConfig } from './consumer_transactions.ts';
import type { ConsumerGroupMetadata } from './producer_transaction.ts';

export type { KafkaMessage, IHeaders } from './records.ts';
export type { EachTransactionPayload, TransactionalRunConfig } from './consumer_transactions.ts';
export {
  ConsumerEvents,
  type Batch,
  type ConsumerConfig,
  type ConsumerEventName,
  type ConsumerRunConfig,
  type ConsumerSubscription,
  type EachBatchPayload,
  type EachMessagePayload,
  type InstrumentationEvent,
  type OffsetsByTopicPartition,
  type TopicPartition,
  type TopicPartitionOffset,
  type TopicPartitionOffsetAndMetadata,
  type TopicPartitions,
} from './consumer_types.ts';

/** How often a group leader looks for a subscribed topic the metadata did not show when it assigned. */
const MISSING_TOPIC_CHECK_MS = 1_000;

export class Consumer {
  readonly events = ConsumerEvents;
  private readonly ctx: ConsumerContext;
  private readonly group: GroupMembership;
  private readonly committer: OffsetCommitter;
  private readonly fetcher: Fetcher;
  private loop: Promise<void> | null = null;
  private stopping: Promise<void> | null = null;

  constructor(cluster: Cluster, config: ConsumerConfig = {}) {
    const ctx = new ConsumerContext(cluster, config);
    this.ctx = ctx;
    if (ctx.group_id === '') {
      throw new SluiceError('groupId must not be empty (leave it out for broadcast mode)', false);
    }
    const factories =
      config.partitionAssigners && config.partitionAssigners.length > 0 ? config.partitionAssigners : [roundRobin];
    const assigners = factories.map((factory) => factory({ cluster, groupId: ctx.group_id ?? '' }));
    const fenced = (error: KafkaProtocolError) => this.fenced(error);
    this.group =
      config.groupProtocol === 'consumer'
        ? new ConsumerProtocolMembership(ctx, fenced)
        : new GroupMembership(ctx, assigners, fenced);
    this.committer = new OffsetCommitter(ctx, this.group);
    this.fetcher = new Fetcher(ctx, this.committer, new Runner(ctx, this.group, this.committer));
  }

  private get cluster(): Cluster {
    return this.ctx.cluster;
  }

  // ---------------------------------------------------------------- events

  /** Listens to an instrumentation event; returns a function that removes the listener. */
  on<T = Record<string, unknown>>(
    event: ConsumerEventName,
    listener: (event: InstrumentationEvent<T>) => void,
  ): () => void {
    return this.ctx.on(event, listener);
  }

  // ---------------------------------------------------------------- lifecycle

  async connect(): Promise<void> {
    await this.cluster.any();
    this.ctx.emit(ConsumerEvents.CONNECT);
  }

  /** Adds topics (names or patterns matched against the existing topics) to the subscription. */
  async subscribe(subscription: ConsumerSubscription): Promise<void> {
    if (this.loop) throw new SluiceError('cannot subscribe while the consumer is running; stop it first', false);
    const wanted = 'topics' in subscription ? subscription.topics : [subscription.topic];
    if (!Array.isArray(wanted) || wanted.length === 0) {
      throw new SluiceError('subscribe needs a topic or topics', false);
    }
    const from_beginning = Boolean(subscription.fromBeginning);
    const names: string[] = [];
    const patterns = wanted.filter((t): t is RegExp => t instanceof RegExp);
    if (patterns.length > 0) {
      await this.cluster.with_retry('metadata', () => this.cluster.refresh_metadata(null));
      for (const info of this.cluster.topics.values()) {
        const matches = patterns.some((p) => new RegExp(p.source, p.flags.replace('g', '')).test(info.name));
        if (!info.is_internal && matches) names.push(info.name);
      }
    }
    for (const topic of wanted) {
      if (typeof topic !== 'string') continue;
      if (topic === '') throw new SluiceError('a topic name must not be empty', false);
      await this.cluster.topic(topic, this.ctx.config.allowAutoTopicCreation ?? true);
      names.push(topic);
    }
    for (const name of names) this.ctx.subscriptions.set(name, from_beginning);
  }

  /**
   * Starts consuming in the background; resolves once the first assignment is in place (after the
   * first JoinGroup/SyncGroup, or in broadcast mode once the partitions are known) and its starting
   * positions are known, so anything produced afterwards is received. Rejects when that fails for
   * good.
   */
  async run(config: ConsumerRunConfig = {}): Promise<void> {
    const ctx = this.ctx;
    if (this.stopping) await this.stopping;
    if (this.loop) throw new SluiceError('the consumer is already running', false);
    if (!config.eachMessage === !config.eachBatch) {
      throw new SluiceError('run needs exactly one of eachMessage and eachBatch', false);
    }
    if (ctx.subscriptions.size === 0) throw new SluiceError('subscribe to a topic before run', false);
    const interval = config.autoCommitInterval === undefined ? 5_000 : config.autoCommitInterval;
    const run = {
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
    ctx.run_config = run;
    if (run.orderBy !== 'key' && run.orderBy !== 'partition') {
      throw new SluiceError(`orderBy must be 'key' or 'partition', not ${String(config.orderBy)}`, false);
    }
    run.ordered = run.concurrency > 1 || run.orderBy === 'key';
    if (run.ordered && config.eachBatch) {
      throw new SluiceError('concurrency and orderBy apply to eachMessage, not eachBatch', false);
    }
    ctx.running = true;
    ctx.needs_rejoin = true;
    this.committer.last_commit = Date.now();
    ctx.first_join = deferred();
    const first = ctx.first_join;
    this.loop = this.main_loop();
    await first.promise;
  }

  /**
   * Consume-transform-produce, exactly once: `eachBatch` runs inside a transaction of `producer`
   * (a transactional producer, one per consumer instance) that also commits the batch's input
   * offsets; a failure aborts it and the batch is fetched again. Partitions are handled one at a
   * time (a producer has one transaction open at a time). Needs a groupId.
   */
  runInTransactions(config: TransactionalRunConfig): Promise<void> {
    this.groupMetadata(); // refuses a consumer without a group before anything starts
    return this.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: 1,
      eachBatch: transactional_each_batch(config, this),
    });
  }

  /** The group, generation and member this consumer is (what a transaction's offsets are checked against). */
  groupMetadata(): ConsumerGroupMetadata {
    const group_id = this.ctx.group_id;
    if (group_id === null) throw new SluiceError('a consumer without a groupId has no group metadata', false);
    return {
      groupId: group_id,
      generationId: this.group.generation_id,
      memberId: this.group.member_id,
      groupInstanceId: this.ctx.config.groupInstanceId ?? null,
    };
  }

  /**
   * Stops fetching, waits for the handlers in progress, commits what they finished (with autoCommit),
   * calls onPartitionsRevoked and leaves the group (static members stay until their session ends).
   * Called from inside a handler, it returns at once and the stop completes after that handler.
   */
  stop(): Promise<void> {
    const stopping = this.begin_stop();
    return this.ctx.in_handler.getStore() ? Promise.resolve() : stopping;
  }

  /** Starts stopping (once) and returns the promise of the whole stop. */
  private begin_stop(): Promise<void> {
    if (this.stopping) return this.stopping;
    if (!this.loop) return Promise.resolve();
    this.ctx.running = false;
    this.ctx.wakeup.fire();
    this.group.wake_heartbeats();
    // A JoinGroup may wait for a whole rebalance: abandon it (the member is left below).
    if (this.group.joining) this.group.forget_coordinator();
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
    const ctx = this.ctx;
    if (ctx.group_id) {
      if (ctx.run_config?.autoCommit && this.group.generation_id >= 0) {
        await this.committer.commit_resolved().catch((error) => ctx.report(error));
      }
      if (ctx.assignment.size > 0) {
        await ctx.call_listener('onPartitionsRevoked', ctx.assignment_list()).catch((error) => ctx.report(error));
      }
      await this.group.leave_group().catch((error) => ctx.report(error));
    }
    ctx.assignment.clear();
    this.fetcher.clear_prefetched();
    ctx.first_join?.resolve();
    ctx.emit(ConsumerEvents.STOP);
  }

  /** A heartbeat showed this member is out of the group for good: the consumer stops. */
  private fenced(error: KafkaProtocolError): void {
    this.ctx.emit(ConsumerEvents.CRASH, { error, groupId: this.ctx.group_id, restart: false });
    this.ctx.running = false;
    this.ctx.first_join?.reject(error);
    void this.begin_stop();
  }

  /** Stops (see stop) and closes the consumer's own coordinator connection; the Cluster given stays open. */
  disconnect(): Promise<void> {
    const done = this.begin_stop().then(() => {
      this.group.forget_coordinator();
      this.ctx.emit(ConsumerEvents.DISCONNECT);
    });
    return this.ctx.in_handler.getStore() ? Promise.resolve() : done;
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
    if (value < EARLIEST) {
      throw new SluiceError(`seek ${topic}/${partition}: offset must be >= 0, -1 (latest) or -2 (earliest)`, false);
    }
    const target: SeekTarget =
      value === EARLIEST ? { reset: 'earliest' } : value === LATEST ? { reset: 'latest' } : { offset: value };
    const state = this.ctx.assignment.get(key_of(topic, partition));
    if (!state) {
      this.ctx.pending_seeks.set(key_of(topic, partition), target);
      return;
    }
    this.apply_seek(state, target);
    this.ctx.wakeup.fire();
  }

  /** Seeks to the first message with a timestamp at or after `timestamp` (ms); past the end when there is none. */
  async seekToTimestamp({
    topic,
    partition,
    timestamp,
  }: {
    topic: string;
    partition: number;
    timestamp: number | string;
  }): Promise<void> {
    const time = to_offset(timestamp, `seekToTimestamp ${topic}/${partition}`);
    const key = key_of(topic, partition);
    let offset = (await this.fetcher.list_offsets([{ topic, partition, timestamp: time }])).get(key) ?? -1;
    if (offset < 0) {
      offset = (await this.fetcher.list_offsets([{ topic, partition, timestamp: LATEST }])).get(key) ?? LATEST;
    }
    this.seek({ topic, partition, offset });
  }

  private apply_seek(state: PartitionState, target: SeekTarget): void {
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

  private apply_pending_seeks(): void {
    for (const [key, target] of this.ctx.pending_seeks) {
      const state = this.ctx.assignment.get(key);
      if (state) this.apply_seek(state, target);
    }
    this.ctx.pending_seeks.clear();
  }

  /** Stops fetching the given topics (all their partitions) or partitions until resumed. */
  pause(topics: Array<{ topic: string; partitions?: number[] }>): void {
    this.ctx.pause(topics);
  }

  resume(topics: Array<{ topic: string; partitions?: number[] }>): void {
    this.ctx.resume(topics);
  }

  /**
   * The paused topic partitions among those assigned (whole topics paused are listed with their
   * assigned partitions).
   */
  paused(): TopicPartitions[] {
    return this.ctx.paused();
  }

  /** The partitions currently assigned to this consumer. */
  assignments(): TopicPartitions[] {
    return this.ctx.assignment_list();
  }

  // ---------------------------------------------------------------- commits

  /** Commits the given offsets (each the next offset to consume, kafkajs's convention). Needs a groupId. */
  async commitOffsets(offsets: TopicPartitionOffsetAndMetadata[]): Promise<void> {
    await this.committer.commit_offsets(offsets);
  }

  // ---------------------------------------------------------------- the main loop

  private async main_loop(): Promise<void> {
    const ctx = this.ctx;
    let failures = 0;
    let joined_once = false;
    while (ctx.running) {
      try {
        if (ctx.needs_rejoin) {
          this.fetcher.clear_prefetched();
          if (ctx.group_id) await this.rebalance();
          else await this.assign_all();
          if (!ctx.running) break;
          joined_once = true;
        }
        await this.check_metadata();
        await this.fetcher.resolve_positions();
        // run() returns once the starting positions are known: what is produced after it is seen.
        if (joined_once && !ctx.needs_rejoin) ctx.first_join?.resolve();
        if (!ctx.running || ctx.needs_rejoin) continue;
        await this.fetcher.fetch_round();
        await this.committer.maybe_auto_commit();
        failures = 0;
      } catch (error) {
        if (!ctx.running) break;
        failures++;
        if (!this.keep_going(error, failures)) break;
        const { initial_retry_ms, max_retry_ms } = this.cluster.options.retry;
        const backoff = Math.min(max_retry_ms, initial_retry_ms * 2 ** Math.min(failures - 1, 16));
        await ctx.wakeup.wait(backoff * (0.8 + Math.random() * 0.4));
      }
    }
  }

  /** After a failure of the main loop: true to try again (after a backoff), false when the consumer gave up. */
  private keep_going(error: unknown, failures: number): boolean {
    const ctx = this.ctx;
    const group_error =
      error instanceof KafkaProtocolError && (REJOIN_CODES.has(error.code) || COORDINATOR_CODES.has(error.code));
    const retriable = error instanceof HandlerError || is_retriable(error) || group_error;
    // Until run() has returned, retries are bounded by the cluster's retry setting; after that
    // the consumer keeps trying (with backoff) until it is stopped.
    const starting = !(ctx.first_join?.settled ?? true);
    const give_up = !retriable || (starting && failures > this.cluster.options.retry.retries);
    ctx.emit(ConsumerEvents.CRASH, { error, groupId: ctx.group_id, restart: !give_up });
    if (!give_up) return true;
    ctx.running = false;
    ctx.first_join?.reject(error);
    // Leave the group and settle in the background; stop() or disconnect() waits for it.
    void this.begin_stop();
    return false;
  }

  /** Revokes everything (commit, onPartitionsRevoked), joins, syncs, and takes the new assignment. */
  private async rebalance(): Promise<void> {
    const ctx = this.ctx;
    const group = this.group;
    if (group instanceof ConsumerProtocolMembership) return this.reconcile(group);
    group.wake_heartbeats();
    if (ctx.assignment.size > 0) {
      if (ctx.run_config?.autoCommit && group.generation_id >= 0) {
        await this.committer.commit_resolved().catch((error) => ctx.report(error));
      }
      const revoked = ctx.assignment_list();
      ctx.assignment.clear();
      await ctx.call_listener('onPartitionsRevoked', revoked);
    }
    if (!ctx.running) return;
    const started = Date.now();
    const assigned = await group.join_and_sync();
    if (!ctx.running) return;
    for (const [topic, partitions] of Object.entries(assigned)) {
      if (!ctx.subscriptions.has(topic)) continue; // a leader's mistake: not ours to read
      for (const partition of partitions) {
        const state = new_partition_state(topic, partition);
        ctx.assignment.set(state.key, state);
      }
    }
    ctx.needs_rejoin = false;
    group.start_heartbeats(group.generation_id);
    this.apply_pending_seeks();
    const list = ctx.assignment_list();
    ctx.emit(ConsumerEvents.GROUP_JOIN, {
      groupId: ctx.group_id,
      memberId: group.member_id,
      leaderId: group.leader_id,
      isLeader: group.leader_id === group.member_id,
      memberAssignment: Object.fromEntries(list.map((t) => [t.topic, t.partitions])),
      groupProtocol: group.protocol_name,
      duration: Date.now() - started,
    });
    await ctx.call_listener('onPartitionsAssigned', list);
  }

  /** KIP-848: only the partitions that move are revoked or added; the others keep their positions. */
  private async reconcile(group: ConsumerProtocolMembership): Promise<void> {
    const ctx = this.ctx;
    const started = Date.now();
    const { assigned } = await reconcile(ctx, group, this.committer);
    if (!ctx.running) return;
    this.apply_pending_seeks();
    const list = ctx.assignment_list();
    ctx.emit(ConsumerEvents.GROUP_JOIN, {
      groupId: ctx.group_id,
      memberId: group.member_id,
      leaderId: '',
      isLeader: false,
      memberAssignment: Object.fromEntries(list.map((t) => [t.topic, t.partitions])),
      groupProtocol: ctx.config.groupRemoteAssignor ?? 'consumer',
      duration: Date.now() - started,
    });
    if (assigned.length > 0) await ctx.call_listener('onPartitionsAssigned', assigned);
  }

  /** Broadcast mode: every partition of every subscribed topic, positions kept across refreshes. */
  private async assign_all(): Promise<void> {
    const ctx = this.ctx;
    const topics = [...ctx.subscriptions.keys()];
    await this.cluster.with_retry('metadata', () => this.cluster.refresh_metadata(topics));
    const added: PartitionState[] = [];
    for (const topic of topics) {
      const info = this.cluster.topics.get(topic);
      for (const p of info?.partitions ?? []) {
        if (ctx.assignment.has(key_of(topic, p.partition))) continue;
        const state = new_partition_state(topic, p.partition);
        ctx.assignment.set(state.key, state);
        added.push(state);
      }
    }
    ctx.needs_rejoin = false;
    this.apply_pending_seeks();
    if (added.length > 0) {
      const list = [...group_by(added, (s) => s.topic)].map(([topic, states]) => ({
        topic,
        partitions: states.map((s) => s.partition),
      }));
      await ctx.call_listener('onPartitionsAssigned', list);
    }
  }

  /**
   * Every metadataMaxAge: new partitions are read (broadcast) or make the leader rebalance. A
   * leader that assigned while a subscribed topic was missing from the metadata looks every
   * MISSING_TOPIC_CHECK_MS instead: without it that topic would go unread until the next rebalance.
   */
  private async check_metadata(): Promise<void> {
    const ctx = this.ctx;
    const group = this.group;
    const missing = ctx.group_id !== null && [...group.assigned_counts.values()].includes(0);
    const interval_ms = missing
      ? Math.min(MISSING_TOPIC_CHECK_MS, ctx.config.metadataMaxAge)
      : ctx.config.metadataMaxAge;
    if (Date.now() - ctx.last_metadata_check < interval_ms) return;
    ctx.last_metadata_check = Date.now();
    if (!ctx.group_id) {
      ctx.needs_rejoin = true;
      return;
    }
    if (group.leader_id !== group.member_id || group.assigned_counts.size === 0) return;
    const topics = [...group.assigned_counts.keys()];
    await this.cluster.refresh_metadata(topics).catch(() => null);
    for (const topic of topics) {
      const count = this.cluster.topics.get(topic)?.partitions.length;
      if (count !== undefined && count !== group.assigned_counts.get(topic)) {
        group.request_rejoin();
        return;
      }
    }
  }
}
