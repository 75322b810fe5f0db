// ListPartitionReassignments (key 46): the reassignments in progress, for the partitions asked
// about or (null topics) for all. Flexible from v0.
import { api_spec, array_of, field, struct_array } from '../schema.ts';

export const LIST_PARTITION_REASSIGNMENTS = api_spec({
  api_key: 46,
  name: 'ListPartitionReassignments',
  request: {
    name: 'ListPartitionReassignmentsRequest',
    api_key: 46,
    type: 'request',
    valid_versions: '0',
    flexible_versions: '0+',
    fields: [
      field('timeout_ms', 'int32', '0+', { default: 60000 }),
      field(
        'topics',
        struct_array(field('name', 'string', '0+'), field('partition_indexes', array_of('int32'), '0+')),
        '0+',
        { nullable_versions: '0+', default: null },
      ),
    ],
  },
  response: {
    name: 'ListPartitionReassignmentsResponse',
    api_key: 46,
    type: 'response',
    valid_versions: '0',
    flexible_versions: '0+',
    fields: [
      field('throttle_time_ms', 'int32', '0+'),
      field('error_code', 'int16', '0+'),
      field('error_message', 'string', '0+', { nullable_versions: '0+' }),
      field(
        'topics',
        struct_array(
          field('name', 'string', '0+'),
          field(
            'partitions',
            struct_array(
              field('partition_index', 'int32', '0+'),
              field('replicas', array_of('int32'), '0+'),
              field('adding_replicas', array_of('int32'), '0+'),
              field('removing_replicas', array_of('int32'), '0+'),
            ),
            '0+',
          ),
        ),
        '0+',
      ),
    ],
  },
});
