// ShareGroupDescribe 1 (KIP-932): a share group's members with their subscriptions and assignments.
import { SHARE_GROUP_DESCRIBE } from '../../../protocol/kafka/messages/77_share_group_describe.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import { kafka_handler, type RequestContext } from '../handler.ts';
import { allowed, refusal } from '../authorize.ts';

function describe(ctx: RequestContext, group_id: string) {
  const base = {
    error_code: 0,
    error_message: null,
    group_id,
    group_state: 'Dead',
    group_epoch: -1,
    assignment_epoch: -1,
    assignor_name: 'simple',
    members: [],
  };
  if (!allowed(ctx, 'describe', 'group', group_id)) return { ...base, ...refusal(ctx, 'describe', 'group', group_id) };
  if (!ctx.core.shares.is_coordinator)
    return {
      ...base,
      error_code: ErrorCode.NOT_COORDINATOR,
      error_message: `broker ${ctx.core.node_id} is not the share-group coordinator`,
    };
  const described = ctx.core.shares.describe(group_id);
  if (!described)
    return {
      ...base,
      error_code: ErrorCode.GROUP_ID_NOT_FOUND,
      error_message: `share group ${group_id} does not exist`,
    };
  return {
    ...base,
    group_state: described.members.length > 0 ? 'Stable' : 'Empty',
    group_epoch: described.epoch,
    assignment_epoch: described.epoch,
    members: described.members.map((m) => ({
      member_id: m.member_id,
      rack_id: null,
      member_epoch: m.member_epoch,
      client_id: m.client_id,
      client_host: m.client_host,
      subscribed_topic_names: m.topics,
      assignment: {
        topic_partitions: [...m.assignment].map(([name, partitions]) => ({
          topic_id: ctx.core.topics.get(name)!.id,
          topic_name: name,
          partitions,
        })),
      },
    })),
  };
}

export const share_group_describe_handler = kafka_handler(
  SHARE_GROUP_DESCRIBE,
  { min: 1, max: 1, notes: '' },
  (request, ctx) => ({
    throttle_time_ms: 0,
    groups: request.group_ids.map((group_id) => describe(ctx, group_id)),
  }),
);
