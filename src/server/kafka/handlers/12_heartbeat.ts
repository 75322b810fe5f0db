// Heartbeat 0-4: a member says it is alive; the answer tells it when a rebalance needs it to re-join.
import { HEARTBEAT } from '../../../protocol/kafka/messages/12_heartbeat.ts';
import { require_allowed } from '../authorize.ts';
import { kafka_handler } from '../handler.ts';
import { kafka_error_code } from '../error_map.ts';

export const heartbeat_handler = kafka_handler(HEARTBEAT, { min: 0, max: 4, notes: '' }, (request, ctx) => {
  try {
    require_allowed(ctx, 'read', 'group', request.group_id);
    ctx.core.groups.heartbeat(request.group_id, request.member_id, request.generation_id, request.group_instance_id);
    return { throttle_time_ms: 0, error_code: 0 };
  } catch (error) {
    return { throttle_time_ms: 0, error_code: kafka_error_code(error) };
  }
});
