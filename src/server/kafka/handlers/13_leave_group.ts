// LeaveGroup 0-4: members leave a consumer group (one before v3, a batch with group instance ids
// from v3), each answered with its own error.
import { LEAVE_GROUP } from '../../../protocol/kafka/messages/13_leave_group.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import { allowed, REFUSED } from '../authorize.ts';
import { kafka_handler } from '../handler.ts';
import { kafka_error_code } from '../error_map.ts';

export const leave_group_handler = kafka_handler(
  LEAVE_GROUP,
  { min: 0, max: 4, notes: 'batched members from v3' },
  (request, ctx) => {
    const { group_id } = request;
    if (!ctx.core.groups.is_coordinator)
      return { throttle_time_ms: 0, error_code: ErrorCode.NOT_COORDINATOR, members: [] };
    if (!allowed(ctx, 'read', 'group', group_id))
      return { throttle_time_ms: 0, error_code: REFUSED.group, members: [] };
    if (ctx.version < 3) {
      const [error] = ctx.core.groups.leave(group_id, [{ member_id: request.member_id, group_instance_id: null }]);
      return { throttle_time_ms: 0, error_code: error ? kafka_error_code(error) : 0 };
    }
    const leavers = request.members.map((m) => ({ member_id: m.member_id, group_instance_id: m.group_instance_id }));
    const errors = ctx.core.groups.leave(group_id, leavers);
    return {
      throttle_time_ms: 0,
      error_code: 0,
      members: leavers.map((m, i) => ({ ...m, error_code: errors[i] ? kafka_error_code(errors[i]) : 0 })),
    };
  },
);
