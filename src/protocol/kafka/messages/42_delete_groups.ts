// DeleteGroups (key 42): removes empty groups and their committed offsets, with a result per group.
import { api_spec, array_of, field, struct_array } from '../schema.ts';

export const DELETE_GROUPS = api_spec({
  api_key: 42,
  name: 'DeleteGroups',
  request: {
    name: 'DeleteGroupsRequest',
    api_key: 42,
    type: 'request',
    valid_versions: '0-2',
    flexible_versions: '2+',
    fields: [field('groups_names', array_of('string'), '0+')],
  },
  response: {
    name: 'DeleteGroupsResponse',
    api_key: 42,
    type: 'response',
    valid_versions: '0-2',
    flexible_versions: '2+',
    fields: [
      field('throttle_time_ms', 'int32', '0+'),
      field('results', struct_array(field('group_id', 'string', '0+'), field('error_code', 'int16', '0+')), '0+'),
    ],
  },
});
