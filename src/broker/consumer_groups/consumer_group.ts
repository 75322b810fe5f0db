// A KIP-848 consumer group as its coordinator keeps it, and each member's reconciliation: the
// member moves toward the target assignment one step per heartbeat, never holding a partition
// another member still holds.
//   stable      it has its whole target at the group's assignment epoch;
//   unrevoked   it must first give up `revoking` (partitions no longer in its target): its epoch
//               stays until a heartbeat shows it owns none of them, within its rebalance timeout;
//   unreleased  it is at the assignment epoch, and some target partitions are still held by others
//               (they come on a later heartbeat, once released).
import { invariant } from '../../core/invariants.ts';
import type { TopicAssignment } from './assignors.ts';

export type MemberState = 'stable' | 'unrevoked' | 'unreleased';

/** The epoch of a static member that left for now (it keeps its partitions until its session ends). */
export const AWAY_EPOCH = -2;

export interface ConsumerMember {
  id: string;
  instance_id: string | null;
  rack_id: string | null;
  client_id: string;
  client_host: string;
  epoch: number;
  previous_epoch: number;
  state: MemberState;
  /** Sorted, deduplicated. */
  topic_names: string[];
  regex: string | null;
  /** The regex compiled (whole names). */
  pattern: RegExp | null;
  /** The topics its regex may match (its principal's DESCRIBE permission); null: every topic. */
  may_describe: ((topic: string) => boolean) | null;
  assignor: string | null;
  rebalance_timeout_ms: number;
  /** The partitions it may use. */
  assigned: TopicAssignment;
  /** Partitions it must give up; still its own until it says so. */
  revoking: TopicAssignment;
  /** The assignment last sent to it (assignment_key), null before any. */
  sent: string | null;
  session_timer: NodeJS.Timeout | null;
  rebalance_timer: NodeJS.Timeout | null;
}

export class ConsumerGroup {
  /** Bumped on every change of members, subscriptions or the subscribed topics' partitions. */
  epoch = 0;
  /** The group epoch the target assignment was computed at. */
  assignment_epoch = 0;
  assignor = '';
  readonly members = new Map<string, ConsumerMember>();
  /** Instance id -> member id. */
  readonly static_members = new Map<string, string>();
  /** Member id -> its target partitions. */
  target = new Map<string, TopicAssignment>();
  /** Topic and partition (partition_key) -> the member holding it (assigned or revoking). */
  readonly owners = new Map<string, string>();
  /** The subscribed topics and their partition counts the target was computed from. */
  metadata = '';

  constructor(readonly id: string) {}
}

export const partition_key = (topic: string, partition: number) => `${topic}\u0000${partition}`;

/** A canonical text of an assignment, to tell whether it changed. */
export function assignment_key(assignment: TopicAssignment): string {
  return [...assignment]
    .filter(([, partitions]) => partitions.length > 0)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([topic, partitions]) => `${topic}:${[...partitions].sort((a, b) => a - b).join(',')}`)
    .join(';');
}

function has(assignment: TopicAssignment, topic: string, partition: number): boolean {
  return assignment.get(topic)?.includes(partition) ?? false;
}

function add(assignment: TopicAssignment, topic: string, partition: number): void {
  const list = assignment.get(topic);
  if (list) list.push(partition);
  else assignment.set(topic, [partition]);
}

function each(assignment: TopicAssignment, visit: (topic: string, partition: number) => void): void {
  for (const [topic, partitions] of assignment) for (const partition of partitions) visit(topic, partition);
}

function count(assignment: TopicAssignment): number {
  let n = 0;
  for (const partitions of assignment.values()) n += partitions.length;
  return n;
}

/** Frees what the member holds in `partitions` (it gave them up, or it is gone). */
export function release(group: ConsumerGroup, member: ConsumerMember, partitions: TopicAssignment): void {
  each(partitions, (topic, partition) => {
    const key = partition_key(topic, partition);
    if (group.owners.get(key) === member.id) group.owners.delete(key);
  });
}

/** Whether the member's report of what it owns shows it gave up every partition being revoked. */
function revoked(member: ConsumerMember, owned: TopicAssignment | null): boolean {
  if (owned === null) return false;
  let still = false;
  each(member.revoking, (topic, partition) => (still ||= has(owned, topic, partition)));
  return !still;
}

/**
 * One step of the member toward its target (see the states above). Returns true when the member
 * has just been asked to revoke partitions (its rebalance timeout starts).
 */
export function reconcile(group: ConsumerGroup, member: ConsumerMember, owned: TopicAssignment | null): boolean {
  if (member.epoch === AWAY_EPOCH) return false;
  if (member.state === 'unrevoked') {
    if (!revoked(member, owned)) return false;
    release(group, member, member.revoking);
    member.revoking = new Map();
    member.state = 'stable';
  }
  if (member.state === 'stable' && member.epoch === group.assignment_epoch) return false;
  const target = group.target.get(member.id) ?? new Map<string, number[]>();
  const keep = new Map<string, number[]>();
  const revoke = new Map<string, number[]>();
  each(member.assigned, (topic, partition) => add(has(target, topic, partition) ? keep : revoke, topic, partition));
  if (count(revoke) > 0) {
    member.assigned = keep;
    member.revoking = revoke;
    member.state = 'unrevoked';
    return true;
  }
  let pending = false;
  each(target, (topic, partition) => {
    if (has(keep, topic, partition)) return;
    const key = partition_key(topic, partition);
    const owner = group.owners.get(key);
    if (owner === undefined) {
      group.owners.set(key, member.id);
      add(keep, topic, partition);
    } else if (owner !== member.id) pending = true;
  });
  for (const partitions of keep.values()) partitions.sort((a, b) => a - b);
  member.assigned = keep;
  if (member.epoch !== group.assignment_epoch) {
    member.previous_epoch = member.epoch;
    member.epoch = group.assignment_epoch;
  }
  member.state = pending ? 'unreleased' : 'stable';
  return false;
}

/** Every partition is held by at most one member, and the owners map says which. */
export function check_owners(group: ConsumerGroup): void {
  const seen = new Map<string, string>();
  for (const member of group.members.values()) {
    for (const held of [member.assigned, member.revoking]) {
      each(held, (topic, partition) => {
        const key = partition_key(topic, partition);
        invariant(!seen.has(key), () => `${topic}-${partition} is held by ${seen.get(key)} and ${member.id}`);
        invariant(group.owners.get(key) === member.id, () => `${topic}-${partition}'s owner is not ${member.id}`);
        seen.set(key, member.id);
      });
    }
  }
  invariant(seen.size === group.owners.size, () => `group ${group.id} has owners no member holds`);
}
