// ShareFetch (key 78): share consumers (KIP-932) acquire records within a share session, piggybacking
// acknowledgements. Flexible in every version; v2 adds the acquire mode and renew acknowledgements.
import { api_spec, array_of, field, struct, struct_array } from '../schema.ts';

/**
 * The topics of a ShareFetch request, whose partitions carry acknowledgement batches: the same
 * shape as ShareAcknowledge's topics (79_share_acknowledge.ts uses it too).
 */
export const SHARE_ACKNOWLEDGEMENT_TOPICS = field(
  'topics',
  struct_array(
    field('topic_id', 'uuid', '0+'),
    field(
      'partitions',
      struct_array(
        field('partition_index', 'int32', '0+'),
        // Kafka's ShareFetch definition also has PartitionMaxBytes, but only in the removed version 0.
        field(
          'acknowledgement_batches',
          struct_array(
            field('first_offset', 'int64', '0+'),
            // inclusive
            field('last_offset', 'int64', '0+'),
            // One per offset, or one for the whole range: 0 gap, 1 accept, 2 release, 3 reject, 4 renew (v2).
            field('acknowledge_types', array_of('int8'), '0+'),
            // Sluice's extension, as tagged fields that Kafka brokers skip: why a consumer
            // released or rejected the records (kept in dead letters), and how long a release
            // should wait before the records are offered again (-1: the group's backoff).
            field('sluice_failure_reason', 'string', '0+', { nullable_versions: '0+', default: null, tag: 7000 }),
            field('sluice_release_delay_ms', 'int32', '0+', { default: -1, tag: 7001 }),
          ),
          '0+',
        ),
      ),
      '0+',
    ),
  ),
  '0+',
);

/** The leader a partition error points to (ShareFetch and ShareAcknowledge responses). */
export const SHARE_CURRENT_LEADER = field(
  'current_leader',
  struct(field('leader_id', 'int32', '0+'), field('leader_epoch', 'int32', '0+')),
  '0+',
);

/** The brokers named as leaders in a response (ShareFetch and ShareAcknowledge). */
export const SHARE_NODE_ENDPOINTS = field(
  'node_endpoints',
  struct_array(
    field('node_id', 'int32', '0+'),
    field('host', 'string', '0+'),
    field('port', 'int32', '0+'),
    field('rack', 'string', '0+', { nullable_versions: '0+', default: null }),
  ),
  '0+',
);

export const SHARE_FETCH = api_spec({
  api_key: 78,
  name: 'ShareFetch',
  request: {
    name: 'ShareFetchRequest',
    api_key: 78,
    type: 'request',
    // Version 0 was the early-access version of Kafka 4.0 and is gone; 1 is the first stable one.
    valid_versions: '1-2',
    flexible_versions: '0+',
    fields: [
      field('group_id', 'string', '0+', { nullable_versions: '0+', default: null }),
      field('member_id', 'string', '0+', { nullable_versions: '0+' }),
      // 0 opens a share session, -1 closes it, otherwise one more than the previous request's.
      field('share_session_epoch', 'int32', '0+'),
      field('max_wait_ms', 'int32', '0+'),
      field('min_bytes', 'int32', '0+'),
      field('max_bytes', 'int32', '0+', { default: 0x7fffffff }),
      field('max_records', 'int32', '1+'),
      field('batch_size', 'int32', '1+'),
      // 0 batch-optimized, 1 record-limit.
      field('share_acquire_mode', 'int8', '2+'),
      field('is_renew_ack', 'bool', '2+', { default: false }),
      SHARE_ACKNOWLEDGEMENT_TOPICS,
      field(
        'forgotten_topics_data',
        struct_array(field('topic_id', 'uuid', '0+'), field('partitions', array_of('int32'), '0+')),
        '0+',
      ),
    ],
  },
  response: {
    name: 'ShareFetchResponse',
    api_key: 78,
    type: 'response',
    valid_versions: '1-2',
    flexible_versions: '0+',
    fields: [
      field('throttle_time_ms', 'int32', '0+'),
      field('error_code', 'int16', '0+'),
      field('error_message', 'string', '0+', { nullable_versions: '0+', default: null }),
      field('acquisition_lock_timeout_ms', 'int32', '1+'),
      field(
        'responses',
        struct_array(
          field('topic_id', 'uuid', '0+'),
          field(
            'partitions',
            struct_array(
              field('partition_index', 'int32', '0+'),
              field('error_code', 'int16', '0+'),
              field('error_message', 'string', '0+', { nullable_versions: '0+', default: null }),
              field('acknowledge_error_code', 'int16', '0+'),
              field('acknowledge_error_message', 'string', '0+', { nullable_versions: '0+', default: null }),
              SHARE_CURRENT_LEADER,
              // Nullable only in the removed version 0: from v1 an empty partition carries zero bytes.
              field('records', 'records', '0+'),
              field(
                'acquired_records',
                struct_array(
                  field('first_offset', 'int64', '0+'),
                  field('last_offset', 'int64', '0+'),
                  field('delivery_count', 'int16', '0+'),
                ),
                '0+',
              ),
            ),
            '0+',
          ),
        ),
        '0+',
      ),
      SHARE_NODE_ENDPOINTS,
    ],
  },
});
