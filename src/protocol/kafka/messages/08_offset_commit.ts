// OffsetCommit (key 8): a group member stores the offsets it has consumed, per topic partition.
import { api_spec, field, struct_array } from '../schema.ts';

export const OFFSET_COMMIT = api_spec({
  api_key: 8,
  name: 'OffsetCommit',
  request: {
    name: 'OffsetCommitRequest',
    api_key: 8,
    type: 'request',
    valid_versions: '0-9',
    flexible_versions: '8+',
    fields: [
      field('group_id', 'string', '0+'),
      field('generation_id_or_member_epoch', 'int32', '1+', { default: -1 }),
      field('member_id', 'string', '1+'),
      field('group_instance_id', 'string', '7+', { nullable_versions: '7+', default: null }),
      field('retention_time_ms', 'int64', '2-4', { default: -1 }),
      field(
        'topics',
        struct_array(
          field('name', 'string', '0+'),
          field(
            'partitions',
            struct_array(
              field('partition_index', 'int32', '0+'),
              field('committed_offset', 'int64', '0+'),
              field('committed_leader_epoch', 'int32', '6+', { default: -1 }),
              field('commit_timestamp', 'int64', '1', { default: -1 }),
              field('committed_metadata', 'string', '0+', { nullable_versions: '0+' }),
            ),
            '0+',
          ),
        ),
        '0+',
      ),
    ],
  },
  response: {
    name: 'OffsetCommitResponse',
    api_key: 8,
    type: 'response',
    valid_versions: '0-9',
    flexible_versions: '8+',
    fields: [
      field('throttle_time_ms', 'int32', '3+'),
      field(
        'topics',
        struct_array(
          field('name', 'string', '0+'),
          field(
            'partitions',
            struct_array(field('partition_index', 'int32', '0+'), field('error_code', 'int16', '0+')),
            '0+',
          ),
        ),
        '0+',
      ),
    ],
  },
});
