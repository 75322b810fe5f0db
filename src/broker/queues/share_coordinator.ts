// Share groups (the queue model): members that heartbeat, the partitions each may fetch (every
// partition of its subscribed topics: consumers may outnumber partitions), and per group and
// partition a SharePartition with its durable state. Every change is persisted before the client
// hears of it; a timer expires locks, drops silent members and writes dead letters.
// Protocol-neutral: the Kafka front end (ShareGroupHeartbeat, ShareFetch, ShareAcknowledge) and
// later AMQP call these methods.
import { encode_record_batch } from '../../protocol/record_batch.ts';
import type { Clock, Logger } from '../../core/clock.ts';
import type { PartitionReader } from '../../core/partition_reader.ts';
import { BrokerError } from '../../core/errors.ts';
import type { AppendRecords, TopicManager } from '../topics.ts';
import { dead_letter_records, dead_letter_topic_name, read_records_at } from './dead_letters.ts';
import { SharePartition } from './share_partition.ts';
import type { AcquiredRange, OffsetRange } from '../../core/types.ts';
import { AckError } from '../../core/errors.ts';
import type { ShareStateStore, ShareStateWrite } from './share_state_store.ts';
import { ReadAhead } from './read_ahead.ts';
import { group_settings_of, type ShareGroupSettings } from './group_config.ts';
import { type GroupConfigs } from '../../core/types.ts';
import { batch_last_offset } from '../../format/batch_layout.ts';
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
import { key_of, type Member, type PartitionState, type ShareGroup } from './share_group.ts';
import { describe_group, partitions_of, queue_stats, type PartitionSummary } from './share_stats.ts';
import { rethrow_invariant } from '../../core/invariants.ts';

/** Records one fetch may acquire across its partitions, whatever the client asks. */
export const FETCH_RECORDS_MAX = 10_000;
/** Expired records handled per partition per round. */
const EXPIRED_PER_ROUND_MAX = 10_000;
/** A record that expired ahead of a full window is looked at again after this long. */
const TTL_RETRY_MS = 1_000;
/** Every so many ticks, expiry times of finished records are dropped from the TTL index. */
const TTL_PRUNE_TICKS = 50;
/** Dead letters written per partition per tick. */
const DEAD_LETTERS_PER_TICK = 1_000;

export interface ShareCoordinatorDeps {
  topics: TopicManager;
  /** Where a partition's records are read: a local replica, or in a cluster the leader's (bounds known). */
  reader(topic: string, partition: number): Promise<PartitionReader>;
  /** The same without waiting (a remote partition's bounds may not be known yet). */
  reader_now(topic: string, partition: number): PartitionReader;
  store: ShareStateStore;
  logger: Logger;
  clock: Clock;
  /** Creates a dead-letter topic (one partition) if it does not exist. */
  ensure_dead_letter_topic(name: string): Promise<void>;
  /** The group's own configs (group_config.ts), empty when it has none. */
  group_configs(group_id: string): GroupConfigs;
  /** Appends to a partition on its leader (dead letters). */
  append: AppendRecords;
}

export class ShareCoordinator {
  private readonly groups = new Map<string, ShareGroup>();
  private readonly waiters = new Map<string, Set<() => void>>();
  /** Per partition, the offset below which records were archived away (see skip_before). */
  private readonly floors = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> = Promise.resolve();
  /** Partitions changed since the last state write. */
  private readonly dirty = new Map<string, { group: ShareGroup; state: PartitionState }>();
  private writing: Promise<void> = Promise.resolve();
  private queued_write: Promise<void> | null = null;
  /** Counters for metrics. */
  readonly counters = {
    acquired: 0,
    accepted: 0,
    released: 0,
    rejected: 0,
    lock_timeouts: 0,
    dead_lettered: 0,
    expired: 0,
    redeliveries: 0,
  };
  private ticks = 0;

  constructor(
    private readonly deps: ShareCoordinatorDeps,
    readonly settings: ShareGroupSettings,
  ) {}

  /** Restores every group's partitions from the state topic (members re-join). */
  async load(): Promise<void> {
    const now = this.deps.clock.now_ms();
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
      this.mark_dirty(group, state);
    }
    await this.persist();
  }

  start(): void {
    this.timer = setInterval(() => {
      this.ticking = this.ticking
        .then(() => this.tick())
        .catch((error: unknown) => {
          rethrow_invariant(error);
          this.deps.logger.warn({ error: String(error) }, 'share group maintenance failed');
        });
    }, this.settings.tick_ms);
    this.timer.unref();
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.ticking;
    await this.persist();
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
      const start = group.settings.auto_offset_reset === 'earliest' ? earliest : log.high_watermark;
      state = {
        topic,
        partition,
        share: new SharePartition(start, group.settings),
        ahead: new ReadAhead(start),
        letters: [],
      };
      group.partitions.set(key, state);
      this.mark_dirty(group, state);
    }
    return state;
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
    await this.persist();
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
        await this.track_ttl(group, state, log, now_ms);
        // Only records read ahead may be handed out: an expired one never is, and keys are known.
        const by_key = group.settings.ordering === 'key' ? (offset: number) => state.ahead.key_of(offset) : undefined;
        const acquired = state.share.acquire(
          member_id,
          records_left,
          Math.min(log.high_watermark, state.ahead.cursor),
          now_ms,
          by_key,
        );
        if (acquired.length === 0) continue;
        const sent = await this.read_acquired(log, acquired, bytes_left);
        state.share.unacquire(sent.unsent);
        result.acquired = sent.ranges;
        result.batches = sent.batches;
        bytes_left = Math.max(0, bytes_left - sent.bytes);
        for (const range of sent.ranges) records_left -= range.last_offset - range.first_offset + 1;
        this.counters.acquired += sent.count;
        for (const range of sent.ranges) {
          if (range.delivery_count <= 1) continue;
          const n = range.last_offset - range.first_offset + 1;
          this.counters.redeliveries += n;
          group.counters.redeliveries += n;
        }
        this.after_change(group, state);
      } catch (error) {
        rethrow_invariant(error);
        result.error = error as Error;
      }
    }
    try {
      await this.persist();
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

  /**
   * Reads the batches holding the acquired ranges, in order, until `bytes_max` (at least one batch
   * is always read). Offsets whose batch did not fit come back in `unsent`.
   */
  private async read_acquired(log: PartitionReader, acquired: AcquiredRange[], bytes_max: number) {
    const batches: Buffer[] = [];
    const ranges: AcquiredRange[] = [];
    const unsent: number[] = [];
    let bytes = 0;
    let count = 0;
    let covered_to = -1; // last offset of the batches read so far
    for (const range of acquired) {
      let first = range.first_offset;
      while (first <= range.last_offset) {
        if (first > covered_to) {
          if (batches.length > 0 && bytes >= bytes_max) break;
          const read = await log.read(first, Math.max(1, bytes_max - bytes));
          if (read.batches.length === 0) break;
          for (const batch of read.batches) {
            const last = batch_last_offset(batch, 0);
            if (last < first) continue;
            batches.push(batch);
            bytes += batch.length;
            covered_to = last;
            if (bytes >= bytes_max || last >= range.last_offset) break;
          }
        }
        const last = Math.min(range.last_offset, covered_to);
        if (last < first) break;
        ranges.push({ first_offset: first, last_offset: last, delivery_count: range.delivery_count });
        count += last - first + 1;
        first = last + 1;
      }
      for (let offset = first; offset <= range.last_offset; offset++) unsent.push(offset);
    }
    return { batches, ranges, unsent, bytes, count };
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
    for (const { topic, partition } of partitions) {
      const topic_record = this.deps.topics.get(topic);
      if (!topic_record || partition >= topic_record.partitions) continue;
      const log = this.deps.reader_now(topic, partition);
      const state = group?.partitions.get(key_of(topic, partition));
      if (!state) {
        const reset = group?.settings.auto_offset_reset ?? this.settings.auto_offset_reset;
        if (log.high_watermark > (reset === 'earliest' ? log.log_start_offset : log.high_watermark)) return true;
        continue;
      }
      if (state.share.has_available(log.high_watermark, now_ms)) return true;
    }
    return false;
  }

  // ------------------------------------------------------------------ durability

  private after_change(group: ShareGroup, state: PartitionState): void {
    const letters = state.share.take_dead_letters();
    if (letters.length > 0) state.letters.push(...letters);
    this.mark_dirty(group, state);
  }

  private mark_dirty(group: ShareGroup, state: PartitionState): void {
    this.dirty.set(`${group.id}\u0000${key_of(state.topic, state.partition)}`, { group, state });
  }

  /**
   * Makes every change made so far durable: joins the write that has not started yet, or queues
   * one after the running write (which may have taken its deltas before these changes).
   */
  private persist(): Promise<void> {
    if (this.queued_write) return this.queued_write;
    const next = this.writing.then(() => {
      this.queued_write = null;
      return this.write_dirty();
    });
    this.queued_write = next;
    this.writing = next.catch(() => undefined);
    return next;
  }

  private async write_dirty(): Promise<void> {
    if (this.dirty.size === 0) return;
    const writes: ShareStateWrite[] = [];
    for (const { group, state } of this.dirty.values()) {
      const key = { group: group.id, topic: state.topic, partition: state.partition };
      const delta = state.share.take_delta();
      if (this.deps.store.wants_snapshot(key)) {
        const snapshot = state.share.snapshot();
        writes.push({
          ...key,
          start_offset: snapshot.start_offset,
          end_offset: snapshot.end_offset,
          runs: snapshot.runs,
          snapshot: true,
        });
      } else {
        writes.push({
          ...key,
          start_offset: delta.start_offset,
          end_offset: state.share.end_offset,
          runs: delta.runs,
          snapshot: false,
        });
      }
    }
    this.dirty.clear();
    await this.deps.store.write(writes);
  }

  // ------------------------------------------------------------------ maintenance

  private async tick(): Promise<void> {
    const now = this.deps.clock.now_ms();
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
        if (await this.read_ahead_in_tick(group, state, now)) woke = true;
        if (state.share.next_lock_deadline() <= now) {
          this.counters.lock_timeouts += state.share.expire_locks(now);
          this.after_change(group, state);
          woke = true;
        }
        if (state.share.next_available_at(now) <= now) woke = true;
        if (state.letters.length > 0) await this.write_dead_letters(group, state, now);
      }
      if (woke) this.wake(group.id);
    }
    await this.persist();
  }

  /**
   * The tick's read-ahead of one partition; true when it read or expired anything. A partition
   * whose leader cannot be reached now is left for a later tick, and the others go on.
   */
  private async read_ahead_in_tick(group: ShareGroup, state: PartitionState, now_ms: number): Promise<boolean> {
    try {
      const log = this.deps.reader_now(state.topic, state.partition);
      if (state.ahead.cursor >= log.high_watermark && state.ahead.tracked === 0) return false;
      await this.track_ttl(group, state, log, now_ms);
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

  /** Reads ahead for expiry times, then expires what is due (dead letter, or drop as the topic says). */
  private async track_ttl(
    group: ShareGroup,
    state: PartitionState,
    log: PartitionReader,
    now_ms: number,
  ): Promise<void> {
    const configs = this.deps.topics.get(state.topic)?.configs ?? {};
    const topic_ttl_ms = Number(configs['sluice.message.ttl.ms'] ?? -1);
    const keys_until =
      group.settings.ordering === 'key' ? state.share.start_offset + group.settings.records_in_flight_max : null;
    await state.ahead.scan(log, topic_ttl_ms, now_ms, keys_until);
    const expired = state.ahead.take_expired(now_ms, EXPIRED_PER_ROUND_MAX);
    if (expired.length === 0) return;
    const drop = configs['sluice.ttl.expired.action'] === 'drop';
    for (const offset of expired) {
      if (offset < state.share.start_offset) continue;
      const outcome = state.share.expire(offset, 'expired: its time to live ran out', drop);
      if (outcome === 'later') state.ahead.retry(offset, now_ms + TTL_RETRY_MS, now_ms);
      else if (outcome === 'expired') {
        this.counters.expired++;
        group.counters.expired++;
      }
    }
    this.after_change(group, state);
  }

  /** Copies pending dead letters to the group's dead-letter topic, then archives the records. */
  private async write_dead_letters(group: ShareGroup, state: PartitionState, now_ms: number): Promise<void> {
    const letters = state.letters.splice(0, DEAD_LETTERS_PER_TICK).sort((a, b) => a.offset - b.offset);
    try {
      const log = await this.deps.reader(state.topic, state.partition);
      const originals = await read_records_at(
        log,
        letters.map((l) => l.offset),
      );
      const records = dead_letter_records(
        { topic: state.topic, partition: state.partition, group: group.id },
        letters,
        originals,
        now_ms,
      );
      if (records.length > 0) {
        const dlq = group.settings.dead_letter_topic || dead_letter_topic_name(state.topic, group.id);
        await this.deps.ensure_dead_letter_topic(dlq);
        const dlq_partitions = this.deps.topics.get(dlq)!.partitions;
        await this.deps.append(dlq, state.partition % dlq_partitions, encode_record_batch(records));
      }
      state.share.dead_lettered(letters.map((l) => l.offset));
      this.counters.dead_lettered += records.length;
      group.counters.dead_lettered += records.length;
      this.mark_dirty(group, state);
    } catch (error) {
      rethrow_invariant(error);
      state.letters.unshift(...letters);
      this.deps.logger.warn(
        { group: group.id, topic: state.topic, partition: state.partition, error: String(error) },
        'could not write dead letters; will retry',
      );
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
      this.mark_dirty(group, state);
    }
    await this.persist();
  }

  group_ids(): string[] {
    return [...this.groups.keys()];
  }
}

/** Acknowledgement batches of one partition must not overlap (an offset is settled once). */
function check_disjoint(batches: readonly OffsetRange[]): void {
  const sorted = [...batches].sort((a, b) => a.first_offset - b.first_offset);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i]!.first_offset <= sorted[i - 1]!.last_offset)
      throw new AckError('invalid_request', `acknowledgement batches overlap at offset ${sorted[i]!.first_offset}`);
  }
}

function offsets_in(range: OffsetRange): number[] {
  return Array.from({ length: range.last_offset - range.first_offset + 1 }, (_, i) => range.first_offset + i);
}
