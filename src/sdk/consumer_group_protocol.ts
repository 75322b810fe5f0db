// A consumer's membership of a KIP-848 consumer group (groupProtocol 'consumer'): no JoinGroup or
// SyncGroup, no leader. ConsumerGroupHeartbeat joins (epoch 0), says what the member owns and
// hears what it owns next; the broker's assignor decides, and a member gives up or gets only the
// partitions that move. The coordinator connection, group_send and group_call are the classic
// membership's (consumer_group.ts); `generation_id` holds the member epoch, which commits carry.
// Applying an assignment (revoking, committing, the listeners) is reconcile() below, called by
// the consumer's main loop when a heartbeat brought a new one.
import crypto from 'node:crypto';
import { GroupMembership } from './consumer_group.ts';
import { KafkaProtocolError, check_code } from './errors.ts';
import {
  COORDINATOR_CODES,
  Signal,
  group_by,
  key_of,
  new_partition_state,
  type ConsumerContext,
  type PartitionState,
} from './consumer_state.ts';
import { ConsumerEvents, type TopicPartitions } from './consumer_types.ts';
import { ErrorCode } from '../protocol/kafka/error_codes.ts';
import { CONSUMER_GROUP_HEARTBEAT } from '../protocol/kafka/messages/68_consumer_group_heartbeat.ts';
import type { OffsetCommitter } from './consumer_committer.ts';

/** Topic name -> partitions. */
type Assignment = Map<string, number[]>;

const JOIN_ATTEMPTS_MAX = 50;
/** Epochs of a heartbeat that leaves: for good, or for now (a static member). */
const LEAVE_EPOCH = -1;
const AWAY_EPOCH = -2;

export class ConsumerProtocolMembership extends GroupMembership {
  /** The newest assignment heard and not applied yet; null when none is waiting. */
  private received: Assignment | null = null;
  /** What the member owns: sent with every heartbeat. */
  private owned: Assignment = new Map();
  /** The member was fenced: what it owned is lost (no commit), and it joins again. */
  lost = false;
  private interval_ms: number;
  private beats: Signal = new Signal();
  private beating = false;

  constructor(
    private readonly context: ConsumerContext,
    private readonly fenced_for_good: (error: KafkaProtocolError) => void,
  ) {
    super(context, [], fenced_for_good);
    this.interval_ms = context.config.heartbeatInterval;
    // KIP-848 v1: the consumer makes its own member id and keeps it for its lifetime.
    this.member_id = crypto.randomUUID();
  }

  get is_member(): boolean {
    return this.generation_id > 0;
  }

  /** The partitions to own next: joins first when not a member. */
  async next_assignment(): Promise<Assignment> {
    for (let attempt = 0; !this.is_member && attempt < JOIN_ATTEMPTS_MAX; attempt++) {
      if (!this.context.running) return new Map();
      this.generation_id = 0;
      await this.beat();
      // The coordinator moving (or not ready): a short wait before asking again.
      if (!this.is_member) await this.context.wakeup.wait(this.context.cluster.options.retry.initial_retry_ms);
    }
    if (!this.is_member)
      throw new KafkaProtocolError(
        ErrorCode.UNKNOWN_MEMBER_ID,
        `joining group ${this.context.group_id} did not settle`,
      );
    const next = this.received ?? this.owned;
    this.received = null;
    return next;
  }

  /** What the member owns now: sent at once (a revocation is done only when the coordinator hears so). */
  report_owned(owned: Assignment): void {
    this.owned = owned;
    this.beats.fire();
  }

  override start_heartbeats(): void {
    if (this.beating) return;
    this.beating = true;
    void (async () => {
      try {
        while (this.context.running && this.is_member) {
          await this.beats.wait(this.interval_ms);
          if (!this.context.running || !this.is_member) return;
          await this.beat().catch((error) => this.context.report(error));
        }
      } finally {
        this.beating = false;
      }
    })();
  }

  override wake_heartbeats(): void {
    this.beats.fire();
  }

  override async heartbeat_if_due(): Promise<void> {
    // The background heartbeats keep the member in the group; handlers need not.
  }

  override on_group_error(code: number): void {
    if (code === ErrorCode.FENCED_MEMBER_EPOCH || code === ErrorCode.UNKNOWN_MEMBER_ID) this.fence();
    else this.beats.fire(); // STALE_MEMBER_EPOCH: the next heartbeat brings the epoch
  }

  private fence(): void {
    this.generation_id = 0;
    this.received = null;
    this.lost = true;
    this.request_rejoin();
  }

  private async beat(): Promise<void> {
    const ctx = this.context;
    const joining = this.generation_id === 0;
    const { response } = await this.group_send(CONSUMER_GROUP_HEARTBEAT, 1, 1, {
      group_id: ctx.group_id ?? '',
      member_id: this.member_id,
      member_epoch: this.generation_id,
      instance_id: ctx.config.groupInstanceId ?? null,
      rack_id: joining ? (ctx.config.rackId ?? null) : null,
      rebalance_timeout_ms: joining ? ctx.config.rebalanceTimeout : -1,
      subscribed_topic_names: [...ctx.subscriptions.keys()].sort(),
      subscribed_topic_regex: null,
      server_assignor: ctx.config.groupRemoteAssignor ?? null,
      topic_partitions: joining ? [] : this.owned_by_id(),
    });
    const code = response.error_code;
    if (COORDINATOR_CODES.has(code)) return this.forget_coordinator();
    if (code === ErrorCode.FENCED_MEMBER_EPOCH || code === ErrorCode.UNKNOWN_MEMBER_ID) return this.fence();
    if (code !== ErrorCode.NONE) {
      const error = new KafkaProtocolError(code, `ConsumerGroupHeartbeat for group ${ctx.group_id}`);
      if (joining) check_code(code, `ConsumerGroupHeartbeat for group ${ctx.group_id}`);
      return this.fenced_for_good(error);
    }
    this.generation_id = response.member_epoch;
    if (response.heartbeat_interval_ms > 0) this.interval_ms = response.heartbeat_interval_ms;
    ctx.emit(ConsumerEvents.HEARTBEAT, {
      groupId: ctx.group_id,
      memberId: this.member_id,
      groupGenerationId: this.generation_id,
    });
    if (response.assignment) await this.heard(response.assignment.topic_partitions);
  }

  /** A new assignment: the consumer's main loop applies it (reconcile). */
  private async heard(topic_partitions: ReadonlyArray<{ topic_id: string; partitions: number[] }>): Promise<void> {
    const names = await this.topic_names(topic_partitions.map((t) => t.topic_id));
    const next: Assignment = new Map();
    for (const { topic_id, partitions } of topic_partitions) {
      const name = names.get(topic_id);
      if (name !== undefined && partitions.length > 0)
        next.set(
          name,
          [...partitions].sort((a, b) => a - b),
        );
    }
    if (same(next, this.owned) && this.received === null) return;
    this.received = next;
    this.request_rejoin();
  }

  /** Topic ids to names, from the metadata (refreshed when an id is new to it). */
  private async topic_names(ids: readonly string[]): Promise<Map<string, string>> {
    const cluster = this.context.cluster;
    const known = () => new Map([...cluster.topics.values()].map((t) => [t.topic_id, t.name]));
    let names = known();
    if (ids.some((id) => !names.has(id))) {
      await cluster.with_retry('metadata', () => cluster.refresh_metadata([...this.context.subscriptions.keys()]));
      names = known();
    }
    return names;
  }

  private owned_by_id(): Array<{ topic_id: string; partitions: number[] }> {
    const out: Array<{ topic_id: string; partitions: number[] }> = [];
    for (const [topic, partitions] of this.owned) {
      const id = this.context.cluster.topics.get(topic)?.topic_id;
      if (id !== undefined) out.push({ topic_id: id, partitions });
    }
    return out;
  }

  override async leave_group(): Promise<void> {
    this.beats.fire();
    const epoch = this.generation_id;
    this.generation_id = -1;
    this.context.needs_rejoin = true;
    this.owned = new Map();
    if (epoch <= 0) return;
    const leaving = this.context.config.groupInstanceId ? AWAY_EPOCH : LEAVE_EPOCH;
    const { response } = await this.group_send(CONSUMER_GROUP_HEARTBEAT, 1, 1, {
      group_id: this.context.group_id ?? '',
      member_id: this.member_id,
      member_epoch: leaving,
      instance_id: this.context.config.groupInstanceId ?? null,
      rack_id: null,
      rebalance_timeout_ms: -1,
      subscribed_topic_names: null,
      subscribed_topic_regex: null,
      server_assignor: null,
      topic_partitions: null,
    });
    const code = response.error_code;
    if (code !== ErrorCode.NONE && code !== ErrorCode.UNKNOWN_MEMBER_ID && code !== ErrorCode.FENCED_MEMBER_EPOCH)
      throw new KafkaProtocolError(code, `leaving group ${this.context.group_id}`);
  }
}

function same(a: Assignment, b: Assignment): boolean {
  if (a.size !== b.size) return false;
  for (const [topic, partitions] of a) if (b.get(topic)?.join(',') !== partitions.join(',')) return false;
  return true;
}

/**
 * Applies the membership's next assignment to the consumer: partitions that leave are committed
 * (with autoCommit) and revoked, partitions that come are added, and the rest keep being read
 * from where they are. Returns what came and went.
 */
export async function reconcile(
  ctx: ConsumerContext,
  membership: ConsumerProtocolMembership,
  committer: OffsetCommitter,
): Promise<{ assigned: TopicPartitions[]; revoked: TopicPartitions[] }> {
  if (membership.lost && ctx.assignment.size > 0) {
    const lost = ctx.assignment_list();
    ctx.assignment.clear();
    await ctx.call_listener('onPartitionsRevoked', lost);
  }
  membership.lost = false;
  const next = await membership.next_assignment();
  const revoked = [...ctx.assignment.values()].filter((s) => !(next.get(s.topic) ?? []).includes(s.partition));
  if (revoked.length > 0) {
    if (ctx.run_config?.autoCommit && membership.is_member)
      await committer.commit_resolved().catch((error) => ctx.report(error));
    for (const state of revoked) ctx.assignment.delete(state.key);
    await ctx.call_listener('onPartitionsRevoked', topic_list(revoked));
  }
  const added: PartitionState[] = [];
  for (const [topic, partitions] of next) {
    if (!ctx.subscriptions.has(topic)) continue;
    for (const partition of partitions) {
      if (ctx.assignment.has(key_of(topic, partition))) continue;
      const state = new_partition_state(topic, partition);
      ctx.assignment.set(state.key, state);
      added.push(state);
    }
  }
  ctx.needs_rejoin = false;
  // Only now does the coordinator hear the revoked partitions are free for their next owner.
  membership.report_owned(
    new Map(ctx.assignment_list().map((t) => [t.topic, [...t.partitions].sort((a, b) => a - b)])),
  );
  membership.start_heartbeats();
  return { assigned: topic_list(added), revoked: topic_list(revoked) };
}

function topic_list(states: PartitionState[]): TopicPartitions[] {
  return [...group_by(states, (s) => s.topic)].map(([topic, list]) => ({
    topic,
    partitions: list.map((s) => s.partition).sort((a, b) => a - b),
  }));
}
