// OffsetDelete (key 47): removes a group's committed offsets of the partitions named; one error
// code per partition (GROUP_SUBSCRIBED_TO_TOPIC while a member consumes the topic). Not flexible.
import { api_spec, field, struct_array } from '../schema.ts';

export const OFFSET_DELETE = api_spec({
  api_key: 47,
  name: 'OffsetDelete',
  request: {
    name: 'OffsetDeleteRequest',
    api_key: 47,
    type: 'request',
    valid_versions: '0',
    flexible_versions: 'none',
    fields: [
      field('group_id', 'string', '0+'),
      field(
        'topics',
        struct_array(
          field('name', 'string', '0+'),
          field('partitions', struct_array(field('partition_index', 'int32', '0+')), '0+'),
        ),
        '0+',
      ),
    ],
  },
  response: {
    name: 'OffsetDeleteResponse',
    api_key: 47,
    type: 'response',
    valid_versions: '0',
    flexible_versions: 'none',
    fields: [
      field('error_code', 'int16', '0+'),
      field('throttle_time_ms', 'int32', '0+'),
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
