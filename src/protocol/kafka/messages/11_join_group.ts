// JoinGroup (key 11): a member joins a classic group, offering the protocols it supports; the
// answer names the generation, the chosen protocol, the leader and (for the leader) all members.
import { api_spec, field, struct_array } from '../schema.ts';

export const JOIN_GROUP = api_spec({
  api_key: 11,
  name: 'JoinGroup',
  request: {
    name: 'JoinGroupRequest',
    api_key: 11,
    type: 'request',
    valid_versions: '0-9',
    flexible_versions: '6+',
    fields: [
      field('group_id', 'string', '0+'),
      field('session_timeout_ms', 'int32', '0+'),
      field('rebalance_timeout_ms', 'int32', '1+', { default: -1 }),
      field('member_id', 'string', '0+'),
      field('group_instance_id', 'string', '5+', { nullable_versions: '5+', default: null }),
      field('protocol_type', 'string', '0+'),
      field('protocols', struct_array(field('name', 'string', '0+'), field('metadata', 'bytes', '0+')), '0+'),
      field('reason', 'string', '8+', { nullable_versions: '8+', default: null }),
    ],
  },
  response: {
    name: 'JoinGroupResponse',
    api_key: 11,
    type: 'response',
    valid_versions: '0-9',
    flexible_versions: '6+',
    fields: [
      field('throttle_time_ms', 'int32', '2+'),
      field('error_code', 'int16', '0+'),
      field('generation_id', 'int32', '0+', { default: -1 }),
      field('protocol_type', 'string', '7+', { nullable_versions: '7+', default: null }),
      field('protocol_name', 'string', '0+', { nullable_versions: '7+' }),
      field('leader', 'string', '0+'),
      field('skip_assignment', 'bool', '9+'),
      field('member_id', 'string', '0+'),
      field(
        'members',
        struct_array(
          field('member_id', 'string', '0+'),
          field('group_instance_id', 'string', '5+', { nullable_versions: '5+', default: null }),
          field('metadata', 'bytes', '0+'),
        ),
        '0+',
      ),
    ],
  },
});
