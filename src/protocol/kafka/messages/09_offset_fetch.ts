// OffsetFetch (key 9): reads back a group's committed offsets; v8+ asks for several groups at once.
import { api_spec, array_of, field, struct_array } from '../schema.ts';

export const OFFSET_FETCH = api_spec({
  api_key: 9,
  name: 'OffsetFetch',
  request: {
    name: 'OffsetFetchRequest',
    api_key: 9,
    type: 'request',
    valid_versions: '0-9',
    flexible_versions: '6+',
    fields: [
      field('group_id', 'string', '0-7'),
      field(
        'topics',
        struct_array(field('name', 'string', '0-7'), field('partition_indexes', array_of('int32'), '0-7')),
        '0-7',
        { nullable_versions: '2-7' },
      ),
      field(
        'groups',
        struct_array(
          field('group_id', 'string', '8+'),
          field('member_id', 'string', '9+', { nullable_versions: '9+', default: null }),
          field('member_epoch', 'int32', '9+', { default: -1 }),
          field(
            'topics',
            struct_array(field('name', 'string', '8+'), field('partition_indexes', array_of('int32'), '8+')),
            '8+',
            { nullable_versions: '8+' },
          ),
        ),
        '8+',
      ),
      field('require_stable', 'bool', '7+'),
    ],
  },
  response: {
    name: 'OffsetFetchResponse',
    api_key: 9,
    type: 'response',
    valid_versions: '0-9',
    flexible_versions: '6+',
    fields: [
      field('throttle_time_ms', 'int32', '3+'),
      field(
        'topics',
        struct_array(
          field('name', 'string', '0-7'),
          field(
            'partitions',
            struct_array(
              field('partition_index', 'int32', '0-7'),
              field('committed_offset', 'int64', '0-7'),
              field('committed_leader_epoch', 'int32', '5-7', { default: -1 }),
              field('metadata', 'string', '0-7', { nullable_versions: '0-7' }),
              field('error_code', 'int16', '0-7'),
            ),
            '0-7',
          ),
        ),
        '0-7',
      ),
      field('error_code', 'int16', '2-7'),
      field(
        'groups',
        struct_array(
          field('group_id', 'string', '8+'),
          field(
            'topics',
            struct_array(
              field('name', 'string', '8+'),
              field(
                'partitions',
                struct_array(
                  field('partition_index', 'int32', '8+'),
                  field('committed_offset', 'int64', '8+'),
                  field('committed_leader_epoch', 'int32', '8+', { default: -1 }),
                  field('metadata', 'string', '8+', { nullable_versions: '8+' }),
                  field('error_code', 'int16', '8+'),
                ),
                '8+',
              ),
            ),
            '8+',
          ),
          field('error_code', 'int16', '8+'),
        ),
        '8+',
      ),
    ],
  },
});
