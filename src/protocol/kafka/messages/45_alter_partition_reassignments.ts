// AlterPartitionReassignments (key 45): moves partitions to new replica sets (null replicas cancel
// a reassignment in progress). Flexible from v0.
import { api_spec, array_of, field, struct_array } from '../schema.ts';

export const ALTER_PARTITION_REASSIGNMENTS = api_spec({
  api_key: 45,
  name: 'AlterPartitionReassignments',
  request: {
    name: 'AlterPartitionReassignmentsRequest',
    api_key: 45,
    type: 'request',
    valid_versions: '0',
    flexible_versions: '0+',
    fields: [
      field('timeout_ms', 'int32', '0+', { default: 60000 }),
      field(
        'topics',
        struct_array(
          field('name', 'string', '0+'),
          field(
            'partitions',
            struct_array(
              field('partition_index', 'int32', '0+'),
              field('replicas', array_of('int32'), '0+', { nullable_versions: '0+', default: null }),
            ),
            '0+',
          ),
        ),
        '0+',
      ),
    ],
  },
  response: {
    name: 'AlterPartitionReassignmentsResponse',
    api_key: 45,
    type: 'response',
    valid_versions: '0',
    flexible_versions: '0+',
    fields: [
      field('throttle_time_ms', 'int32', '0+'),
      field('error_code', 'int16', '0+'),
      field('error_message', 'string', '0+', { nullable_versions: '0+' }),
      field(
        'responses',
        struct_array(
          field('name', 'string', '0+'),
          field(
            'partitions',
            struct_array(
              field('partition_index', 'int32', '0+'),
              field('error_code', 'int16', '0+'),
              field('error_message', 'string', '0+', { nullable_versions: '0+' }),
            ),
            '0+',
          ),
        ),
        '0+',
      ),
    ],
  },
});
