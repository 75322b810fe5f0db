// DescribeLogDirs 0–4: the one data directory of this broker, with the size of each partition it
// holds there (the topics asked for, or all) and how far its log end is behind the high watermark;
// v4+ the size of its file system and the bytes still free there; from v2, tagged, a compacted
// partition's dirty ratio and its cleaner's work. Needs DESCRIBE on the cluster.
import { DESCRIBE_LOG_DIRS } from '../../../protocol/kafka/messages/35_describe_log_dirs.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import { kafka_handler, type RequestContext } from '../handler.ts';
import { allowed_on_cluster, REFUSED } from '../authorize.ts';

function partitions_held(ctx: RequestContext, topic: string, asked: readonly number[] | null) {
  const count = ctx.core.topics.get(topic)?.partitions ?? 0;
  const indexes = asked ?? Array.from({ length: count }, (_, p) => p);
  const held = [];
  for (const partition_index of indexes) {
    const local = partition_index < count ? ctx.core.partitions.local_state(topic, partition_index) : null;
    if (!local) continue;
    const compaction = local.compaction;
    held.push({
      partition_index,
      partition_size: local.bytes,
      offset_lag: Math.max(0, local.high_watermark - local.log_end_offset),
      is_future_key: false,
      sluice_dirty_ratio: compaction?.dirty_ratio ?? -1,
      sluice_first_dirty_offset: compaction?.first_dirty_offset ?? -1,
      sluice_cleaner_bytes_read: compaction?.bytes_read ?? 0,
      sluice_cleaner_bytes_written: compaction?.bytes_written ?? 0,
      sluice_last_cleaned_ms: compaction?.last_cleaned_ms ?? -1,
    });
  }
  return held;
}

export const describe_log_dirs_handler = kafka_handler(
  DESCRIBE_LOG_DIRS,
  { min: 0, max: 4, notes: 'one log directory per broker (its data directory), with its total and usable bytes' },
  async (request, ctx) => {
    if (!allowed_on_cluster(ctx, 'describe')) return { throttle_time_ms: 0, error_code: REFUSED.cluster, results: [] };
    const asked = request.topics ?? ctx.core.topics.list().map((topic) => ({ topic: topic.name, partitions: null }));
    const topics = asked
      .map(({ topic, partitions }) => ({ name: topic, partitions: partitions_held(ctx, topic, partitions) }))
      .filter((topic) => topic.partitions.length > 0);
    const { free_bytes: usable_bytes, total_bytes } = await ctx.core.stats.disk_space();
    const result = { error_code: ErrorCode.NONE, log_dir: ctx.core.data_dir, topics, total_bytes, usable_bytes };
    return { throttle_time_ms: 0, error_code: ErrorCode.NONE, results: [result] };
  },
);
