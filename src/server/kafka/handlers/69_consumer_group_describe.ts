// ConsumerGroupDescribe 0 (KIP-848): a consumer group's state, epochs, assignor and members, each
// with its subscription, current assignment and target assignment. A group id with committed
// offsets and no members is Empty; one without either is GROUP_ID_NOT_FOUND.
import { CONSUMER_GROUP_DESCRIBE } from '../../../protocol/kafka/messages/69_consumer_group_describe.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import { kafka_handler, type RequestContext } from '../handler.ts';
import { allowed, refusal } from '../authorize.ts';

const STATES = { empty: 'Empty', assigning: 'Assigning', reconciling: 'Reconciling', stable: 'Stable' } as const;

function topic_partitions(ctx: RequestContext, assignment: ReadonlyMap<string, number[]>) {
  return {
    topic_partitions: [...assignment]
      .filter(([name]) => ctx.core.topics.get(name) !== undefined)
      .map(([name, partitions]) => ({ topic_id: ctx.core.topics.get(name)!.id, topic_name: name, partitions })),
  };
}

function describe(ctx: RequestContext, group_id: string) {
  const base = {
    error_code: 0,
    error_message: null,
    group_id,
    group_state: 'Dead',
    group_epoch: -1,
    assignment_epoch: -1,
    assignor_name: '',
    members: [],
  };
  if (!allowed(ctx, 'describe', 'group', group_id)) return { ...base, ...refusal(ctx, 'describe', 'group', group_id) };
  if (!ctx.core.groups.is_coordinator)
    return {
      ...base,
      error_code: ErrorCode.NOT_COORDINATOR,
      error_message: `broker ${ctx.core.node_id} is not the group coordinator`,
    };
  const group = ctx.core.groups.consumer_describe(group_id);
  if (!group) {
    const classic = ctx.core.groups.describe(group_id);
    if (classic.members.length > 0 || classic.state === 'dead')
      return {
        ...base,
        error_code: ErrorCode.GROUP_ID_NOT_FOUND,
        error_message:
          classic.state === 'dead' ? `group ${group_id} does not exist` : `group ${group_id} is a classic group`,
      };
    return { ...base, group_state: 'Empty', group_epoch: 0, assignment_epoch: 0 };
  }
  return {
    ...base,
    group_state: STATES[group.state],
    group_epoch: group.epoch,
    assignment_epoch: group.assignment_epoch,
    assignor_name: group.assignor,
    members: group.members.map((m) => ({
      member_id: m.member_id,
      instance_id: m.instance_id,
      rack_id: m.rack_id,
      member_epoch: m.member_epoch,
      client_id: m.client_id,
      client_host: m.client_host,
      subscribed_topic_names: m.topics,
      subscribed_topic_regex: m.regex,
      assignment: topic_partitions(ctx, m.assignment),
      target_assignment: topic_partitions(ctx, m.target),
    })),
  };
}

export const consumer_group_describe_handler = kafka_handler(
  CONSUMER_GROUP_DESCRIBE,
  { min: 0, max: 0, notes: 'a group id with committed offsets and no members is Empty' },
  (request, ctx) => ({
    throttle_time_ms: 0,
    groups: request.group_ids.map((group_id) => describe(ctx, group_id)),
  }),
);
