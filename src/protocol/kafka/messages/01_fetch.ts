// Fetch (key 1): consumers and followers read record batches from partitions, optionally within an
// incremental fetch session. Flexible from v12; v13 names topics by id instead of by name.
import { api_spec, array_of, field, struct, struct_array } from '../schema.ts';

/** Long.MAX_VALUE; as a JS number it rounds to 2^63, which is also what the codec decodes it to. */
const INT64_MAX = 9223372036854775807;

export const FETCH = api_spec({
  api_key: 1,
  name: 'Fetch',
  request: {
    name: 'FetchRequest',
    api_key: 1,
    type: 'request',
    valid_versions: '0-18',
    flexible_versions: '12+',
    fields: [
      field('cluster_id', 'string', '12+', { nullable_versions: '12+', default: null, tag: 0 }),
      field('replica_id', 'int32', '0-14', { default: -1 }),
      field(
        'replica_state',
        struct(
          field('replica_id', 'int32', '15+', { default: -1 }),
          field('replica_epoch', 'int64', '15+', { default: -1 }),
        ),
        '15+',
        { tag: 1 },
      ),
      field('max_wait_ms', 'int32', '0+'),
      field('min_bytes', 'int32', '0+'),
      field('max_bytes', 'int32', '3+', { default: 0x7fffffff }),
      field('isolation_level', 'int8', '4+'),
      field('session_id', 'int32', '7+'),
      field('session_epoch', 'int32', '7+', { default: -1 }),
      field(
        'topics',
        struct_array(
          field('topic', 'string', '0-12'),
          field('topic_id', 'uuid', '13+'),
          field(
            'partitions',
            struct_array(
              field('partition', 'int32', '0+'),
              field('current_leader_epoch', 'int32', '9+', { default: -1 }),
              field('fetch_offset', 'int64', '0+'),
              field('last_fetched_epoch', 'int32', '12+', { default: -1 }),
              field('log_start_offset', 'int64', '5+', { default: -1 }),
              field('partition_max_bytes', 'int32', '0+'),
              field('replica_directory_id', 'uuid', '17+', { tag: 0 }),
              field('high_watermark', 'int64', '18+', { tag: 1, default: INT64_MAX }),
            ),
            '0+',
          ),
        ),
        '0+',
      ),
      field(
        'forgotten_topics_data',
        struct_array(
          field('topic', 'string', '7-12'),
          field('topic_id', 'uuid', '13+'),
          field('partitions', array_of('int32'), '7+'),
        ),
        '7+',
      ),
      field('rack_id', 'string', '11+'),
    ],
  },
  response: {
    name: 'FetchResponse',
    api_key: 1,
    type: 'response',
    valid_versions: '0-18',
    flexible_versions: '12+',
    fields: [
      field('throttle_time_ms', 'int32', '1+'),
      field('error_code', 'int16', '7+'),
      field('session_id', 'int32', '7+'),
      field(
        'responses',
        struct_array(
          field('topic', 'string', '0-12'),
          field('topic_id', 'uuid', '13+'),
          field(
            'partitions',
            struct_array(
              field('partition_index', 'int32', '0+'),
              field('error_code', 'int16', '0+'),
              field('high_watermark', 'int64', '0+'),
              field('last_stable_offset', 'int64', '4+', { default: -1 }),
              field('log_start_offset', 'int64', '5+', { default: -1 }),
              field(
                'diverging_epoch',
                struct(
                  field('epoch', 'int32', '12+', { default: -1 }),
                  field('end_offset', 'int64', '12+', { default: -1 }),
                ),
                '12+',
                { tag: 0 },
              ),
              field(
                'current_leader',
                struct(
                  field('leader_id', 'int32', '12+', { default: -1 }),
                  field('leader_epoch', 'int32', '12+', { default: -1 }),
                ),
                '12+',
                { tag: 1 },
              ),
              field(
                'snapshot_id',
                struct(
                  field('end_offset', 'int64', '0+', { default: -1 }),
                  field('epoch', 'int32', '0+', { default: -1 }),
                ),
                '12+',
                { tag: 2 },
              ),
              field(
                'aborted_transactions',
                struct_array(field('producer_id', 'int64', '4+'), field('first_offset', 'int64', '4+')),
                '4+',
                { nullable_versions: '4+' },
              ),
              field('preferred_read_replica', 'int32', '11+', { default: -1 }),
              field('records', 'records', '0+', { nullable_versions: '0+' }),
            ),
            '0+',
          ),
        ),
        '0+',
      ),
      field(
        'node_endpoints',
        struct_array(
          field('node_id', 'int32', '16+'),
          field('host', 'string', '16+'),
          field('port', 'int32', '16+'),
          field('rack', 'string', '16+', { nullable_versions: '16+', default: null }),
        ),
        '16+',
        { tag: 0 },
      ),
    ],
  },
});
