// Consumer-group lag: per committed partition, the high watermark minus the committed offset (never
// below zero). Partitions of deleted topics are left out. The core API's groups.lag() answers it.
import type { OffsetStore } from './offset_store.ts';
import type { TopicManager } from './topics.ts';
import type { PartitionLag } from '../core/types.ts';

/** A partition's high watermark as the caller knows it (a local log, or the leader's). */
export type HighWatermarkOf = (topic: string, partition: number) => number;

export function committed_lag(
  offsets: OffsetStore,
  topics: TopicManager,
  high_watermark_of: HighWatermarkOf,
  group_id: string,
): PartitionLag[] {
  const out: PartitionLag[] = [];
  for (const entry of offsets.all(group_id)) {
    const topic = topics.get(entry.topic);
    if (!topic || entry.partition >= topic.partitions) continue;
    const high_watermark = high_watermark_of(entry.topic, entry.partition);
    out.push({
      topic: entry.topic,
      partition: entry.partition,
      committed: entry.offset,
      high_watermark,
      lag: Math.max(0, high_watermark - entry.offset),
    });
  }
  return out;
}
