// Produce (key 0): a client appends record batches to partitions and learns the offsets they got.
// Flexible from v9; v13 names topics by id instead of by name.
import { api_spec, field, struct, struct_array } from '../schema.ts';

export const PRODUCE = api_spec({
  api_key: 0,
  name: 'Produce',
  request: {
    name: 'ProduceRequest',
    api_key: 0,
    type: 'request',
    valid_versions: '0-13',
    flexible_versions: '9+',
    fields: [
      field('transactional_id', 'string', '3+', { nullable_versions: '3+', default: null }),
      field('acks', 'int16', '0+'),
      field('timeout_ms', 'int32', '0+'),
      field(
        'topic_data',
        struct_array(
          field('name', 'string', '0-12'),
          field('topic_id', 'uuid', '13+'),
          field(
            'partition_data',
            struct_array(field('index', 'int32', '0+'), field('records', 'records', '0+', { nullable_versions: '0+' })),
            '0+',
          ),
        ),
        '0+',
      ),
      // Sluice's own: a batch a broker forwards for itself (due delayed records, dead letters), whose
      // delay headers have been served already.
      field('sluice_broker_append', 'bool', '9+', { default: false, tag: 7000 }),
    ],
  },
  response: {
    name: 'ProduceResponse',
    api_key: 0,
    type: 'response',
    valid_versions: '0-13',
    flexible_versions: '9+',
    fields: [
      field(
        'responses',
        struct_array(
          field('name', 'string', '0-12'),
          field('topic_id', 'uuid', '13+'),
          field(
            'partition_responses',
            struct_array(
              field('index', 'int32', '0+'),
              field('error_code', 'int16', '0+'),
              field('base_offset', 'int64', '0+'),
              field('log_append_time_ms', 'int64', '2+', { default: -1 }),
              field('log_start_offset', 'int64', '5+', { default: -1 }),
              field(
                'record_errors',
                struct_array(
                  field('batch_index', 'int32', '8+'),
                  field('batch_index_error_message', 'string', '8+', { nullable_versions: '8+', default: null }),
                ),
                '8+',
              ),
              field('error_message', 'string', '8+', { nullable_versions: '8+', default: null }),
              field(
                'current_leader',
                struct(
                  field('leader_id', 'int32', '10+', { default: -1 }),
                  field('leader_epoch', 'int32', '10+', { default: -1 }),
                ),
                '10+',
                { tag: 0 },
              ),
            ),
            '0+',
          ),
        ),
        '0+',
      ),
      field('throttle_time_ms', 'int32', '1+'),
      field(
        'node_endpoints',
        struct_array(
          field('node_id', 'int32', '10+'),
          field('host', 'string', '10+'),
          field('port', 'int32', '10+'),
          field('rack', 'string', '10+', { nullable_versions: '10+', default: null }),
        ),
        '10+',
        { tag: 0 },
      ),
    ],
  },
});
