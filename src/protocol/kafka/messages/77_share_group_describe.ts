// ShareGroupDescribe (key 77): state, epochs, assignor and members (with subscriptions and
// assignments) of share groups (KIP-932). Flexible in every version.
import { api_spec, array_of, field, struct, struct_array } from '../schema.ts';

const NO_AUTHORIZED_OPERATIONS = -2147483648;

export const SHARE_GROUP_DESCRIBE = api_spec({
  api_key: 77,
  name: 'ShareGroupDescribe',
  request: {
    name: 'ShareGroupDescribeRequest',
    api_key: 77,
    type: 'request',
    // Version 0 was the early-access version of Kafka 4.0 and is gone; 1 is the first stable one.
    valid_versions: '1',
    flexible_versions: '1+',
    fields: [field('group_ids', array_of('string'), '1+'), field('include_authorized_operations', 'bool', '1+')],
  },
  response: {
    name: 'ShareGroupDescribeResponse',
    api_key: 77,
    type: 'response',
    valid_versions: '1',
    flexible_versions: '1+',
    fields: [
      field('throttle_time_ms', 'int32', '1+'),
      field(
        'groups',
        struct_array(
          field('error_code', 'int16', '1+'),
          field('error_message', 'string', '1+', { nullable_versions: '1+', default: null }),
          field('group_id', 'string', '1+'),
          field('group_state', 'string', '1+'),
          field('group_epoch', 'int32', '1+'),
          field('assignment_epoch', 'int32', '1+'),
          field('assignor_name', 'string', '1+'),
          field(
            'members',
            struct_array(
              field('member_id', 'string', '1+'),
              field('rack_id', 'string', '1+', { nullable_versions: '1+', default: null }),
              field('member_epoch', 'int32', '1+'),
              field('client_id', 'string', '1+'),
              field('client_host', 'string', '1+'),
              field('subscribed_topic_names', array_of('string'), '1+'),
              field(
                'assignment',
                struct(
                  field(
                    'topic_partitions',
                    struct_array(
                      field('topic_id', 'uuid', '1+'),
                      field('topic_name', 'string', '1+'),
                      field('partitions', array_of('int32'), '1+'),
                    ),
                    '1+',
                  ),
                ),
                '1+',
              ),
            ),
            '1+',
          ),
          field('authorized_operations', 'int32', '1+', { default: NO_AUTHORIZED_OPERATIONS }),
        ),
        '1+',
      ),
    ],
  },
});
