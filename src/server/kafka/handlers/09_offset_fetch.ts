// OffsetFetch 1-7: a group's committed offsets, of the partitions asked for or (topics null) of
// every partition it committed; -1 for a partition without a commit. With require_stable (v7,
// KIP-447) a partition whose offset a transaction not yet ended has committed answers
// UNSTABLE_OFFSET_COMMIT, and the client asks again. Not served: the batched form of v8+.
import { OFFSET_FETCH } from '../../../protocol/kafka/messages/09_offset_fetch.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import { BrokerError } from '../../../core/index.ts';
import { allowed, REFUSED } from '../authorize.ts';
import { kafka_handler, type RequestContext } from '../handler.ts';
import { kafka_error_code } from '../error_map.ts';

/** The partitions a group committed, by topic. */
function committed_partitions(
  ctx: RequestContext,
  group_id: string,
): Array<{ name: string; partition_indexes: number[] }> {
  const by_topic = new Map<string, number[]>();
  for (const entry of ctx.core.groups.committed_all(group_id)) {
    let partitions = by_topic.get(entry.topic);
    if (!partitions) by_topic.set(entry.topic, (partitions = []));
    partitions.push(entry.partition);
  }
  return [...by_topic].map(([name, partition_indexes]) => ({ name, partition_indexes }));
}

/** A partition answered with `error_code` and no offset. */
function without_offset(partition_index: number, error_code: number) {
  return { partition_index, committed_offset: -1, committed_leader_epoch: -1, metadata: '', error_code };
}

export const offset_fetch_handler = kafka_handler(
  OFFSET_FETCH,
  {
    min: 1,
    max: 7,
    notes:
      'require_stable (v7): UNSTABLE_OFFSET_COMMIT while a transaction holds the offset; one group per ' +
      'request (the batched form of v8+ is not served)',
  },
  (request, ctx) => {
    const { group_id } = request;
    if (!ctx.core.groups.is_coordinator)
      return { throttle_time_ms: 0, topics: [], error_code: ErrorCode.NOT_COORDINATOR };
    if (!allowed(ctx, 'describe', 'group', group_id))
      return { throttle_time_ms: 0, topics: [], error_code: REFUSED.group };
    // All of a group's offsets: those of topics the client may not describe are left out.
    const topics =
      request.topics ?? committed_partitions(ctx, group_id).filter((t) => allowed(ctx, 'describe', 'topic', t.name));
    const error_code = group_id === '' ? kafka_error_code(new BrokerError('invalid_group_id', 'empty group id')) : 0;
    return {
      throttle_time_ms: 0,
      topics: topics.map((t) => ({
        name: t.name,
        partitions: t.partition_indexes.map((partition_index) => {
          if (!allowed(ctx, 'describe', 'topic', t.name)) return without_offset(partition_index, REFUSED.topic);
          if (request.require_stable && ctx.core.groups.commit_pending(group_id, t.name, partition_index))
            return without_offset(partition_index, ErrorCode.UNSTABLE_OFFSET_COMMIT);
          const committed = ctx.core.groups.committed(group_id, t.name, partition_index);
          return {
            partition_index,
            committed_offset: committed?.offset ?? -1,
            committed_leader_epoch: committed?.leader_epoch ?? -1,
            metadata: committed?.metadata ?? '',
            error_code: 0,
          };
        }),
      })),
      error_code,
    };
  },
);
