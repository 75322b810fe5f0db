// ShareAcknowledge (key 79): share consumers (KIP-932) accept, release, reject or (v2) renew records
// they acquired through ShareFetch, within a share session. Flexible in every version.
import { SHARE_ACKNOWLEDGEMENT_TOPICS, SHARE_CURRENT_LEADER, SHARE_NODE_ENDPOINTS } from './78_share_fetch.ts';
import { api_spec, field, struct_array } from '../schema.ts';

export const SHARE_ACKNOWLEDGE = api_spec({
  api_key: 79,
  name: 'ShareAcknowledge',
  request: {
    name: 'ShareAcknowledgeRequest',
    api_key: 79,
    type: 'request',
    // Version 0 was the early-access version of Kafka 4.0 and is gone; 1 is the first stable one.
    valid_versions: '1-2',
    flexible_versions: '0+',
    fields: [
      field('group_id', 'string', '0+', { nullable_versions: '0+', default: null }),
      field('member_id', 'string', '0+', { nullable_versions: '0+' }),
      // 0 opens a share session, -1 closes it, otherwise one more than the previous request's.
      field('share_session_epoch', 'int32', '0+'),
      // Set when some batch carries a renew (4) acknowledgement.
      field('is_renew_ack', 'bool', '2+', { default: false }),
      SHARE_ACKNOWLEDGEMENT_TOPICS,
    ],
  },
  response: {
    name: 'ShareAcknowledgeResponse',
    api_key: 79,
    type: 'response',
    valid_versions: '1-2',
    flexible_versions: '0+',
    fields: [
      field('throttle_time_ms', 'int32', '0+'),
      field('error_code', 'int16', '0+'),
      field('error_message', 'string', '0+', { nullable_versions: '0+', default: null }),
      field('acquisition_lock_timeout_ms', 'int32', '2+'),
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
              SHARE_CURRENT_LEADER,
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
