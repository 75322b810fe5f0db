// ListOffsets (key 2): finds the offset for a timestamp (or earliest / latest / other special
// positions) in each requested partition. Flexible from v6; v0 returned a list of offsets instead.
import { api_spec, array_of, field, struct_array } from '../schema.ts';

export const LIST_OFFSETS = api_spec({
  api_key: 2,
  name: 'ListOffsets',
  request: {
    name: 'ListOffsetsRequest',
    api_key: 2,
    type: 'request',
    valid_versions: '0-10',
    flexible_versions: '6+',
    fields: [
      field('replica_id', 'int32', '0+'),
      field('isolation_level', 'int8', '2+'),
      field(
        'topics',
        struct_array(
          field('name', 'string', '0+'),
          field(
            'partitions',
            struct_array(
              field('partition_index', 'int32', '0+'),
              field('current_leader_epoch', 'int32', '4+', { default: -1 }),
              field('timestamp', 'int64', '0+'),
              field('max_num_offsets', 'int32', '0', { default: 1 }),
            ),
            '0+',
          ),
        ),
        '0+',
      ),
      field('timeout_ms', 'int32', '10+'),
    ],
  },
  response: {
    name: 'ListOffsetsResponse',
    api_key: 2,
    type: 'response',
    valid_versions: '0-10',
    flexible_versions: '6+',
    fields: [
      field('throttle_time_ms', 'int32', '2+'),
      field(
        'topics',
        struct_array(
          field('name', 'string', '0+'),
          field(
            'partitions',
            struct_array(
              field('partition_index', 'int32', '0+'),
              field('error_code', 'int16', '0+'),
              field('old_style_offsets', array_of('int64'), '0'),
              field('timestamp', 'int64', '1+', { default: -1 }),
              field('offset', 'int64', '1+', { default: -1 }),
              field('leader_epoch', 'int32', '4+', { default: -1 }),
            ),
            '0+',
          ),
        ),
        '0+',
      ),
    ],
  },
});
