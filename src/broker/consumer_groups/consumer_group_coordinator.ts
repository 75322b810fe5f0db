// Consumer groups on the KIP-848 protocol: members say who they are and what they subscribe to
// in each ConsumerGroupHeartbeat; the coordinator bumps the group epoch on every change, computes
// the target assignment with a server-side assignor, and walks each member to its target without
// a stop-the-world rebalance (consumer_group.ts). Static members (instance ids) may leave for now
// and come back to the same partitions. Membership is kept in memory like the classic protocol's:
// after the coordinator moves, members join again (fenced_member_epoch) with their committed
// offsets intact. Committed offsets are the OffsetStore's, shared with the classic protocol.
import crypto from 'node:crypto';
import { BrokerError } from '../../core/errors.ts';
import { is_internal_topic } from '../../core/names.ts';
import type {
  ConsumerGroupDescription,
  ConsumerGroupState,
  ConsumerHeartbeatRequest,
  ConsumerHeartbeatResult,
  GroupConfigs,
} from '../../core/types.ts';
import { ASSIGNORS, type AssignorMember, type TopicAssignment } from './assignors.ts';
import { compile_topic_regex } from './topic_regex.ts';
import { consumer_group_timing, type ConsumerGroupTiming } from './group_configs.ts';
import {
  AWAY_EPOCH,
  ConsumerGroup,
  assignment_key,
  check_owners,
  reconcile,
  release,
  type ConsumerMember,
} from './consumer_group.ts';

export interface ConsumerGroupSettings {
  /** A member that has not sent a heartbeat for this long leaves its group. */
  session_timeout_ms: number;
  heartbeat_interval_ms: number;
  /** Members per group; a join beyond it is refused. */
  members_max: number;
  /** The server-side assignors offered; the first is the default. */
  assignors: readonly string[];
}

export const CONSUMER_GROUP_SETTINGS_DEFAULT: ConsumerGroupSettings = {
  session_timeout_ms: 45_000,
  heartbeat_interval_ms: 5_000,
  members_max: 1000,
  assignors: ['uniform', 'range'],
};

export interface ConsumerGroupDeps {
  topics: { get(name: string): { partitions: number } | undefined; list(): ReadonlyArray<{ name: string }> };
  /** Whether a classic group of this id has members: one id is one kind of group at a time. */
  classic_has_members(group_id: string): boolean;
  /** The group's own configs (consumer.session.timeout.ms, consumer.heartbeat.interval.ms); none when absent. */
  group_configs?(group_id: string): GroupConfigs;
}

const EMPTY: TopicAssignment = new Map();

export class ConsumerGroupCoordinator {
  private readonly groups = new Map<string, ConsumerGroup>();

  constructor(
    private readonly deps: ConsumerGroupDeps,
    private readonly settings: ConsumerGroupSettings,
  ) {}

  has_members(group_id: string): boolean {
    return (this.groups.get(group_id)?.members.size ?? 0) > 0;
  }

  heartbeat(request: ConsumerHeartbeatRequest): ConsumerHeartbeatResult {
    if (request.group_id === '') throw new BrokerError('invalid_group_id', 'the group id is empty');
    if (this.deps.classic_has_members(request.group_id))
      throw new BrokerError(
        'inconsistent_group_protocol',
        `group ${request.group_id} has members on the classic protocol; its consumers must all use one protocol`,
      );
    if (request.member_epoch === -1 || request.member_epoch === AWAY_EPOCH) return this.leave(request);
    const joining = request.member_epoch === 0;
    const group = this.groups.get(request.group_id) ?? new ConsumerGroup(request.group_id);
    const member = joining ? this.join(group, request) : this.current_member(group, request);
    this.update_member(group, member, request);
    this.touch(group, member);
    this.refresh_target(group);
    if (reconcile(group, member, request.owned)) this.start_rebalance_timer(group, member);
    else if (member.state !== 'unrevoked') stop_timer(member, 'rebalance_timer');
    check_owners(group);
    const key = assignment_key(member.assigned);
    const send = joining || key !== member.sent || (request.owned !== null && assignment_key(request.owned) !== key);
    member.sent = key;
    return {
      member_id: member.id,
      member_epoch: member.epoch,
      heartbeat_interval_ms: this.timing(group.id).heartbeat_interval_ms,
      assignment: send ? member.assigned : null,
    };
  }

  // ------------------------------------------------------------------ joining and leaving

  private join(group: ConsumerGroup, request: ConsumerHeartbeatRequest): ConsumerMember {
    if (request.subscribed_topic_names === null && request.subscribed_topic_regex === null)
      throw new BrokerError('invalid_request', 'a joining member must name its topics or a regex');
    if (request.rebalance_timeout_ms <= 0)
      throw new BrokerError('invalid_request', 'a joining member must give its rebalance timeout');
    const member_id = request.member_id === '' ? crypto.randomUUID() : request.member_id;
    const existing = group.members.get(member_id);
    // The same member joining again (it lost its state, or was fenced) starts over.
    if (existing) this.remove_member(group, existing);
    const holder_id = request.instance_id === null ? undefined : group.static_members.get(request.instance_id);
    const holder = holder_id === undefined ? undefined : group.members.get(holder_id);
    if (holder) {
      if (holder.epoch !== AWAY_EPOCH)
        throw new BrokerError(
          'unreleased_instance_id',
          `instance ${request.instance_id} is held by member ${holder.id}, which has not left`,
        );
      return this.replace_static_member(group, holder, member_id, request);
    }
    if (group.members.size >= this.settings.members_max)
      throw new BrokerError(
        'group_max_size_reached',
        `group ${group.id} already has ${this.settings.members_max} members`,
      );
    const member = new_member(member_id, request);
    this.groups.set(group.id, group);
    group.members.set(member_id, member);
    if (member.instance_id !== null) group.static_members.set(member.instance_id, member_id);
    group.epoch++;
    return member;
  }

  /** A static member back under a new member id takes over its partitions and epoch: no rebalance. */
  private replace_static_member(
    group: ConsumerGroup,
    holder: ConsumerMember,
    member_id: string,
    request: ConsumerHeartbeatRequest,
  ): ConsumerMember {
    const member: ConsumerMember = {
      ...new_member(member_id, request),
      epoch: holder.previous_epoch,
      previous_epoch: holder.previous_epoch,
      state: holder.state,
      topic_names: holder.topic_names,
      regex: holder.regex,
      pattern: holder.pattern,
      may_describe: request.may_describe ?? null,
      assignor: holder.assignor,
      assigned: holder.assigned,
      revoking: holder.revoking,
    };
    stop_timer(holder, 'session_timer');
    stop_timer(holder, 'rebalance_timer');
    group.members.delete(holder.id);
    group.members.set(member_id, member);
    group.static_members.set(member.instance_id!, member_id);
    const target = group.target.get(holder.id);
    group.target.delete(holder.id);
    if (target) group.target.set(member_id, target);
    for (const [key, owner] of group.owners) if (owner === holder.id) group.owners.set(key, member_id);
    return member;
  }

  private leave(request: ConsumerHeartbeatRequest): ConsumerHeartbeatResult {
    const group = this.groups.get(request.group_id);
    const member = group?.members.get(request.member_id);
    if (group && member) {
      if (request.member_epoch === AWAY_EPOCH && member.instance_id !== null) {
        // It keeps its partitions until its session ends, for its next incarnation to take over.
        if (member.epoch !== AWAY_EPOCH) member.previous_epoch = member.epoch;
        member.epoch = AWAY_EPOCH;
        stop_timer(member, 'rebalance_timer');
        this.touch(group, member);
      } else this.remove_member(group, member);
    }
    return {
      member_id: request.member_id,
      member_epoch: request.member_epoch,
      heartbeat_interval_ms: this.timing(request.group_id).heartbeat_interval_ms,
      assignment: null,
    };
  }

  private remove_member(group: ConsumerGroup, member: ConsumerMember): void {
    stop_timer(member, 'session_timer');
    stop_timer(member, 'rebalance_timer');
    release(group, member, member.assigned);
    release(group, member, member.revoking);
    group.members.delete(member.id);
    group.target.delete(member.id);
    if (member.instance_id !== null && group.static_members.get(member.instance_id) === member.id)
      group.static_members.delete(member.instance_id);
    group.epoch++;
    if (group.members.size === 0) this.groups.delete(group.id);
  }

  /** The member a heartbeat of epoch > 0 is from, its epoch checked. */
  private current_member(group: ConsumerGroup, request: ConsumerHeartbeatRequest): ConsumerMember {
    const member = group.members.get(request.member_id);
    if (!member)
      throw new BrokerError(
        'fenced_member_epoch',
        `member ${request.member_id} is not in group ${group.id} (its session ended, or the coordinator ` +
          'moved): join again with epoch 0',
      );
    if (request.member_epoch === member.epoch) return member;
    // Its last answer may have been lost: the previous epoch is accepted while it owns only what it has.
    const lost_answer =
      request.member_epoch === member.previous_epoch &&
      request.owned !== null &&
      [...request.owned].every(([topic, partitions]) =>
        partitions.every((p) => member.assigned.get(topic)?.includes(p) ?? false),
      );
    if (!lost_answer)
      throw new BrokerError(
        'fenced_member_epoch',
        `member epoch ${request.member_epoch} is not ${member.id}'s current ${member.epoch}: join again`,
      );
    return member;
  }

  private update_member(group: ConsumerGroup, member: ConsumerMember, request: ConsumerHeartbeatRequest): void {
    member.client_id = request.client_id;
    member.client_host = request.client_host;
    member.may_describe = request.may_describe ?? null;
    if (request.rack_id !== null) member.rack_id = request.rack_id;
    if (request.rebalance_timeout_ms > 0) member.rebalance_timeout_ms = request.rebalance_timeout_ms;
    let changed = false;
    if (request.subscribed_topic_names !== null) {
      const names = [...new Set(request.subscribed_topic_names)].sort();
      changed ||= names.join('\u0000') !== member.topic_names.join('\u0000');
      member.topic_names = names;
    }
    if (request.subscribed_topic_regex !== null) {
      const regex = request.subscribed_topic_regex === '' ? null : request.subscribed_topic_regex;
      changed ||= regex !== member.regex;
      member.pattern = regex === null ? null : compile_topic_regex(regex);
      member.regex = regex;
    }
    if (request.server_assignor !== null) {
      if (!this.settings.assignors.includes(request.server_assignor) || !ASSIGNORS.has(request.server_assignor))
        throw new BrokerError(
          'unsupported_assignor',
          `assignor ${request.server_assignor} is not one of ${this.settings.assignors.join(', ')}`,
        );
      changed ||= request.server_assignor !== member.assignor;
      member.assignor = request.server_assignor;
    }
    if (changed) group.epoch++;
  }

  // ------------------------------------------------------------------ the target assignment

  /** The topics the member reads: its names and its regex's matches, those that exist. */
  private topics_of(member: ConsumerMember): string[] {
    const topics = new Set(member.topic_names.filter((name) => this.deps.topics.get(name) !== undefined));
    const pattern = member.pattern;
    const may = member.may_describe;
    if (pattern !== null) {
      for (const { name } of this.deps.topics.list())
        if (!is_internal_topic(name) && pattern.test(name) && (may === null || may(name))) topics.add(name);
    }
    return [...topics].sort();
  }

  /** A change of the subscribed topics' partitions bumps the epoch; a new epoch gets a new target. */
  private refresh_target(group: ConsumerGroup): void {
    const members = [...group.members.values()];
    const topics_by_member = new Map(members.map((m) => [m.id, this.topics_of(m)]));
    const partitions_of = (topic: string) => this.deps.topics.get(topic)?.partitions ?? 0;
    const topics = [...new Set([...topics_by_member.values()].flat())].sort();
    const metadata = topics.map((t) => `${t}:${partitions_of(t)}`).join(',');
    if (metadata !== group.metadata) {
      group.metadata = metadata;
      group.epoch++;
    }
    if (group.assignment_epoch === group.epoch) return;
    group.assignor = this.chosen_assignor(members);
    const input: AssignorMember[] = members.map((m) => ({
      member_id: m.id,
      instance_id: m.instance_id,
      topics: topics_by_member.get(m.id)!,
      current: m.assigned,
    }));
    group.target = ASSIGNORS.get(group.assignor)!.assign(input, partitions_of);
    group.assignment_epoch = group.epoch;
  }

  /** The assignor most members ask for, else the first offered. */
  private chosen_assignor(members: readonly ConsumerMember[]): string {
    const votes = new Map<string, number>();
    for (const m of members) if (m.assignor !== null) votes.set(m.assignor, (votes.get(m.assignor) ?? 0) + 1);
    let best = this.settings.assignors[0]!;
    for (const name of this.settings.assignors) if ((votes.get(name) ?? 0) > (votes.get(best) ?? 0)) best = name;
    return best;
  }

  // ------------------------------------------------------------------ timers

  /** The broker's session timeout and heartbeat interval, or the group's own configs. */
  private timing(group_id: string): ConsumerGroupTiming {
    return consumer_group_timing(this.settings, this.deps.group_configs?.(group_id) ?? {});
  }

  private touch(group: ConsumerGroup, member: ConsumerMember): void {
    stop_timer(member, 'session_timer');
    member.session_timer = setTimeout(() => {
      if (group.members.get(member.id) === member) this.remove_member(group, member);
    }, this.timing(group.id).session_timeout_ms);
    member.session_timer.unref();
  }

  /** A member that does not give up its revoked partitions within its rebalance timeout is removed. */
  private start_rebalance_timer(group: ConsumerGroup, member: ConsumerMember): void {
    stop_timer(member, 'rebalance_timer');
    member.rebalance_timer = setTimeout(() => {
      if (group.members.get(member.id) === member && member.state === 'unrevoked') this.remove_member(group, member);
    }, member.rebalance_timeout_ms);
    member.rebalance_timer.unref();
  }

  // ------------------------------------------------------------------ offsets and admin

  /**
   * Checks a commit's member and epoch (OffsetCommit v9, TxnOffsetCommit) when the group is a
   * consumer group with members; false when it is not (the classic rules apply).
   */
  validate_commit(group_id: string, member_id: string, member_epoch: number): boolean {
    const group = this.groups.get(group_id);
    if (!group) return false;
    this.check_member_epoch(group, member_id, member_epoch);
    return true;
  }

  /** OffsetFetch v9 from a member: it must be in the group at its current epoch. */
  validate_fetch(group_id: string, member_id: string, member_epoch: number): void {
    const group = this.groups.get(group_id);
    if (!group) throw new BrokerError('unknown_member_id', `group ${group_id} has no member ${member_id}`);
    this.check_member_epoch(group, member_id, member_epoch);
  }

  private check_member_epoch(group: ConsumerGroup, member_id: string, member_epoch: number): void {
    const member = group.members.get(member_id);
    if (!member) throw new BrokerError('unknown_member_id', `group ${group.id} has no member ${member_id}`);
    if (member_epoch !== member.epoch)
      throw new BrokerError(
        'stale_member_epoch',
        `member epoch ${member_epoch} is not ${member_id}'s current ${member.epoch}: heartbeat first`,
      );
  }

  /** Topics some member reads (OffsetDelete keeps their offsets). */
  subscribed_topics(group_id: string): Set<string> {
    const group = this.groups.get(group_id);
    return new Set([...(group?.members.values() ?? [])].flatMap((m) => this.topics_of(m)));
  }

  describe(group_id: string): ConsumerGroupDescription | null {
    const group = this.groups.get(group_id);
    if (!group) return null;
    return {
      group_id,
      state: state_of(group),
      epoch: group.epoch,
      assignment_epoch: group.assignment_epoch,
      assignor: group.assignor || this.settings.assignors[0]!,
      members: [...group.members.values()].map((m) => ({
        member_id: m.id,
        instance_id: m.instance_id,
        rack_id: m.rack_id,
        member_epoch: m.epoch,
        client_id: m.client_id,
        client_host: m.client_host,
        topics: m.topic_names,
        regex: m.regex,
        assignment: m.assigned,
        target: group.target.get(m.id) ?? EMPTY,
      })),
    };
  }

  group_ids(): string[] {
    return [...this.groups.keys()];
  }

  close(): void {
    for (const group of this.groups.values()) {
      for (const member of group.members.values()) {
        stop_timer(member, 'session_timer');
        stop_timer(member, 'rebalance_timer');
      }
    }
    this.groups.clear();
  }
}

function new_member(id: string, request: ConsumerHeartbeatRequest): ConsumerMember {
  return {
    id,
    instance_id: request.instance_id,
    rack_id: request.rack_id,
    client_id: request.client_id,
    client_host: request.client_host,
    epoch: 0,
    previous_epoch: -1,
    state: 'stable',
    topic_names: [],
    regex: null,
    pattern: null,
    may_describe: null,
    assignor: null,
    rebalance_timeout_ms: request.rebalance_timeout_ms,
    assigned: new Map(),
    revoking: new Map(),
    sent: null,
    session_timer: null,
    rebalance_timer: null,
  };
}

function stop_timer(member: ConsumerMember, which: 'session_timer' | 'rebalance_timer'): void {
  const timer = member[which];
  if (timer) clearTimeout(timer);
  member[which] = null;
}

function state_of(group: ConsumerGroup): ConsumerGroupState {
  if (group.members.size === 0) return 'empty';
  if (group.assignment_epoch !== group.epoch) return 'assigning';
  for (const m of group.members.values()) {
    if (m.epoch !== AWAY_EPOCH && (m.epoch !== group.assignment_epoch || m.state !== 'stable')) return 'reconciling';
  }
  return 'stable';
}
