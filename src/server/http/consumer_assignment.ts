// The consumer protocol's member assignment (what the group leader hands each member in
// SyncGroup): int16 version, [topic: string, partitions: [int32]], user data. The group
// coordinator keeps it as opaque bytes; the admin API decodes it to show who reads what.
import { Reader } from '../../protocol/kafka/wire.ts';

export interface TopicAssignment {
  topic: string;
  partitions: number[];
}

/** The member's topics and partitions; empty when the bytes are not a consumer assignment. */
export function decode_consumer_assignment(bytes: Buffer): TopicAssignment[] {
  if (bytes.length < 6) return [];
  try {
    const reader = new Reader(bytes);
    reader.int16(); // version: the fields read here are the same in every version
    const topics = reader.checked_length(reader.int32(), 6, 'topics');
    const out: TopicAssignment[] = [];
    for (let t = 0; t < topics; t++) {
      const topic = reader.bytes_slice(reader.checked_length(reader.int16(), 1, 'topic name')).toString('utf8');
      const count = reader.checked_length(reader.int32(), 4, 'partitions');
      const partitions: number[] = [];
      for (let p = 0; p < count; p++) partitions.push(reader.int32());
      const existing = out.find((a) => a.topic === topic);
      if (existing) existing.partitions.push(...partitions);
      else out.push({ topic, partitions });
    }
    for (const a of out) a.partitions.sort((x, y) => x - y);
    return out;
  } catch {
    return [];
  }
}
