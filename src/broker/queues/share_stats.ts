// What a share group holds and has done, for describe calls, the admin API and metrics: read off
// the coordinator's groups, never changing them.
import type { PartitionReader } from '../../core/partition_reader.ts';
import type { QueuePartitionStats, QueueStats, ShareGroupDescription, TopicRecord } from '../../core/types.ts';
import { visible_end, type Member, type ShareGroup } from './share_group.ts';

/** What the statistics read besides the group: topics (partition counts) and high watermarks. */
export interface StatsSources {
  topics: { get(name: string): TopicRecord | undefined };
  reader_now(topic: string, partition: number): PartitionReader;
}

export interface PartitionSummary {
  topic: string;
  partition: number;
  start_offset: number;
  end_offset: number;
  in_flight: number;
  dead_letters_pending: number;
}

export function describe_group(
  group: ShareGroup,
  assignment: (member: Member) => Map<string, number[]>,
): ShareGroupDescription {
  return {
    group_id: group.id,
    epoch: group.epoch,
    members: [...group.members.values()].map((m) => ({
      member_id: m.id,
      member_epoch: m.epoch,
      client_id: m.client_id,
      client_host: m.client_host,
      topics: m.topics,
      assignment: assignment(m),
    })),
  };
}

export function partitions_of(group: ShareGroup): PartitionSummary[] {
  return [...group.partitions.values()].map((s) => ({
    topic: s.topic,
    partition: s.partition,
    start_offset: s.share.start_offset,
    end_offset: s.share.end_offset,
    in_flight: s.share.in_flight,
    dead_letters_pending: s.letters.length,
  }));
}

export function queue_stats(group: ShareGroup, deps: StatsSources, detail: boolean): QueueStats {
  const topics = new Set<string>();
  for (const member of group.members.values()) for (const topic of member.topics) topics.add(topic);
  const partitions: QueuePartitionStats[] = [];
  let in_flight = 0;
  let available = 0;
  for (const state of group.partitions.values()) {
    topics.add(state.topic);
    const topic = deps.topics.get(state.topic);
    const log = topic && state.partition < topic.partitions ? deps.reader_now(state.topic, state.partition) : null;
    const high_watermark = log?.high_watermark ?? state.share.end_offset;
    // Records never delivered count up to where the group may read: under read_committed, the last
    // stable offset (an open transaction's records are not available yet).
    const end = log ? visible_end(group.settings, log) : state.share.end_offset;
    const stats: QueuePartitionStats = {
      topic: state.topic,
      partition: state.partition,
      start_offset: state.share.start_offset,
      end_offset: state.share.end_offset,
      high_watermark,
      in_flight: state.share.in_flight,
      available: state.share.available_in_window + Math.max(0, end - state.share.end_offset),
      dead_letters_pending: state.letters.length,
    };
    if (detail) stats.census = state.share.census();
    in_flight += stats.in_flight;
    available += stats.available;
    partitions.push(stats);
  }
  partitions.sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition));
  return {
    group_id: group.id,
    members: group.members.size,
    topics: [...topics].sort(),
    in_flight,
    available,
    counters: { ...group.counters },
    partitions,
  };
}
