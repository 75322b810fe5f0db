// SyncGroup (key 14): after a join, the leader hands in every member's assignment and each member
// receives its own.
import { api_spec, field, struct_array } from '../schema.ts';

export const SYNC_GROUP = api_spec({
  api_key: 14,
  name: 'SyncGroup',
  request: {
    name: 'SyncGroupRequest',
    api_key: 14,
    type: 'request',
    valid_versions: '0-5',
    flexible_versions: '4+',
    fields: [
      field('group_id', 'string', '0+'),
      field('generation_id', 'int32', '0+'),
      field('member_id', 'string', '0+'),
      field('group_instance_id', 'string', '3+', { nullable_versions: '3+', default: null }),
      field('protocol_type', 'string', '5+', { nullable_versions: '5+', default: null }),
      field('protocol_name', 'string', '5+', { nullable_versions: '5+', default: null }),
      field('assignments', struct_array(field('member_id', 'string', '0+'), field('assignment', 'bytes', '0+')), '0+'),
    ],
  },
  response: {
    name: 'SyncGroupResponse',
    api_key: 14,
    type: 'response',
    valid_versions: '0-5',
    flexible_versions: '4+',
    fields: [
      field('throttle_time_ms', 'int32', '1+'),
      field('error_code', 'int16', '0+'),
      field('protocol_type', 'string', '5+', { nullable_versions: '5+', default: null }),
      field('protocol_name', 'string', '5+', { nullable_versions: '5+', default: null }),
      field('assignment', 'bytes', '0+'),
    ],
  },
});
