// DeleteGroups 0-2: deletes empty consumer groups and their committed offsets.
import { DELETE_GROUPS } from '../../../protocol/kafka/messages/42_delete_groups.ts';
import { audit, require_allowed } from '../authorize.ts';
import { kafka_handler } from '../handler.ts';
import { kafka_error_code } from '../error_map.ts';

export const delete_groups_handler = kafka_handler(
  DELETE_GROUPS,
  { min: 0, max: 2, notes: '' },
  async (request, ctx) => {
    const results = [];
    for (const group_id of request.groups_names) {
      try {
        require_allowed(ctx, 'delete', 'group', group_id);
        await ctx.core.groups.delete(group_id);
        audit(ctx, 'delete group', { group: group_id });
        results.push({ group_id, error_code: 0 });
      } catch (error) {
        results.push({ group_id, error_code: kafka_error_code(error) });
      }
    }
    return { throttle_time_ms: 0, results };
  },
);
