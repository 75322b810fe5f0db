// ListGroups (key 16): the groups a coordinator knows, optionally filtered by state (v4+) and
// type (v5+).
import { api_spec, array_of, field, struct_array } from '../schema.ts';

export const LIST_GROUPS = api_spec({
  api_key: 16,
  name: 'ListGroups',
  request: {
    name: 'ListGroupsRequest',
    api_key: 16,
    type: 'request',
    valid_versions: '0-5',
    flexible_versions: '3+',
    fields: [field('states_filter', array_of('string'), '4+'), field('types_filter', array_of('string'), '5+')],
  },
  response: {
    name: 'ListGroupsResponse',
    api_key: 16,
    type: 'response',
    valid_versions: '0-5',
    flexible_versions: '3+',
    fields: [
      field('throttle_time_ms', 'int32', '1+'),
      field('error_code', 'int16', '0+'),
      field(
        'groups',
        struct_array(
          field('group_id', 'string', '0+'),
          field('protocol_type', 'string', '0+'),
          field('group_state', 'string', '4+'),
          field('group_type', 'string', '5+'),
        ),
        '0+',
      ),
    ],
  },
});
