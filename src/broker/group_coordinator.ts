// The classic consumer-group protocol: members join, one rebalance per generation, the leader's
// assignment handed out by SyncGroup, liveness by heartbeats within the session timeout, static
// membership by group.instance.id. Committed offsets are in OffsetStore; this file owns membership.
// Groups on the KIP-848 protocol are the ConsumerGroupCoordinator's (`consumer`): one group id is
// one kind of group while it has members; listing, describing, deleting and commits see both.
//
// States: empty -> preparing_rebalance (members re-join) -> completing_rebalance (waiting for the
// leader's SyncGroup) -> stable; any join, leave or expiry in completing/stable starts a rebalance.
import {
  encode_member_assignment,
  encode_member_metadata,
  subscribed_topics,
} from '../protocol/kafka/consumer_protocol.ts';
import crypto from 'node:crypto';
import { BrokerError, MemberIdRequiredError } from '../core/errors.ts';
import type { OffsetStore } from './offset_store.ts';
import type { Clock } from '../core/clock.ts';
import type { ConsumerGroupDescription, GroupState, GroupSummary, JoinRequest, JoinResult } from '../core/types.ts';
import {
  CONSUMER_GROUP_SETTINGS_DEFAULT,
  ConsumerGroupCoordinator,
  type ConsumerGroupDeps,
  type ConsumerGroupSettings,
} from './consumer_groups/consumer_group_coordinator.ts';

export interface GroupSettings {
  session_timeout_ms_min: number;
  session_timeout_ms_max: number;
  /** Extra wait for more members when the first one joins an empty group. */
  initial_rebalance_delay_ms: number;
  /** Members per group; a join beyond it is refused. */
  members_max: number;
  /** Groups on the KIP-848 protocol. */
  consumer: ConsumerGroupSettings;
}

export const GROUP_SETTINGS_DEFAULT: GroupSettings = {
  session_timeout_ms_min: 1_000,
  session_timeout_ms_max: 30 * 60 * 1000,
  initial_rebalance_delay_ms: 0,
  members_max: 1000,
  consumer: CONSUMER_GROUP_SETTINGS_DEFAULT,
};

const NO_TOPICS: ConsumerGroupDeps['topics'] = { get: () => undefined, list: () => [] };

interface Member {
  member_id: string;
  group_instance_id: string | null;
  client_id: string;
  client_host: string;
  session_timeout_ms: number;
  rebalance_timeout_ms: number;
  protocol_type: string;
  protocols: Array<{ name: string; metadata: Buffer }>;
  assignment: Buffer;
  join_waiter: { resolve: (r: JoinResult) => void; reject: (e: Error) => void } | null;
  sync_waiter: { resolve: (a: Buffer) => void; reject: (e: Error) => void } | null;
  session_timer: NodeJS.Timeout | null;
}

class Group {
  state: GroupState = 'empty';
  generation_id = 0;
  protocol_type = '';
  protocol_name = '';
  leader_id = '';
  readonly members = new Map<string, Member>();
  /** Member ids handed out by MEMBER_ID_REQUIRED, valid for the member's next join. */
  readonly pending_ids = new Set<string>();
  readonly static_members = new Map<string, string>(); // group.instance.id -> member id
  rebalance_timer: NodeJS.Timeout | null = null;
  /** A join into an empty group waits until then for more members (initial rebalance delay). */
  delay_until_ms = 0;

  constructor(readonly id: string) {}
}

function rebalance_error(): BrokerError {
  return new BrokerError('rebalance_in_progress', 'the group is rebalancing; join again');
}

export class GroupCoordinator {
  private readonly groups = new Map<string, Group>();
  /** Groups on the KIP-848 protocol. */
  readonly consumer: ConsumerGroupCoordinator;

  constructor(
    private readonly offsets: OffsetStore,
    private readonly settings: GroupSettings,
    private readonly clock: Clock,
    topics: ConsumerGroupDeps['topics'] = NO_TOPICS,
    group_configs?: ConsumerGroupDeps['group_configs'],
  ) {
    this.consumer = new ConsumerGroupCoordinator(
      { topics, classic_has_members: (id) => (this.groups.get(id)?.members.size ?? 0) > 0, group_configs },
      settings.consumer,
    );
  }

  private group(id: string, create: boolean): Group | undefined {
    let group = this.groups.get(id);
    if (!group && create) {
      group = new Group(id);
      this.groups.set(id, group);
    }
    return group;
  }

  // ------------------------------------------------------------------ JoinGroup

  join(request: JoinRequest): Promise<JoinResult> {
    if (request.group_id === '') throw new BrokerError('invalid_group_id', 'the group id is empty');
    const { session_timeout_ms_min: min, session_timeout_ms_max: max } = this.settings;
    if (request.session_timeout_ms < min || request.session_timeout_ms > max) {
      throw new BrokerError(
        'invalid_session_timeout',
        `session timeout ${request.session_timeout_ms} ms is outside [${min}, ${max}]`,
      );
    }
    if (this.consumer.has_members(request.group_id))
      throw new BrokerError(
        'inconsistent_group_protocol',
        `group ${request.group_id} has members on the consumer protocol (KIP-848); its consumers must all use one`,
      );
    const group = this.group(request.group_id, true)!;
    if (
      group.members.size > 0 &&
      (request.protocol_type !== group.protocol_type || !this.shares_protocol(group, request))
    ) {
      throw new BrokerError(
        'inconsistent_group_protocol',
        `member protocols do not match group ${group.id}'s (${group.protocol_type})`,
      );
    }
    let member_id = request.member_id;
    if (request.group_instance_id !== null) {
      const known = group.static_members.get(request.group_instance_id);
      if (member_id === '') {
        member_id = `${request.group_instance_id}-${crypto.randomUUID()}`;
        if (known !== undefined) this.replace_static_member(group, known, member_id);
      } else if (known !== undefined && known !== member_id) {
        throw new BrokerError('fenced_instance_id', `instance ${request.group_instance_id} is held by another member`);
      }
      group.static_members.set(request.group_instance_id, member_id);
    } else if (member_id === '') {
      member_id = `${request.client_id || 'member'}-${crypto.randomUUID()}`;
      if (request.require_known_member_id) {
        group.pending_ids.add(member_id);
        throw new MemberIdRequiredError(member_id);
      }
    } else if (!group.members.has(member_id) && !group.pending_ids.delete(member_id)) {
      throw new BrokerError('unknown_member_id', `unknown member ${member_id} in group ${group.id}`);
    }
    if (!group.members.has(member_id) && group.members.size >= this.settings.members_max) {
      throw new BrokerError('policy_violation', `group ${group.id} already has ${this.settings.members_max} members`);
    }
    return new Promise<JoinResult>((resolve, reject) => {
      const existing = group.members.get(member_id);
      const member: Member = existing ?? {
        member_id,
        group_instance_id: request.group_instance_id,
        client_id: request.client_id,
        client_host: request.client_host,
        session_timeout_ms: request.session_timeout_ms,
        rebalance_timeout_ms: request.rebalance_timeout_ms,
        protocol_type: request.protocol_type,
        protocols: request.protocols,
        assignment: Buffer.alloc(0),
        join_waiter: null,
        sync_waiter: null,
        session_timer: null,
      };
      member.session_timeout_ms = request.session_timeout_ms;
      member.rebalance_timeout_ms = request.rebalance_timeout_ms;
      member.protocols = request.protocols;
      member.join_waiter?.reject(rebalance_error());
      member.join_waiter = { resolve, reject };
      if (!existing) {
        group.members.set(member_id, member);
        if (group.members.size === 1) group.protocol_type = request.protocol_type;
      }
      this.touch(group, member);
      this.prepare_rebalance(group, group.state === 'empty' ? this.settings.initial_rebalance_delay_ms : 0);
      this.maybe_complete_join(group);
    });
  }

  private shares_protocol(group: Group, request: JoinRequest): boolean {
    return request.protocols.some((p) =>
      [...group.members.values()].every((m) => m.protocols.some((q) => q.name === p.name)),
    );
  }

  private replace_static_member(group: Group, old_id: string, new_id: string): void {
    const old = group.members.get(old_id);
    if (!old) return;
    this.remove_member(
      group,
      old,
      new BrokerError('fenced_instance_id', 'replaced by a newer member with the same instance id'),
      false,
    );
    if (group.leader_id === old_id) group.leader_id = new_id;
  }

  private prepare_rebalance(group: Group, delay_ms: number): void {
    if (group.state === 'preparing_rebalance') return;
    for (const member of group.members.values()) {
      member.sync_waiter?.reject(rebalance_error());
      member.sync_waiter = null;
    }
    group.state = 'preparing_rebalance';
    const timeout_ms = Math.max(delay_ms, ...[...group.members.values()].map((m) => m.rebalance_timeout_ms));
    if (group.rebalance_timer) clearTimeout(group.rebalance_timer);
    group.rebalance_timer = setTimeout(() => this.on_rebalance_timeout(group), timeout_ms);
    group.rebalance_timer.unref();
    group.delay_until_ms = this.clock.now_ms() + delay_ms;
    if (delay_ms > 0) {
      const wake = setTimeout(() => this.maybe_complete_join(group), delay_ms);
      wake.unref();
    }
  }

  private on_rebalance_timeout(group: Group): void {
    group.rebalance_timer = null;
    if (group.state !== 'preparing_rebalance') return;
    // Members that did not re-join within the rebalance timeout leave the group.
    for (const member of [...group.members.values()]) {
      if (!member.join_waiter) this.remove_member(group, member, null, false);
    }
    this.complete_join(group);
  }

  private maybe_complete_join(group: Group): void {
    if (group.state !== 'preparing_rebalance') return;
    if (this.clock.now_ms() < group.delay_until_ms) return;
    for (const member of group.members.values()) if (!member.join_waiter) return;
    this.complete_join(group);
  }

  private complete_join(group: Group): void {
    if (group.rebalance_timer) clearTimeout(group.rebalance_timer);
    group.rebalance_timer = null;
    if (group.members.size === 0) {
      group.state = 'empty';
      group.generation_id++;
      group.protocol_name = '';
      group.leader_id = '';
      return;
    }
    group.generation_id++;
    group.protocol_name = this.choose_protocol(group);
    if (!group.members.has(group.leader_id)) group.leader_id = group.members.keys().next().value!;
    group.state = 'completing_rebalance';
    const all = [...group.members.values()].map((m) => ({
      member_id: m.member_id,
      group_instance_id: m.group_instance_id,
      metadata: m.protocols.find((p) => p.name === group.protocol_name)?.metadata ?? Buffer.alloc(0),
    }));
    for (const member of group.members.values()) {
      const waiter = member.join_waiter;
      member.join_waiter = null;
      member.assignment = Buffer.alloc(0);
      this.touch(group, member);
      waiter?.resolve({
        generation_id: group.generation_id,
        protocol_type: group.protocol_type,
        protocol_name: group.protocol_name,
        leader: group.leader_id,
        member_id: member.member_id,
        members: member.member_id === group.leader_id ? all : [],
      });
    }
  }

  /** Each member votes for its most preferred protocol that every member supports. */
  private choose_protocol(group: Group): string {
    const members = [...group.members.values()];
    const candidates = members[0]!.protocols
      .map((p) => p.name)
      .filter((name) => members.every((m) => m.protocols.some((p) => p.name === name)));
    const votes = new Map<string, number>();
    for (const member of members) {
      const choice = member.protocols.find((p) => candidates.includes(p.name))?.name;
      if (choice) votes.set(choice, (votes.get(choice) ?? 0) + 1);
    }
    let best = candidates[0] ?? '';
    for (const name of candidates) if ((votes.get(name) ?? 0) > (votes.get(best) ?? 0)) best = name;
    return best;
  }

  // ------------------------------------------------------------------ SyncGroup, Heartbeat, LeaveGroup

  private member_of(
    group_id: string,
    member_id: string,
    generation_id: number,
    instance_id: string | null = null,
  ): { group: Group; member: Member } {
    const group = this.groups.get(group_id);
    const member = group?.members.get(member_id);
    if (!group || !member) {
      if (group && instance_id !== null && group.static_members.has(instance_id)) {
        throw new BrokerError('fenced_instance_id', `instance ${instance_id} is held by another member`);
      }
      throw new BrokerError('unknown_member_id', `unknown member ${member_id} in group ${group_id}`);
    }
    if (generation_id !== group.generation_id) {
      throw new BrokerError(
        'illegal_generation',
        `generation ${generation_id} is not the group's ${group.generation_id}`,
      );
    }
    return { group, member };
  }

  sync(
    group_id: string,
    member_id: string,
    generation_id: number,
    instance_id: string | null,
    assignments: Array<{ member_id: string; assignment: Buffer }>,
  ): Promise<{ protocol_type: string; protocol_name: string; assignment: Buffer }> {
    const { group, member } = this.member_of(group_id, member_id, generation_id, instance_id);
    this.touch(group, member);
    const answer = (assignment: Buffer) => ({
      protocol_type: group.protocol_type,
      protocol_name: group.protocol_name,
      assignment,
    });
    if (group.state === 'preparing_rebalance') throw rebalance_error();
    if (group.state === 'stable') return Promise.resolve(answer(member.assignment));
    return new Promise((resolve, reject) => {
      member.sync_waiter?.reject(rebalance_error());
      member.sync_waiter = { resolve: (assignment) => resolve(answer(assignment)), reject };
      if (member_id === group.leader_id) {
        for (const { member_id: id, assignment } of assignments) {
          const target = group.members.get(id);
          if (target) target.assignment = assignment;
        }
        group.state = 'stable';
        for (const m of group.members.values()) {
          const waiter = m.sync_waiter;
          m.sync_waiter = null;
          waiter?.resolve(m.assignment);
        }
      }
    });
  }

  heartbeat(group_id: string, member_id: string, generation_id: number, instance_id: string | null): void {
    const group = this.groups.get(group_id);
    if (!group || group.members.size === 0)
      throw new BrokerError('unknown_member_id', `unknown member ${member_id} in group ${group_id}`);
    const { member } = this.member_of(group_id, member_id, generation_id, instance_id);
    this.touch(group, member);
    if (group.state === 'preparing_rebalance') throw rebalance_error();
  }

  /** Removes members; returns an error per member (null when it left). */
  leave(
    group_id: string,
    leavers: Array<{ member_id: string; group_instance_id: string | null }>,
  ): Array<BrokerError | null> {
    const group = this.groups.get(group_id);
    return leavers.map(({ member_id, group_instance_id }) => {
      if (!group) return new BrokerError('unknown_member_id', `unknown group ${group_id}`);
      let id = member_id;
      if (group_instance_id !== null) {
        const known = group.static_members.get(group_instance_id);
        if (known === undefined) return new BrokerError('unknown_member_id', `unknown instance ${group_instance_id}`);
        if (id !== '' && id !== known)
          return new BrokerError('fenced_instance_id', `instance ${group_instance_id} is held by another member`);
        id = known;
      }
      const member = group.members.get(id);
      if (!member) return new BrokerError('unknown_member_id', `unknown member ${id}`);
      this.remove_member(group, member, new BrokerError('unknown_member_id', 'the member left the group'), true);
      return null;
    });
  }

  private touch(group: Group, member: Member): void {
    if (member.session_timer) clearTimeout(member.session_timer);
    member.session_timer = setTimeout(() => {
      if (group.members.get(member.member_id) !== member) return;
      this.remove_member(group, member, new BrokerError('unknown_member_id', 'session timed out'), true);
    }, member.session_timeout_ms);
    member.session_timer.unref();
  }

  private remove_member(group: Group, member: Member, error: BrokerError | null, rebalance: boolean): void {
    if (member.session_timer) clearTimeout(member.session_timer);
    group.members.delete(member.member_id);
    if (member.group_instance_id !== null && group.static_members.get(member.group_instance_id) === member.member_id) {
      group.static_members.delete(member.group_instance_id);
    }
    if (error) {
      member.join_waiter?.reject(error);
      member.sync_waiter?.reject(error);
    }
    member.join_waiter = null;
    member.sync_waiter = null;
    if (!rebalance) return;
    if (group.members.size === 0 && group.state !== 'preparing_rebalance') {
      group.state = 'empty';
      group.generation_id++;
      group.protocol_name = '';
      group.leader_id = '';
      return;
    }
    if (group.state === 'preparing_rebalance') this.maybe_complete_join(group);
    else this.prepare_rebalance(group, 0);
  }

  // ------------------------------------------------------------------ offsets, listing, deletion

  /** Checks that a member may commit (Kafka's rules); generation -1 on a memberless group is an admin commit. */
  validate_commit(group_id: string, member_id: string, generation_id: number, instance_id: string | null): void {
    if (group_id === '') throw new BrokerError('invalid_group_id', 'the group id is empty');
    if (this.consumer.validate_commit(group_id, member_id, generation_id)) return;
    const group = this.groups.get(group_id);
    if (generation_id < 0 && (!group || group.members.size === 0)) return;
    if (!group || group.members.size === 0)
      throw new BrokerError('unknown_member_id', `group ${group_id} has no member ${member_id}`);
    this.member_of(group_id, member_id, generation_id, instance_id);
    if (group.state === 'completing_rebalance') throw rebalance_error();
  }

  describe(group_id: string): GroupSummary {
    // A KIP-848 group with members is the one of that id (a classic group left behind is empty).
    const consumer = this.consumer.has_members(group_id) ? this.consumer.describe(group_id) : null;
    if (consumer) return classic_summary(consumer);
    const group = this.groups.get(group_id);
    if (!group) {
      const state: GroupState = this.offsets.has_group(group_id) ? 'empty' : 'dead';
      return { group_id, state, protocol_type: '', protocol_name: '', generation_id: 0, members: [] };
    }
    return {
      group_id,
      state: group.state,
      protocol_type: group.protocol_type,
      protocol_name: group.protocol_name,
      generation_id: group.generation_id,
      members: [...group.members.values()].map((m) => ({
        member_id: m.member_id,
        group_instance_id: m.group_instance_id,
        client_id: m.client_id,
        client_host: m.client_host,
        metadata: m.protocols.find((p) => p.name === group.protocol_name)?.metadata ?? Buffer.alloc(0),
        assignment: m.assignment,
      })),
    };
  }

  list(): Array<{ group_id: string; protocol_type: string; state: GroupState; type: 'classic' | 'consumer' }> {
    const ids = new Set([...this.groups.keys(), ...this.consumer.group_ids(), ...this.offsets.group_ids()]);
    return [...ids].map((id) => {
      const group = this.groups.get(id);
      const consumer = this.consumer.has_members(id);
      const state = consumer ? this.describe(id).state : (group?.state ?? 'empty');
      const type = consumer ? 'consumer' : 'classic';
      return { group_id: id, protocol_type: group?.protocol_type || 'consumer', state, type };
    });
  }

  async delete(group_id: string): Promise<void> {
    const group = this.groups.get(group_id);
    if ((group && group.members.size > 0) || this.consumer.has_members(group_id))
      throw new BrokerError('non_empty_group', `group ${group_id} still has members`);
    if (!group && !this.offsets.has_group(group_id))
      throw new BrokerError('group_id_not_found', `unknown group ${group_id}`);
    this.groups.delete(group_id);
    await this.offsets.delete_group(group_id);
  }

  /**
   * Removes the group's committed offsets of `partitions` (OffsetDelete); a partition of a topic a
   * member is subscribed to keeps its offset (group_subscribed_to_topic), as in Kafka.
   */
  async delete_offsets(
    group_id: string,
    partitions: ReadonlyArray<{ topic: string; partition: number }>,
  ): Promise<Array<BrokerError | null>> {
    const group = this.groups.get(group_id);
    if (!group && !this.offsets.has_group(group_id) && !this.consumer.has_members(group_id))
      throw new BrokerError('group_id_not_found', `unknown group ${group_id}`);
    const subscribed = this.consumer.subscribed_topics(group_id);
    for (const member of group?.members.values() ?? []) {
      const metadata = member.protocols.find((p) => p.name === group!.protocol_name)?.metadata;
      for (const topic of (metadata && subscribed_topics(metadata)) ?? []) subscribed.add(topic);
    }
    const outcomes = partitions.map(({ topic }) =>
      subscribed.has(topic)
        ? new BrokerError('group_subscribed_to_topic', `a member of group ${group_id} is subscribed to ${topic}`)
        : null,
    );
    await this.offsets.delete_offsets(
      group_id,
      partitions.filter((_, i) => outcomes[i] === null),
    );
    return outcomes;
  }

  close(): void {
    this.consumer.close();
    for (const group of this.groups.values()) {
      if (group.rebalance_timer) clearTimeout(group.rebalance_timer);
      for (const member of group.members.values()) {
        if (member.session_timer) clearTimeout(member.session_timer);
        member.join_waiter?.reject(new BrokerError('coordinator_not_available', 'the broker is shutting down'));
        member.sync_waiter?.reject(new BrokerError('coordinator_not_available', 'the broker is shutting down'));
      }
    }
    this.groups.clear();
  }
}

/** A KIP-848 group as DescribeGroups (the classic API) shows it: version 0 subscriptions and assignments. */
function classic_summary(group: ConsumerGroupDescription): GroupSummary {
  const states: Record<ConsumerGroupDescription['state'], GroupState> = {
    empty: 'empty',
    assigning: 'preparing_rebalance',
    reconciling: 'completing_rebalance',
    stable: 'stable',
  };
  return {
    group_id: group.group_id,
    state: states[group.state],
    protocol_type: 'consumer',
    protocol_name: group.assignor,
    generation_id: group.epoch,
    members: group.members.map((m) => ({
      member_id: m.member_id,
      group_instance_id: m.instance_id,
      client_id: m.client_id,
      client_host: m.client_host,
      metadata: encode_member_metadata(0, m.topics, null),
      assignment: encode_member_assignment(0, Object.fromEntries(m.assignment), null),
    })),
  };
}
