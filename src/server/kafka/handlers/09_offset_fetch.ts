// OffsetFetch 1-9: a group's committed offsets (v8+: several groups'), of the partitions asked for
// or (topics null) of every partition it committed; -1 for a partition without a commit. With
// require_stable (v7, KIP-447) a partition whose offset a transaction not yet ended has committed
// answers UNSTABLE_OFFSET_COMMIT, and the client asks again.
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

interface GroupAsked {
  group_id: string;
  topics: ReadonlyArray<{ name: string; partition_indexes: readonly number[] }> | null;
  /** v9: a consumer-protocol member and its epoch (-1: none). */
  member_id?: string | null;
  member_epoch: number;
}

/** One group's committed offsets (its error code when it cannot be answered). */
function group_offsets(ctx: RequestContext, asked: GroupAsked, require_stable: boolean) {
  const { group_id } = asked;
  if (!ctx.core.groups.is_coordinator) return { topics: [], error_code: ErrorCode.NOT_COORDINATOR };
  if (!allowed(ctx, 'describe', 'group', group_id)) return { topics: [], error_code: REFUSED.group };
  if (asked.member_epoch >= 0) {
    try {
      ctx.core.groups.validate_offset_fetch(group_id, asked.member_id ?? '', asked.member_epoch);
    } catch (error) {
      return { topics: [], error_code: kafka_error_code(error) };
    }
  }
  // All of a group's offsets: those of topics the client may not describe are left out.
  const topics =
    asked.topics ?? committed_partitions(ctx, group_id).filter((t) => allowed(ctx, 'describe', 'topic', t.name));
  const error_code = group_id === '' ? kafka_error_code(new BrokerError('invalid_group_id', 'empty group id')) : 0;
  return {
    topics: topics.map((t) => ({
      name: t.name,
      partitions: t.partition_indexes.map((partition_index) => {
        if (!allowed(ctx, 'describe', 'topic', t.name)) return without_offset(partition_index, REFUSED.topic);
        if (require_stable && ctx.core.groups.commit_pending(group_id, t.name, partition_index))
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
}

export const offset_fetch_handler = kafka_handler(
  OFFSET_FETCH,
  {
    min: 1,
    max: 9,
    notes:
      'require_stable (v7): UNSTABLE_OFFSET_COMMIT while a transaction holds the offset; several groups at once ' +
      "(v8+); a member epoch (v9, KIP-848 members) must be the member's current one (STALE_MEMBER_EPOCH)",
  },
  (request, ctx) => {
    if (ctx.version < 8) {
      const asked = { group_id: request.group_id, topics: request.topics, member_epoch: -1 };
      return { throttle_time_ms: 0, ...group_offsets(ctx, asked, request.require_stable), groups: [] };
    }
    const groups = request.groups.map((group) => ({
      group_id: group.group_id,
      ...group_offsets(ctx, group, request.require_stable),
    }));
    return { throttle_time_ms: 0, topics: [], error_code: 0, groups };
  },
);
