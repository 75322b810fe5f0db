// DescribeGroups (key 15): state, protocol and members (with their metadata and assignments) of
// classic groups.
import { api_spec, array_of, field, struct_array } from '../schema.ts';

export const DESCRIBE_GROUPS = api_spec({
  api_key: 15,
  name: 'DescribeGroups',
  request: {
    name: 'DescribeGroupsRequest',
    api_key: 15,
    type: 'request',
    valid_versions: '0-6',
    flexible_versions: '5+',
    fields: [field('groups', array_of('string'), '0+'), field('include_authorized_operations', 'bool', '3+')],
  },
  response: {
    name: 'DescribeGroupsResponse',
    api_key: 15,
    type: 'response',
    valid_versions: '0-6',
    flexible_versions: '5+',
    fields: [
      field('throttle_time_ms', 'int32', '1+'),
      field(
        'groups',
        struct_array(
          field('error_code', 'int16', '0+'),
          field('error_message', 'string', '6+', { nullable_versions: '6+', default: null }),
          field('group_id', 'string', '0+'),
          field('group_state', 'string', '0+'),
          field('protocol_type', 'string', '0+'),
          field('protocol_data', 'string', '0+'),
          field(
            'members',
            struct_array(
              field('member_id', 'string', '0+'),
              field('group_instance_id', 'string', '4+', { nullable_versions: '4+', default: null }),
              field('client_id', 'string', '0+'),
              field('client_host', 'string', '0+'),
              field('member_metadata', 'bytes', '0+'),
              field('member_assignment', 'bytes', '0+'),
            ),
            '0+',
          ),
          field('authorized_operations', 'int32', '3+', { default: -2147483648 }),
        ),
        '0+',
      ),
    ],
  },
});
