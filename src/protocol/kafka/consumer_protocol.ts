// The "consumer" protocol's member metadata (the subscription every Kafka client sends in
// JoinGroup) and member assignment (what SyncGroup hands out). The broker reads the topics of a
// subscription; version 0's fields lead every version: int16 version, an int32-counted array of
// int16-length strings, then fields the broker skips. Both are written by the SDK's assignors and by
// the broker when DescribeGroups shows a KIP-848 group's members.
import { ProtocolDecodeError, Reader } from './wire.ts';

/** The topics a member's subscription names; null when the metadata is not one. */
export function subscribed_topics(metadata: Buffer): string[] | null {
  try {
    const reader = new Reader(metadata);
    reader.int16();
    const count = reader.checked_length(reader.int32(), 2, 'topics');
    const topics: string[] = [];
    for (let i = 0; i < count; i++) {
      const length = reader.checked_length(reader.int16(), 1, 'topic');
      topics.push(reader.bytes_slice(length).toString('utf8'));
    }
    return topics;
  } catch (error) {
    if (error instanceof ProtocolDecodeError) return null;
    throw error;
  }
}

class Encoder {
  private readonly chunks: Buffer[] = [];
  int16(value: number): this {
    const b = Buffer.alloc(2);
    b.writeInt16BE(value);
    this.chunks.push(b);
    return this;
  }
  int32(value: number): this {
    const b = Buffer.alloc(4);
    b.writeInt32BE(value);
    this.chunks.push(b);
    return this;
  }
  string(value: string): this {
    const bytes = Buffer.from(value, 'utf8');
    this.int16(bytes.length);
    this.chunks.push(bytes);
    return this;
  }
  bytes(value: Buffer): this {
    this.int32(value.length);
    this.chunks.push(value);
    return this;
  }
  finish(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

/** A subscription: its version, the topics, and user data (empty when null). */
export function encode_member_metadata(version: number, topics: readonly string[], user_data: Buffer | null): Buffer {
  const encoder = new Encoder().int16(version).int32(topics.length);
  for (const topic of topics) encoder.string(topic);
  return encoder.bytes(user_data ?? Buffer.alloc(0)).finish();
}

/** An assignment: its version, the partitions by topic, and user data (empty when null). */
export function encode_member_assignment(
  version: number,
  assignment: Readonly<Record<string, readonly number[]>>,
  user_data: Buffer | null,
): Buffer {
  const topics = Object.keys(assignment);
  const encoder = new Encoder().int16(version).int32(topics.length);
  for (const topic of topics) {
    const partitions = assignment[topic]!;
    encoder.string(topic).int32(partitions.length);
    for (const partition of partitions) encoder.int32(partition);
  }
  return encoder.bytes(user_data ?? Buffer.alloc(0)).finish();
}
