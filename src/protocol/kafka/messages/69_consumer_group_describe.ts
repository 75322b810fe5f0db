// ConsumerGroupDescribe (key 69): state, epochs, assignor and members (subscriptions, current and
// target assignments) of consumer groups on the KIP-848 protocol. Flexible in every version.
import { api_spec, array_of, field, struct, struct_array } from '../schema.ts';

const NO_AUTHORIZED_OPERATIONS = -2147483648;

const ASSIGNMENT = struct(
  field(
    'topic_partitions',
    struct_array(
      field('topic_id', 'uuid', '0+'),
      field('topic_name', 'string', '0+'),
      field('partitions', array_of('int32'), '0+'),
    ),
    '0+',
  ),
);

export const CONSUMER_GROUP_DESCRIBE = api_spec({
  api_key: 69,
  name: 'ConsumerGroupDescribe',
  request: {
    name: 'ConsumerGroupDescribeRequest',
    api_key: 69,
    type: 'request',
    valid_versions: '0',
    flexible_versions: '0+',
    fields: [field('group_ids', array_of('string'), '0+'), field('include_authorized_operations', 'bool', '0+')],
  },
  response: {
    name: 'ConsumerGroupDescribeResponse',
    api_key: 69,
    type: 'response',
    valid_versions: '0',
    flexible_versions: '0+',
    fields: [
      field('throttle_time_ms', 'int32', '0+'),
      field(
        'groups',
        struct_array(
          field('error_code', 'int16', '0+'),
          field('error_message', 'string', '0+', { nullable_versions: '0+', default: null }),
          field('group_id', 'string', '0+'),
          field('group_state', 'string', '0+'),
          field('group_epoch', 'int32', '0+'),
          field('assignment_epoch', 'int32', '0+'),
          field('assignor_name', 'string', '0+'),
          field(
            'members',
            struct_array(
              field('member_id', 'string', '0+'),
              field('instance_id', 'string', '0+', { nullable_versions: '0+', default: null }),
              field('rack_id', 'string', '0+', { nullable_versions: '0+', default: null }),
              field('member_epoch', 'int32', '0+'),
              field('client_id', 'string', '0+'),
              field('client_host', 'string', '0+'),
              field('subscribed_topic_names', array_of('string'), '0+'),
              field('subscribed_topic_regex', 'string', '0+', { nullable_versions: '0+', default: null }),
              field('assignment', ASSIGNMENT, '0+'),
              field('target_assignment', ASSIGNMENT, '0+'),
            ),
            '0+',
          ),
          field('authorized_operations', 'int32', '0+', { default: NO_AUTHORIZED_OPERATIONS }),
        ),
        '0+',
      ),
    ],
  },
});
