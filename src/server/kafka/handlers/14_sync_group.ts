// SyncGroup 0-5: the leader hands in the assignment; every member waits for its share of it.
import { SYNC_GROUP } from '../../../protocol/kafka/messages/14_sync_group.ts';
import { require_allowed } from '../authorize.ts';
import { kafka_handler } from '../handler.ts';
import { kafka_error_code } from '../error_map.ts';

export const sync_group_handler = kafka_handler(SYNC_GROUP, { min: 0, max: 5, notes: '' }, async (request, ctx) => {
  try {
    require_allowed(ctx, 'read', 'group', request.group_id);
    const assignments = request.assignments.map((a) => ({
      member_id: a.member_id,
      assignment: Buffer.from(a.assignment),
    }));
    const result = await ctx.core.groups.sync(
      request.group_id,
      request.member_id,
      request.generation_id,
      request.group_instance_id,
      assignments,
    );
    return { throttle_time_ms: 0, error_code: 0, ...result };
  } catch (error) {
    return {
      throttle_time_ms: 0,
      error_code: kafka_error_code(error),
      protocol_type: null,
      protocol_name: null,
      assignment: Buffer.alloc(0),
    };
  }
});
