// DescribeProducers (key 61): the producers with state on each partition named, as its leader
// keeps it: epoch, last sequence, and where the producer's open transaction starts. Flexible.
import { api_spec, array_of, field, struct_array } from '../schema.ts';

export const DESCRIBE_PRODUCERS = api_spec({
  api_key: 61,
  name: 'DescribeProducers',
  request: {
    name: 'DescribeProducersRequest',
    api_key: 61,
    type: 'request',
    valid_versions: '0',
    flexible_versions: '0+',
    fields: [
      field(
        'topics',
        struct_array(field('name', 'string', '0+'), field('partition_indexes', array_of('int32'), '0+')),
        '0+',
      ),
    ],
  },
  response: {
    name: 'DescribeProducersResponse',
    api_key: 61,
    type: 'response',
    valid_versions: '0',
    flexible_versions: '0+',
    fields: [
      field('throttle_time_ms', 'int32', '0+'),
      field(
        'topics',
        struct_array(
          field('name', 'string', '0+'),
          field(
            'partitions',
            struct_array(
              field('partition_index', 'int32', '0+'),
              field('error_code', 'int16', '0+'),
              field('error_message', 'string', '0+', { nullable_versions: '0+', default: null }),
              field(
                'active_producers',
                struct_array(
                  field('producer_id', 'int64', '0+'),
                  field('producer_epoch', 'int32', '0+'),
                  field('last_sequence', 'int32', '0+', { default: -1 }),
                  field('last_timestamp', 'int64', '0+', { default: -1 }),
                  field('coordinator_epoch', 'int32', '0+'),
                  field('current_txn_start_offset', 'int64', '0+', { default: -1 }),
                ),
                '0+',
              ),
            ),
            '0+',
          ),
        ),
        '0+',
      ),
    ],
  },
});
