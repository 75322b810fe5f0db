// Share groups (the queue model): members that heartbeat, the partitions each may fetch (every
// partition of its subscribed topics: consumers may outnumber partitions), and per group and
// partition a SharePartition with its durable state. Every change is persisted before the client
// hears of it; a timer expires locks, drops silent members and writes dead letters.
// Protocol-neutral: the Kafka front end (ShareGroupHeartbeat, ShareFetch, ShareAcknowledge) and
// later AMQP call these methods.
import type { Clock, Logger } from '../../core/clock.ts';
import type { PartitionReader } from '../../core/partition_reader.ts';
import { BrokerError } from '../../core/errors.ts';
import type { AppendRecords, TopicManager } from '../topics.ts';
import { SharePartition } from './share_partition.ts';
import { AckError } from '../../core/errors.ts';
import type { ShareStateStore } from './share_state_store.ts';
import { ShareStateWriter } from './share_state_writer.ts';
import { acquire_in, check_disjoint, offsets_in } from './share_fetch_read.ts';
import { track_ttl, write_dead_letters } from './share_expiry.ts';
import { ReadAhead } from './read_ahead.ts';
import { group_settings_of, type ShareGroupSettings } from './group_config.ts';
import { type GroupConfigs } from '../../core/types.ts';
import type {
  AcknowledgeBatch,
  FetchedPartition,
  HeartbeatRequest,
  HeartbeatResult,
  QueueSettings,
  QueueStats,
  ShareGroupDescription,
  TopicPartition,
} from '../../core/types.ts';
import { key_of, new_share_counters, visible_end, type Member, type PartitionState } from './share_group.ts';
import type { ShareGroup } from './share_group.ts';
import { describe_group, partitions_of, queue_stats, type PartitionSummary } from './share_stats.ts';
import { rethrow_invariant } from '../../core/invariants.ts';
import type { DeadLetterRouter } from '../routing/dead_lettering.ts';

/** Records one fetch may acquire across its partitions, whatever the client asks. */
export const FETCH_RECORDS_MAX = 10_000;
/** Every so many ticks, expiry times of finished records are dropped from the TTL index. */
const TTL_PRUNE_TICKS = 50;

export interface ShareCoordinatorDeps {
  topics: TopicManager;
  /** Where a partition's records are read: a local replica, or in a cluster the leader's (bounds known). */
  reader(topic: string, partition: number): Promise<PartitionReader>;
  /** The same without waiting (a remote partition's bounds may not be known yet). */
  reader_now(topic: string, partition: number): PartitionReader;
  store: ShareStateStore;
  logger: Logger;
  /** The wall clock: record time to live and dead letters' time header. */
  clock: Clock;
  /**
   * Every `now_ms` of this file: member sessions, acquisition locks and redelivery backoff are
   * durations, which a wall clock stepped back would stretch by the step (seed 20261206).
   */
  monotonic_clock: Clock;
  /** Creates a dead-letter topic (one partition) if it does not exist. */
  ensure_dead_letter_topic(name: string): Promise<void>;
  /** The group's own configs (group_config.ts), empty when it has none. */
  group_configs(group_id: string): GroupConfigs;
  /** Appends to a partition on its leader (dead letters). */
  append: AppendRecords;
  /** Routes a group's dead letters through its queue's dead-letter exchange; null: it has none. */
  route_dead_letters?: DeadLetterRouter;
}

export class ShareCoordinator {
  private readonly groups = new Map<string, ShareGroup>();
  private readonly waiters = new Map<string, Set<() => void>>();
  /** Per partition, the offset below which records were archived away (see skip_before). */
  private readonly floors = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> = Promise.resolve();
  private tick_running = false;
  private readonly writer: ShareStateWriter;
  /** Counters for metrics. */
  readonly counters = new_share_counters();
  private ticks = 0;

  constructor(
    private readonly deps: ShareCoordinatorDeps,
    readonly settings: ShareGroupSettings,
  ) {
    this.writer = new ShareStateWriter(deps.store);
  }

  /** Restores every group's partitions from the state topic (members re-join). */
  async load(): Promise<void> {
    const now = this.deps.monotonic_clock.now_ms();
    for (const persisted of await this.deps.store.load()) {
      if (!this.deps.topics.get(persisted.topic)) continue;
      const group = this.group(persisted.group);
      const share = SharePartition.restore(
        persisted.start_offset,
        persisted.end_offset,
        persisted.runs,
        group.settings,
        now,
      );
      const state: PartitionState = {
        topic: persisted.topic,
        partition: persisted.partition,
        share,
        ahead: new ReadAhead(share.start_offset),
        letters: share.take_dead_letters(),
      };
      group.partitions.set(key_of(persisted.topic, persisted.partition), state);
      this.writer.mark_dirty(group, state);
    }
    await this.writer.persist();
  }

  start(): void {
    this.timer = setInterval(() => {
      // One round at a time, none queued behind a slow one (a write waiting for the ISR): queued
      // rounds all failed at once when it did, a burst of the same warning.
      if (this.tick_running) return;
      this.tick_running = true;
      this.ticking = this.tick()
        .catch((error: unknown) => {
          rethrow_invariant(error);
          this.deps.logger.warn({ error: String(error) }, 'share group maintenance failed');
        })
        .finally(() => (this.tick_running = false));
    }, this.settings.tick_ms);
    this.timer.unref();
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.ticking;
    await this.writer.persist();
    for (const waiters of this.waiters.values()) for (const wake of waiters) wake();
  }

  private group(id: string): ShareGroup {
    let group = this.groups.get(id);
    if (!group) {
      group = {
        id,
        settings: group_settings_of(this.settings, this.deps.group_configs(id)),
        epoch: 0,
        members: new Map(),
        partitions: new Map(),
        counters: { redeliveries: 0, dead_lettered: 0, expired: 0 },
      };
      this.groups.set(id, group);
    }
    return group;
  }

  // ------------------------------------------------------------------ membership

  heartbeat(request: HeartbeatRequest, now_ms: number): HeartbeatResult {
    if (request.group_id === '') throw new BrokerError('invalid_group_id', 'a share group needs a non-empty group id');
    if (request.member_id === '')
      throw new BrokerError('invalid_request', 'the member id is generated by the consumer and must not be empty');
    const existing = this.groups.get(request.group_id);
    let member = existing?.members.get(request.member_id);
    if (request.member_epoch === -1) {
      if (existing && member) this.remove_member(existing, member, now_ms);
      return {
        member_id: request.member_id,
        member_epoch: -1,
        heartbeat_interval_ms: this.settings.heartbeat_interval_ms,
        assignment: new Map(),
      };
    }
    if (request.member_epoch !== 0 && !member)
      throw new BrokerError(
        'unknown_member_id',
        `member ${request.member_id} is not in share group ${request.group_id}`,
      );
    if (request.member_epoch === 0 && !request.subscribed_topic_names)
      throw new BrokerError('invalid_request', 'a joining member must name the topics it subscribes to');
    // Only a valid join creates the group.
    const group = existing ?? this.group(request.group_id);
    if (request.member_epoch === 0) {
      if (!member) {
        member = {
          id: request.member_id,
          epoch: 0,
          topics: [],
          last_seen_ms: now_ms,
          client_id: request.client_id,
          client_host: request.client_host,
        };
        group.members.set(member.id, member);
      }
    } else if (request.member_epoch !== member!.epoch) {
      throw new BrokerError(
        'fenced_member_epoch',
        `member epoch ${request.member_epoch} is not the current ${member!.epoch}`,
      );
    }
    member = member!;
    member.last_seen_ms = now_ms;
    if (request.subscribed_topic_names) {
      const topics = [...new Set(request.subscribed_topic_names)].sort();
      if (member.epoch === 0 || topics.join('\u0000') !== member.topics.join('\u0000')) {
        member.topics = topics;
        member.epoch = ++group.epoch;
      }
    }
    return {
      member_id: member.id,
      member_epoch: member.epoch,
      heartbeat_interval_ms: this.settings.heartbeat_interval_ms,
      assignment: this.assignment(member),
    };
  }

  /** Every partition of every subscribed topic that exists. */
  private assignment(member: Member): Map<string, number[]> {
    const assignment = new Map<string, number[]>();
    for (const name of member.topics) {
      const topic = this.deps.topics.get(name);
      if (topic)
        assignment.set(
          name,
          Array.from({ length: topic.partitions }, (_, i) => i),
        );
    }
    return assignment;
  }

  private remove_member(group: ShareGroup, member: Member, now_ms: number): void {
    group.members.delete(member.id);
    group.epoch++;
    for (const state of group.partitions.values()) {
      if (state.share.release_member(member.id, now_ms) > 0) this.after_change(group, state);
    }
    this.wake(group.id);
  }

  /** Throws unknown_member_id unless the member is in the group (before a front end keeps any state for it). */
  check_member(group_id: string, member_id: string): void {
    if (!this.groups.get(group_id)?.members.has(member_id))
      throw new BrokerError(
        'unknown_member_id',
        `member ${member_id} is not in share group ${group_id}; heartbeat first`,
      );
  }

  /** The member, known and current; refreshes its liveness. */
  private member(group_id: string, member_id: string, now_ms: number): { group: ShareGroup; member: Member } {
    const group = this.groups.get(group_id);
    const member = group?.members.get(member_id);
    if (!group || !member)
      throw new BrokerError(
        'unknown_member_id',
        `member ${member_id} is not in share group ${group_id}; heartbeat first`,
      );
    member.last_seen_ms = now_ms;
    return { group, member };
  }

  private partition_state(group: ShareGroup, topic: string, partition: number, log: PartitionReader): PartitionState {
    const key = key_of(topic, partition);
    let state = group.partitions.get(key);
    if (!state) {
      const earliest = Math.max(log.log_start_offset, this.floors.get(key) ?? 0);
      // 'latest' under read_committed is the last stable offset, as for a Kafka consumer: an open
      // transaction's records are not skipped because it had not ended yet.
      const start = group.settings.auto_offset_reset === 'earliest' ? earliest : visible_end(group.settings, log);
      state = {
        topic,
        partition,
        share: new SharePartition(start, group.settings),
        ahead: new ReadAhead(start),
        letters: [],
      };
      group.partitions.set(key, state);
      this.writer.mark_dirty(group, state);
    }
    return state;
  }

  /**
   * Keeps the group's state for every partition of `topic` from now on, before any member fetches
   * (an AMQP queue: its messages expire and its depth is known with nobody consuming).
   */
  async track(group_id: string, topic: string, partitions: number): Promise<void> {
    const group = this.group(group_id);
    for (let p = 0; p < partitions; p++) this.partition_state(group, topic, p, await this.deps.reader(topic, p));
    await this.writer.persist();
  }

  // ------------------------------------------------------------------ acknowledge and fetch

  /** Settles records; resolves once the new states are durable. Errors are per partition. */
  async acknowledge(
    group_id: string,
    member_id: string,
    acks: ReadonlyArray<TopicPartition & { batches: AcknowledgeBatch[] }>,
    now_ms: number,
  ): Promise<Map<string, Error | null>> {
    const { group } = this.member(group_id, member_id, now_ms);
    const results = new Map<string, Error | null>();
    for (const ack of acks) {
      const key = key_of(ack.topic, ack.partition);
      const state = group.partitions.get(key);
      if (!state) {
        results.set(
          key,
          new AckError(
            'invalid_record_state',
            `nothing of ${ack.topic}-${ack.partition} is acquired in share group ${group_id}`,
          ),
        );
        continue;
      }
      // All of a partition's batches or none, as Kafka does: check every one before settling any.
      try {
        check_disjoint(ack.batches);
        for (const batch of ack.batches) state.share.check_acknowledgement(member_id, batch, batch.types);
      } catch (caught) {
        if (!(caught instanceof AckError)) throw caught;
        results.set(key, caught);
        continue;
      }
      for (const batch of ack.batches) {
        state.share.acknowledge(
          member_id,
          batch,
          batch.types,
          now_ms,
          batch.reason ?? null,
          batch.release_delay_ms ?? -1,
        );
        this.count(batch);
      }
      this.after_change(group, state);
      results.set(key, null);
    }
    await this.writer.persist();
    this.wake(group_id);
    return results;
  }

  private count(batch: AcknowledgeBatch): void {
    const n = batch.last_offset - batch.first_offset + 1;
    for (let i = 0; i < n; i++) {
      const type = batch.types.length === 1 ? batch.types[0] : batch.types[i];
      if (type === 1 || type === 0) this.counters.accepted++;
      else if (type === 2) this.counters.released++;
      else if (type === 3) this.counters.rejected++;
    }
  }

  /**
   * Acquires records for the member from the partitions asked for (each must be assigned to it),
   * reads their batches within `bytes_max`, and resolves once the acquisitions are durable.
   */
  async fetch(
    group_id: string,
    member_id: string,
    partitions: readonly TopicPartition[],
    records_max: number,
    bytes_max: number,
    now_ms: number,
  ): Promise<FetchedPartition[]> {
    const { group, member } = this.member(group_id, member_id, now_ms);
    let records_left = Math.max(1, Math.min(records_max, FETCH_RECORDS_MAX));
    let bytes_left = Math.max(1, bytes_max);
    const fetched: FetchedPartition[] = [];
    for (const { topic, partition } of partitions) {
      const result: FetchedPartition = { topic, partition, acquired: [], batches: [], high_watermark: -1, error: null };
      fetched.push(result);
      try {
        if (!member.topics.includes(topic))
          throw new BrokerError('invalid_request', `${topic} is not among the member's subscribed topics`);
        const log = await this.deps.reader(topic, partition);
        result.high_watermark = log.high_watermark;
        if (records_left === 0 || bytes_left === 0) continue;
        const state = this.partition_state(group, topic, partition, log);
        state.share.truncate_before(log.log_start_offset);
        const wall_ms = this.deps.clock.now_ms();
        if (await track_ttl(this.deps, this.counters, group, state, log, wall_ms)) this.after_change(group, state);
        const request = { member_id, records_max: records_left, bytes_max: bytes_left, now_ms };
        const sent = await acquire_in(this.counters, group, state, log, request);
        result.acquired = sent.ranges;
        result.batches = sent.batches;
        if (sent.changed) this.after_change(group, state);
        bytes_left = Math.max(0, bytes_left - sent.bytes);
        records_left -= sent.count;
      } catch (error) {
        rethrow_invariant(error);
        result.error = error as Error;
      }
    }
    try {
      await this.writer.persist();
    } catch (error) {
      rethrow_invariant(error);
      // Not durable: nothing is handed out; the records go back as they were.
      for (const result of fetched) {
        const state = group.partitions.get(key_of(result.topic, result.partition));
        state?.share.unacquire(result.acquired.flatMap((r) => offsets_in(r)));
        result.acquired = [];
        result.batches = [];
        result.error ??= error as Error;
      }
    }
    return fetched;
  }

  /** Calls `listener` whenever records of the group may have become available (a release, a lock timeout). */
  on_available(group_id: string, listener: () => void): () => void {
    let waiters = this.waiters.get(group_id);
    if (!waiters) this.waiters.set(group_id, (waiters = new Set()));
    waiters.add(listener);
    return () => {
      waiters.delete(listener);
      if (waiters.size === 0) this.waiters.delete(group_id);
    };
  }

  private wake(group_id: string): void {
    const waiters = this.waiters.get(group_id);
    if (waiters) for (const wake of [...waiters]) wake();
  }

  /** True when the group could hand the member something from these partitions now. */
  has_available(group_id: string, partitions: readonly TopicPartition[], now_ms: number): boolean {
    const group = this.groups.get(group_id);
    const settings = group?.settings ?? this.settings_of(group_id);
    for (const { topic, partition } of partitions) {
      const topic_record = this.deps.topics.get(topic);
      if (!topic_record || partition >= topic_record.partitions) continue;
      const log = this.deps.reader_now(topic, partition);
      const end = visible_end(settings, log);
      const state = group?.partitions.get(key_of(topic, partition));
      if (!state) {
        if (settings.auto_offset_reset === 'earliest' && end > log.log_start_offset) return true;
        continue;
      }
      if (state.share.has_available(end, now_ms)) return true;
    }
    return false;
  }

  // ------------------------------------------------------------------ durability

  private after_change(group: ShareGroup, state: PartitionState): void {
    const letters = state.share.take_dead_letters();
    if (letters.length > 0) state.letters.push(...letters);
    this.writer.mark_dirty(group, state);
  }

  // ------------------------------------------------------------------ maintenance

  private async tick(): Promise<void> {
    const now = this.deps.monotonic_clock.now_ms();
    this.ticks++;
    for (const group of this.groups.values()) {
      for (const member of [...group.members.values()]) {
        if (now - member.last_seen_ms > this.settings.session_timeout_ms) {
          this.deps.logger.info({ group: group.id, member: member.id }, 'share group member timed out');
          this.remove_member(group, member, now);
        }
      }
      let woke = false;
      for (const [key, state] of group.partitions) {
        if (!this.deps.topics.get(state.topic)) {
          group.partitions.delete(key);
          await this.deps.store.delete([{ group: group.id, topic: state.topic, partition: state.partition }]);
          continue;
        }
        if (await this.read_ahead_in_tick(group, state)) woke = true;
        if (state.share.next_lock_deadline() <= now) {
          this.counters.lock_timeouts += state.share.expire_locks(now);
          this.after_change(group, state);
          woke = true;
        }
        if (state.share.next_available_at(now) <= now) woke = true;
        const wall_ms = this.deps.clock.now_ms();
        if (state.letters.length > 0 && (await write_dead_letters(this.deps, this.counters, group, state, wall_ms)))
          this.writer.mark_dirty(group, state);
      }
      if (woke) this.wake(group.id);
    }
    await this.writer.persist();
  }

  /**
   * The tick's read-ahead of one partition; true when it read or expired anything. A partition
   * whose leader cannot be reached now is left for a later tick, and the others go on.
   */
  private async read_ahead_in_tick(group: ShareGroup, state: PartitionState): Promise<boolean> {
    try {
      const log = this.deps.reader_now(state.topic, state.partition);
      if (state.ahead.cursor >= visible_end(group.settings, log) && state.ahead.tracked === 0) return false;
      if (await track_ttl(this.deps, this.counters, group, state, log, this.deps.clock.now_ms()))
        this.after_change(group, state);
      if (this.ticks % TTL_PRUNE_TICKS === 0) state.ahead.forget_below(state.share.start_offset);
      if (state.unreadable)
        this.deps.logger.info(
          { group: group.id, topic: state.topic, partition: state.partition },
          'share group partition readable again',
        );
      state.unreadable = false;
      return true;
    } catch (error) {
      rethrow_invariant(error);
      if (!state.unreadable)
        this.deps.logger.warn(
          { group: group.id, topic: state.topic, partition: state.partition, error: String(error) },
          'share group partition cannot be read now; retrying',
        );
      state.unreadable = true;
      return false;
    }
  }

  // ------------------------------------------------------------------ describe

  describe(group_id: string): ShareGroupDescription | null {
    const group = this.groups.get(group_id);
    return group ? describe_group(group, (member) => this.assignment(member)) : null;
  }

  /** Records in flight and waiting per partition of a group (admin and metrics). */
  partitions_of(group_id: string): PartitionSummary[] {
    const group = this.groups.get(group_id);
    return group ? partitions_of(group) : [];
  }

  /** What a group's queues hold and what it has done (admin views and metrics); `detail` walks each window. */
  queue_stats(group_id: string, options: { detail?: boolean } = {}): QueueStats | null {
    const group = this.groups.get(group_id);
    return group ? queue_stats(group, this.deps, options.detail ?? false) : null;
  }

  /** New configs of a group take effect at once (its partitions share its settings object). */
  apply_group_configs(group_id: string, configs: GroupConfigs): void {
    const group = this.groups.get(group_id);
    if (group) Object.assign(group.settings, group_settings_of(this.settings, configs));
  }

  /** The settings a group runs with (its configs over the broker's defaults). */
  settings_of(group_id: string): QueueSettings {
    return this.groups.get(group_id)?.settings ?? group_settings_of(this.settings, this.deps.group_configs(group_id));
  }

  /** The lowest start offset of the groups reading this partition, or null when none does. */
  lowest_start_offset(topic: string, partition: number): number | null {
    let lowest: number | null = null;
    const key = key_of(topic, partition);
    for (const group of this.groups.values()) {
      const state = group.partitions.get(key);
      if (state) lowest = lowest === null ? state.share.start_offset : Math.min(lowest, state.share.start_offset);
    }
    return lowest;
  }

  /**
   * Takes the records below `offset` out of every group's queue (they were archived elsewhere);
   * records some member holds go too, and its acknowledgements of them are refused.
   */
  async skip_before(topic: string, partition: number, offset: number): Promise<void> {
    const key = key_of(topic, partition);
    this.floors.set(key, Math.max(this.floors.get(key) ?? 0, offset));
    for (const group of this.groups.values()) {
      const state = group.partitions.get(key);
      if (!state || state.share.start_offset >= offset) continue;
      state.share.truncate_before(offset);
      state.ahead.forget_below(offset);
      this.writer.mark_dirty(group, state);
    }
    await this.writer.persist();
  }

  group_ids(): string[] {
    return [...this.groups.keys()];
  }
}
