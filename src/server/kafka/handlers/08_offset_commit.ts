// OffsetCommit 2-9: committed offsets, checked against group membership first, answered once the
// commit is durable in __consumer_offsets. Metadata longer than OFFSET_METADATA_BYTES_MAX and
// unknown topics are refused per partition.
import { OFFSET_COMMIT } from '../../../protocol/kafka/messages/08_offset_commit.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import type { OffsetCommitEntry } from '../../../core/index.ts';
import { allowed, require_allowed, REFUSED } from '../authorize.ts';
import { kafka_handler } from '../handler.ts';
import { kafka_error_code } from '../error_map.ts';

/** Longest metadata string stored with a committed offset. */
const OFFSET_METADATA_BYTES_MAX = 4096;

export const offset_commit_handler = kafka_handler(
  OFFSET_COMMIT,
  {
    min: 2,
    max: 9,
    notes: 'generation -1 on a memberless group is an admin commit; a KIP-848 member commits with its member epoch',
  },
  async (request, ctx) => {
    const { group_id, topics } = request;
    const answer = (code_of: (topic: string, partition: number) => number) => ({
      throttle_time_ms: 0,
      topics: topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((p) => ({
          partition_index: p.partition_index,
          error_code: code_of(t.name, p.partition_index),
        })),
      })),
    });
    try {
      require_allowed(ctx, 'read', 'group', group_id);
      ctx.core.groups.validate_commit(
        group_id,
        request.member_id,
        request.generation_id_or_member_epoch,
        request.group_instance_id,
      );
    } catch (error) {
      const code = kafka_error_code(error);
      return answer(() => code);
    }
    const errors = new Map<string, number>();
    const entries: OffsetCommitEntry[] = [];
    for (const topic of topics) {
      for (const partition of topic.partitions) {
        const key = `${topic.name}:${partition.partition_index}`;
        const metadata = partition.committed_metadata;
        if (!allowed(ctx, 'read', 'topic', topic.name)) errors.set(key, REFUSED.topic);
        else if (!ctx.core.topics.get(topic.name)) errors.set(key, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        else if (metadata !== null && Buffer.byteLength(metadata) > OFFSET_METADATA_BYTES_MAX)
          errors.set(key, ErrorCode.OFFSET_METADATA_TOO_LARGE);
        else {
          entries.push({
            topic: topic.name,
            partition: partition.partition_index,
            offset: partition.committed_offset,
            metadata,
            leader_epoch: partition.committed_leader_epoch,
          });
        }
      }
    }
    try {
      await ctx.core.groups.commit(group_id, entries);
    } catch (error) {
      const code = kafka_error_code(error);
      return answer((t, p) => errors.get(`${t}:${p}`) ?? code);
    }
    return answer((t, p) => errors.get(`${t}:${p}`) ?? 0);
  },
);
