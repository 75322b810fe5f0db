// Partition assignors for consumer groups, in kafkajs's shape (a PartitionAssigner is a factory
// that returns an Assigner), with the standard "consumer" protocol encodings that Java clients,
// librdkafka and kafkajs use, so members of different clients can share a group when they offer an
// assignor of the same name:
//
//   subscription (member metadata) v0: int16 version, array of topic strings, user data bytes
//   assignment v0:                     int16 version, array of [topic string, array of int32], user data bytes
//
// Later versions of both add fields at the end; decoding reads the v0 fields and ignores the rest.
// Strings are int16-length-prefixed, arrays int32-count-prefixed, bytes int32-length-prefixed.
import type { Cluster } from './cluster.ts';
import { encode_member_assignment, encode_member_metadata } from '../protocol/kafka/consumer_protocol.ts';

/** A member of the group as the leader sees it after JoinGroup. */
export interface GroupMember {
  memberId: string;
  memberMetadata: Buffer;
  /** The member's static group.instance.id, when it has one (orders members stably across restarts). */
  groupInstanceId?: string | null;
}

export interface GroupMemberAssignment {
  memberId: string;
  memberAssignment: Buffer;
}

/** One protocol a member offers in JoinGroup. */
export interface GroupState {
  name: string;
  metadata: Buffer;
}

/** topic → partitions */
export type Assignment = Record<string, number[]>;

export interface Assigner {
  /** The protocol name offered in JoinGroup (Java: 'range', 'roundrobin'). */
  name: string;
  /**
   * Further protocol names offered with the same metadata, for the same algorithm under another
   * client's name (kafkajs calls round robin 'RoundRobinAssigner'). Offered after `name`.
   */
  aliases?: string[];
  version: number;
  assign(group: { members: GroupMember[]; topics: string[] }): Promise<GroupMemberAssignment[]>;
  protocol(subscription: { topics: string[] }): GroupState;
}

/** kafkajs's shape: a factory the consumer calls with its cluster and group. */
export type PartitionAssigner = (config: { cluster: Cluster; groupId: string }) => Assigner;

// ------------------------------------------------------------------ the consumer protocol encodings

export interface MemberMetadata {
  version: number;
  topics: string[];
  userData: Buffer | null;
}

export interface MemberAssignment {
  version: number;
  assignment: Assignment;
  userData: Buffer | null;
}

class Decoder {
  private at = 0;
  constructor(private readonly buffer: Buffer) {}
  private need(n: number): number {
    if (this.at + n > this.buffer.length) throw new RangeError('consumer protocol data is truncated');
    const at = this.at;
    this.at += n;
    return at;
  }
  get remaining(): number {
    return this.buffer.length - this.at;
  }
  int16(): number {
    return this.buffer.readInt16BE(this.need(2));
  }
  int32(): number {
    return this.buffer.readInt32BE(this.need(4));
  }
  string(): string {
    const length = this.int16();
    if (length < 0) return '';
    const at = this.need(length);
    return this.buffer.toString('utf8', at, at + length);
  }
  bytes(): Buffer | null {
    if (this.remaining === 0) return null; // some clients omit empty user data
    const length = this.int32();
    if (length < 0) return null;
    const at = this.need(length);
    return this.buffer.subarray(at, at + length);
  }
  array<T>(item: () => T): T[] {
    const count = this.int32();
    const out: T[] = [];
    for (let i = 0; i < count; i++) out.push(item());
    return out;
  }
}

export const AssignerProtocol = {
  MemberMetadata: {
    encode({
      version,
      topics,
      userData = null,
    }: {
      version: number;
      topics: string[];
      userData?: Buffer | null;
    }): Buffer {
      return encode_member_metadata(version, topics, userData);
    },
    /** Null for an empty buffer. */
    decode(buffer: Buffer): MemberMetadata | null {
      if (buffer.length < 2) return null;
      const decoder = new Decoder(buffer);
      return { version: decoder.int16(), topics: decoder.array(() => decoder.string()), userData: decoder.bytes() };
    },
  },
  MemberAssignment: {
    encode({
      version,
      assignment,
      userData = null,
    }: {
      version: number;
      assignment: Assignment;
      userData?: Buffer | null;
    }): Buffer {
      return encode_member_assignment(version, assignment, userData);
    },
    /** Null for an empty buffer (the coordinator's answer for a member the leader left out). */
    decode(buffer: Buffer): MemberAssignment | null {
      if (buffer.length < 2) return null;
      const decoder = new Decoder(buffer);
      const version = decoder.int16();
      const assignment: Assignment = Object.create(null) as Assignment;
      for (const { topic, partitions } of decoder.array(() => ({
        topic: decoder.string(),
        partitions: decoder.array(() => decoder.int32()),
      }))) {
        assignment[topic] = [...(assignment[topic] ?? []), ...partitions];
      }
      return { version, assignment, userData: decoder.bytes() };
    },
  },
};

// ------------------------------------------------------------------ the algorithms, as pure functions

export interface MemberSubscription {
  memberId: string;
  groupInstanceId?: string | null;
  topics: string[];
}

function compare(x: string, y: string): number {
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Members in Java's order: static members first, by instance id; then the others by member id. */
function sorted(members: MemberSubscription[]): MemberSubscription[] {
  return [...members].sort((a, b) => {
    if (a.groupInstanceId && b.groupInstanceId) return compare(a.groupInstanceId, b.groupInstanceId);
    if (a.groupInstanceId) return -1;
    if (b.groupInstanceId) return 1;
    return compare(a.memberId, b.memberId);
  });
}

function empty_assignments(members: MemberSubscription[]): Map<string, Assignment> {
  return new Map(members.map((m) => [m.memberId, Object.create(null) as Assignment]));
}

function add(target: Assignment, topic: string, partition: number): void {
  (target[topic] ??= []).push(partition);
}

/**
 * Round robin (Java's RoundRobinAssignor): all partitions of all subscribed topics, sorted by topic
 * then partition, dealt in turn to the members (sorted), skipping members not subscribed to the
 * partition's topic.
 */
export function round_robin_assign(
  members: MemberSubscription[],
  partitions: ReadonlyMap<string, number>,
): Map<string, Assignment> {
  const result = empty_assignments(members);
  const order = sorted(members);
  if (order.length === 0) return result;
  const topics = [...new Set(members.flatMap((m) => m.topics))].filter((t) => partitions.has(t)).sort();
  let next = 0;
  for (const topic of topics) {
    for (let partition = 0; partition < partitions.get(topic)!; partition++) {
      for (let tried = 0; tried < order.length; tried++) {
        const member = order[next % order.length]!;
        next++;
        if (member.topics.includes(topic)) {
          add(result.get(member.memberId)!, topic, partition);
          break;
        }
      }
    }
  }
  return result;
}

/**
 * Range (Java's RangeAssignor): per topic, its subscribers (sorted) each take a contiguous range;
 * the first `partitions % members` take one extra.
 */
export function range_assign(
  members: MemberSubscription[],
  partitions: ReadonlyMap<string, number>,
): Map<string, Assignment> {
  const result = empty_assignments(members);
  const topics = [...new Set(members.flatMap((m) => m.topics))].filter((t) => partitions.has(t)).sort();
  for (const topic of topics) {
    const subscribers = sorted(members.filter((m) => m.topics.includes(topic)));
    const count = partitions.get(topic)!;
    const per_member = Math.floor(count / subscribers.length);
    const extra = count % subscribers.length;
    let partition = 0;
    subscribers.forEach((member, i) => {
      const take = per_member + (i < extra ? 1 : 0);
      for (let k = 0; k < take; k++) add(result.get(member.memberId)!, topic, partition++);
    });
  }
  return result;
}

// ------------------------------------------------------------------ the assigners

function assigner(name: string, aliases: string[], algorithm: typeof round_robin_assign, cluster: Cluster): Assigner {
  return {
    name,
    aliases,
    version: 0,
    protocol({ topics }) {
      return { name, metadata: AssignerProtocol.MemberMetadata.encode({ version: 0, topics }) };
    },
    async assign({ members, topics }) {
      const subscriptions = members.map((m) => ({
        memberId: m.memberId,
        groupInstanceId: m.groupInstanceId ?? null,
        topics: AssignerProtocol.MemberMetadata.decode(m.memberMetadata)?.topics ?? [],
      }));
      const counts = new Map<string, number>();
      for (const topic of topics) {
        const info = cluster.topics.get(topic) ?? (await cluster.topic(topic).catch(() => null));
        if (info) counts.set(topic, info.partitions.length);
      }
      const result = algorithm(subscriptions, counts);
      return [...result].map(([memberId, assignment]) => ({
        memberId,
        memberAssignment: AssignerProtocol.MemberAssignment.encode({ version: 0, assignment }),
      }));
    },
  };
}

/** Round robin; offered as 'roundrobin' (Java, librdkafka) and 'RoundRobinAssigner' (kafkajs). */
export const roundRobin: PartitionAssigner = ({ cluster }) =>
  assigner('roundrobin', ['RoundRobinAssigner'], round_robin_assign, cluster);

/** Range; offered as 'range' (Java, librdkafka). */
export const range: PartitionAssigner = ({ cluster }) => assigner('range', [], range_assign, cluster);

export const PartitionAssigners = { roundRobin, range };
