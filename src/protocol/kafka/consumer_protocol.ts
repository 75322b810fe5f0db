// What the broker reads of the "consumer" protocol's member metadata (the subscription every Kafka
// client sends in JoinGroup): the topics subscribed. Version 0's fields lead every version:
// int16 version, an int32-counted array of int16-length strings, then fields the broker skips.
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
