// LeaveGroup (key 13): one member (v0-2) or a batch of members (v3+) leave a classic group.
import { api_spec, field, struct_array } from '../schema.ts';

export const LEAVE_GROUP = api_spec({
  api_key: 13,
  name: 'LeaveGroup',
  request: {
    name: 'LeaveGroupRequest',
    api_key: 13,
    type: 'request',
    valid_versions: '0-5',
    flexible_versions: '4+',
    fields: [
      field('group_id', 'string', '0+'),
      field('member_id', 'string', '0-2'),
      field(
        'members',
        struct_array(
          field('member_id', 'string', '3+'),
          field('group_instance_id', 'string', '3+', { nullable_versions: '3+', default: null }),
          field('reason', 'string', '5+', { nullable_versions: '5+', default: null }),
        ),
        '3+',
      ),
    ],
  },
  response: {
    name: 'LeaveGroupResponse',
    api_key: 13,
    type: 'response',
    valid_versions: '0-5',
    flexible_versions: '4+',
    fields: [
      field('throttle_time_ms', 'int32', '1+'),
      field('error_code', 'int16', '0+'),
      field(
        'members',
        struct_array(
          field('member_id', 'string', '3+'),
          field('group_instance_id', 'string', '3+', { nullable_versions: '3+' }),
          field('error_code', 'int16', '3+'),
        ),
        '3+',
      ),
    ],
  },
});
