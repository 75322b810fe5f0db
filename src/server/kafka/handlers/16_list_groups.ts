// ListGroups 0-4: the consumer groups this broker coordinates, optionally by state. Clients ask
// every broker and merge; only the coordinator has groups to list.
import { LIST_GROUPS } from '../../../protocol/kafka/messages/16_list_groups.ts';
import { allowed } from '../authorize.ts';
import { kafka_handler } from '../handler.ts';
import { GROUP_STATE_NAMES } from './group_states.ts';

export const list_groups_handler = kafka_handler(
  LIST_GROUPS,
  { min: 0, max: 4, notes: 'state filter from v4' },
  (request, ctx) => {
    const filter = request.states_filter.map((s) => s.toLowerCase());
    if (!ctx.core.groups.is_coordinator) return { throttle_time_ms: 0, error_code: 0, groups: [] };
    const groups = ctx.core.groups
      .list()
      .filter((g) => allowed(ctx, 'describe', 'group', g.group_id))
      .map((g) => ({
        group_id: g.group_id,
        protocol_type: g.protocol_type,
        group_state: GROUP_STATE_NAMES[g.state],
        group_type: 'classic',
      }))
      .filter((g) => filter.length === 0 || filter.includes(g.group_state.toLowerCase()));
    return { throttle_time_ms: 0, error_code: 0, groups };
  },
);
