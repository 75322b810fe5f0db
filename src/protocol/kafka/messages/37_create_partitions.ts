// CreatePartitions (key 37): raises the partition count of existing topics, optionally with the
// replica assignment of each new partition.
import { api_spec, array_of, field, struct_array } from '../schema.ts';

export const CREATE_PARTITIONS = api_spec({
  api_key: 37,
  name: 'CreatePartitions',
  request: {
    name: 'CreatePartitionsRequest',
    api_key: 37,
    type: 'request',
    valid_versions: '0-3',
    flexible_versions: '2+',
    fields: [
      field(
        'topics',
        struct_array(
          field('name', 'string', '0+'),
          field('count', 'int32', '0+'),
          field('assignments', struct_array(field('broker_ids', array_of('int32'), '0+')), '0+', {
            nullable_versions: '0+',
          }),
        ),
        '0+',
      ),
      field('timeout_ms', 'int32', '0+'),
      field('validate_only', 'bool', '0+'),
    ],
  },
  response: {
    name: 'CreatePartitionsResponse',
    api_key: 37,
    type: 'response',
    valid_versions: '0-3',
    flexible_versions: '2+',
    fields: [
      field('throttle_time_ms', 'int32', '0+'),
      field(
        'results',
        struct_array(
          field('name', 'string', '0+'),
          field('error_code', 'int16', '0+'),
          field('error_message', 'string', '0+', { nullable_versions: '0+', default: null }),
        ),
        '0+',
      ),
    ],
  },
});
