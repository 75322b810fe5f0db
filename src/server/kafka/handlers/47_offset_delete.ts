// OffsetDelete 0: removes a consumer group's committed offsets of the partitions named, each
// refused alone with GROUP_SUBSCRIBED_TO_TOPIC while a member is subscribed to its topic. Needs
// DELETE on the group, and READ on each topic (a topic not readable is refused alone).
import { OFFSET_DELETE } from '../../../protocol/kafka/messages/47_offset_delete.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import { kafka_handler } from '../handler.ts';
import { allowed, audit, refusal, REFUSED } from '../authorize.ts';
import { kafka_error_code } from '../error_map.ts';

export const offset_delete_handler = kafka_handler(
  OFFSET_DELETE,
  { min: 0, max: 0, notes: 'consumer groups; refused per partition while a member is subscribed to its topic' },
  async (request, ctx) => {
    const answer = (error_code: number) => ({ error_code, throttle_time_ms: 0, topics: [] });
    const group_id = request.group_id;
    if (!allowed(ctx, 'delete', 'group', group_id)) return answer(refusal(ctx, 'delete', 'group', group_id).error_code);
    const wanted = request.topics.flatMap((topic) =>
      topic.partitions.map(({ partition_index }) => ({ topic: topic.name, partition: partition_index })),
    );
    const readable = wanted.filter(({ topic }) => allowed(ctx, 'read', 'topic', topic));
    let outcomes;
    try {
      outcomes = await ctx.core.groups.delete_offsets(group_id, readable);
    } catch (error) {
      return answer(kafka_error_code(error));
    }
    audit(ctx, 'delete offsets', { group: group_id, partitions: readable.length });
    const code_of = (topic: string, partition: number) => {
      const i = readable.findIndex((p) => p.topic === topic && p.partition === partition);
      if (i < 0) return REFUSED.topic;
      return outcomes[i] ? kafka_error_code(outcomes[i]) : ErrorCode.NONE;
    };
    return {
      error_code: ErrorCode.NONE,
      throttle_time_ms: 0,
      topics: request.topics.map((topic) => ({
        name: topic.name,
        partitions: topic.partitions.map(({ partition_index }) => ({
          partition_index,
          error_code: code_of(topic.name, partition_index),
        })),
      })),
    };
  },
);
