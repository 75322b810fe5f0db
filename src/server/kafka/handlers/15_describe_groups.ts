// DescribeGroups 0-5: a consumer group's state, protocol and members with their metadata and
// assignments; NOT_COORDINATOR where this broker does not coordinate groups.
import { DESCRIBE_GROUPS } from '../../../protocol/kafka/messages/15_describe_groups.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import { NO_AUTHORIZED_OPERATIONS, kafka_handler } from '../handler.ts';
import { allowed, authorized_operations, REFUSED } from '../authorize.ts';
import { GROUP_STATE_NAMES } from './group_states.ts';

export const describe_groups_handler = kafka_handler(
  DESCRIBE_GROUPS,
  { min: 0, max: 5, notes: '' },
  (request, ctx) => ({
    throttle_time_ms: 0,
    groups: request.groups.map((group_id) => {
      if (!ctx.core.groups.is_coordinator) return unanswered(group_id, ErrorCode.NOT_COORDINATOR);
      if (!allowed(ctx, 'describe', 'group', group_id)) return unanswered(group_id, REFUSED.group);
      const summary = ctx.core.groups.describe(group_id);
      return {
        error_code: 0,
        error_message: null,
        group_id,
        group_state: GROUP_STATE_NAMES[summary.state],
        protocol_type: summary.protocol_type,
        protocol_data: summary.protocol_name,
        members: summary.members.map((m) => ({
          member_id: m.member_id,
          group_instance_id: m.group_instance_id,
          client_id: m.client_id,
          client_host: m.client_host,
          member_metadata: m.metadata,
          member_assignment: m.assignment,
        })),
        authorized_operations: request.include_authorized_operations
          ? authorized_operations(ctx, 'group', group_id)
          : NO_AUTHORIZED_OPERATIONS,
      };
    }),
  }),
);

/** A group answered with `error_code` only. */
function unanswered(group_id: string, error_code: number) {
  return {
    error_code,
    error_message: null,
    group_id,
    group_state: '',
    protocol_type: '',
    protocol_data: '',
    members: [],
    authorized_operations: NO_AUTHORIZED_OPERATIONS,
  };
}
