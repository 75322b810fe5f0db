// ConsumerGroupHeartbeat (key 68): members of a consumer group on the KIP-848 protocol join, stay
// in and leave it, and receive their partitions from the coordinator's assignor, one step of their
// reconciliation at a time. Flexible in every version; v1 adds the subscription by regex, and from
// it the consumer generates its own member id.
import { api_spec, array_of, field, struct, struct_array } from '../schema.ts';

const TOPIC_PARTITIONS = struct_array(field('topic_id', 'uuid', '0+'), field('partitions', array_of('int32'), '0+'));

export const CONSUMER_GROUP_HEARTBEAT = api_spec({
  api_key: 68,
  name: 'ConsumerGroupHeartbeat',
  request: {
    name: 'ConsumerGroupHeartbeatRequest',
    api_key: 68,
    type: 'request',
    valid_versions: '0-1',
    flexible_versions: '0+',
    fields: [
      field('group_id', 'string', '0+'),
      field('member_id', 'string', '0+'),
      // 0 joins the group, -1 leaves it, -2 leaves for now (a static member coming back).
      field('member_epoch', 'int32', '0+'),
      // Each of the nullable fields below is null when unchanged since the previous heartbeat.
      field('instance_id', 'string', '0+', { nullable_versions: '0+', default: null }),
      field('rack_id', 'string', '0+', { nullable_versions: '0+', default: null }),
      field('rebalance_timeout_ms', 'int32', '0+', { default: -1 }),
      field('subscribed_topic_names', array_of('string'), '0+', { nullable_versions: '0+', default: null }),
      field('subscribed_topic_regex', 'string', '1+', { nullable_versions: '1+', default: null }),
      field('server_assignor', 'string', '0+', { nullable_versions: '0+', default: null }),
      field('topic_partitions', TOPIC_PARTITIONS, '0+', { nullable_versions: '0+', default: null }),
    ],
  },
  response: {
    name: 'ConsumerGroupHeartbeatResponse',
    api_key: 68,
    type: 'response',
    valid_versions: '0-1',
    flexible_versions: '0+',
    fields: [
      field('throttle_time_ms', 'int32', '0+'),
      field('error_code', 'int16', '0+'),
      field('error_message', 'string', '0+', { nullable_versions: '0+', default: null }),
      field('member_id', 'string', '0+', { nullable_versions: '0+', default: null }),
      field('member_epoch', 'int32', '0+'),
      field('heartbeat_interval_ms', 'int32', '0+'),
      // null when the assignment is not being (re)sent; a presence byte precedes it on the wire.
      field('assignment', struct(field('topic_partitions', TOPIC_PARTITIONS, '0+')), '0+', {
        nullable_versions: '0+',
        default: null,
      }),
    ],
  },
});
