// ListGroups 0-5: the consumer groups this broker coordinates, optionally by state (v4) and by
// type (v5: classic, or consumer for KIP-848 groups). Clients ask every broker and merge; only the
// coordinator has groups to list.
import { LIST_GROUPS } from '../../../protocol/kafka/messages/16_list_groups.ts';
import { allowed } from '../authorize.ts';
import { kafka_handler } from '../handler.ts';
import { CONSUMER_GROUP_STATE_NAMES, GROUP_STATE_NAMES } from './group_states.ts';

export const list_groups_handler = kafka_handler(
  LIST_GROUPS,
  { min: 0, max: 5, notes: 'state filter from v4, type filter (classic, consumer) from v5' },
  (request, ctx) => {
    const filter = request.states_filter.map((s) => s.toLowerCase());
    const types = request.types_filter.map((t) => t.toLowerCase());
    if (!ctx.core.groups.is_coordinator) return { throttle_time_ms: 0, error_code: 0, groups: [] };
    const groups = ctx.core.groups
      .list()
      .filter((g) => allowed(ctx, 'describe', 'group', g.group_id))
      .map((g) => ({
        group_id: g.group_id,
        protocol_type: g.protocol_type,
        group_state: (g.type === 'consumer' ? CONSUMER_GROUP_STATE_NAMES : GROUP_STATE_NAMES)[g.state],
        group_type: g.type,
      }))
      .filter((g) => filter.length === 0 || filter.includes(g.group_state.toLowerCase()))
      .filter((g) => types.length === 0 || types.includes(g.group_type));
    return { throttle_time_ms: 0, error_code: 0, groups };
  },
);
