// The server-side assignors of KIP-848 consumer groups: from the members' subscriptions (topic
// names already resolved) and the partition counts, each member's target partitions.
//   uniform  spreads every subscribed partition evenly over the members subscribed to its topic,
//            keeping each partition where it is whenever balance allows (few partitions move);
//   range    gives each member a contiguous range of every topic it subscribes to, the same ranges
//            across topics with equal partition counts (co-partitioned joins).

/** Topic name -> partitions (sorted). */
export type TopicAssignment = Map<string, number[]>;

export interface AssignorMember {
  member_id: string;
  /** Sorts before the member id where set: a static member keeps its place across restarts. */
  instance_id: string | null;
  topics: readonly string[];
  /** What it holds now (the uniform assignor keeps it where it can). */
  current: TopicAssignment;
}

export interface Assignor {
  readonly name: string;
  assign(members: readonly AssignorMember[], partitions_of: (topic: string) => number): Map<string, TopicAssignment>;
}

export const ASSIGNOR_NAMES = ['uniform', 'range'] as const;

const key_of = (topic: string, partition: number) => `${topic}\u0000${partition}`;

function by_place(a: AssignorMember, b: AssignorMember): number {
  const x = a.instance_id ?? a.member_id;
  const y = b.instance_id ?? b.member_id;
  return x < y ? -1 : x > y ? 1 : a.member_id < b.member_id ? -1 : 1;
}

function sorted_result(members: readonly AssignorMember[]): Map<string, TopicAssignment> {
  return new Map(members.map((m) => [m.member_id, new Map()]));
}

function add(result: TopicAssignment, topic: string, partition: number): void {
  const list = result.get(topic);
  if (list) list.push(partition);
  else result.set(topic, [partition]);
}

function sort_all(result: Map<string, TopicAssignment>): Map<string, TopicAssignment> {
  for (const assignment of result.values()) for (const list of assignment.values()) list.sort((a, b) => a - b);
  return result;
}

export const RANGE_ASSIGNOR: Assignor = {
  name: 'range',
  assign(members, partitions_of) {
    const result = sorted_result(members);
    const topics = [...new Set(members.flatMap((m) => m.topics))].sort();
    for (const topic of topics) {
      const count = partitions_of(topic);
      const subscribers = members.filter((m) => m.topics.includes(topic)).sort(by_place);
      const each = Math.floor(count / subscribers.length);
      const extra = count % subscribers.length;
      let next = 0;
      subscribers.forEach((member, i) => {
        const size = each + (i < extra ? 1 : 0);
        for (let p = next; p < next + size; p++) add(result.get(member.member_id)!, topic, p);
        next += size;
      });
    }
    return sort_all(result);
  },
};

interface Slot {
  member: AssignorMember;
  count: number;
  partitions: Set<string>;
}

export const UNIFORM_ASSIGNOR: Assignor = {
  name: 'uniform',
  assign(members, partitions_of) {
    const ordered = [...members].sort(by_place);
    const slots = new Map(ordered.map((m) => [m.member_id, { member: m, count: 0, partitions: new Set<string>() }]));
    const all: Array<{ topic: string; partition: number; eligible: Slot[] }> = [];
    for (const topic of [...new Set(members.flatMap((m) => m.topics))].sort()) {
      const eligible = ordered.filter((m) => m.topics.includes(topic)).map((m) => slots.get(m.member_id)!);
      for (let p = 0; p < partitions_of(topic); p++) all.push({ topic, partition: p, eligible });
    }
    // Each member keeps what it holds, up to the share an even spread gives it.
    const quota = Math.ceil(all.length / Math.max(1, members.length));
    const owner = new Map<string, Slot>();
    for (const item of all) {
      const holder = item.eligible.find((s) => (s.member.current.get(item.topic) ?? []).includes(item.partition));
      if (holder && holder.count < quota) take(owner, holder, item.topic, item.partition);
    }
    for (const item of all) {
      if (owner.has(key_of(item.topic, item.partition)) || item.eligible.length === 0) continue;
      take(owner, least_loaded(item.eligible), item.topic, item.partition);
    }
    balance(all, owner);
    const result = sorted_result(members);
    for (const item of all) {
      const slot = owner.get(key_of(item.topic, item.partition));
      if (slot) add(result.get(slot.member.member_id)!, item.topic, item.partition);
    }
    return sort_all(result);
  },
};

function take(owner: Map<string, Slot>, slot: Slot, topic: string, partition: number): void {
  const key = key_of(topic, partition);
  const before = owner.get(key);
  if (before) {
    before.count--;
    before.partitions.delete(key);
  }
  owner.set(key, slot);
  slot.count++;
  slot.partitions.add(key);
}

function least_loaded(slots: readonly Slot[]): Slot {
  let best = slots[0]!;
  for (const slot of slots) if (slot.count < best.count) best = slot;
  return best;
}

/**
 * Moves partitions from a member with two or more than another that could take them, until none
 * can (subscriptions that differ between members may leave a spread that cannot be evened).
 */
function balance(all: ReadonlyArray<{ topic: string; partition: number; eligible: Slot[] }>, owner: Map<string, Slot>) {
  const moves_max = all.length * 4;
  for (let moves = 0; moves < moves_max; moves++) {
    let moved = false;
    for (const item of all) {
      const from = owner.get(key_of(item.topic, item.partition));
      if (!from) continue;
      const to = least_loaded(item.eligible);
      if (to.count + 1 < from.count) {
        take(owner, to, item.topic, item.partition);
        moved = true;
        break;
      }
    }
    if (!moved) return;
  }
}

export const ASSIGNORS: ReadonlyMap<string, Assignor> = new Map([
  [UNIFORM_ASSIGNOR.name, UNIFORM_ASSIGNOR],
  [RANGE_ASSIGNOR.name, RANGE_ASSIGNOR],
]);
