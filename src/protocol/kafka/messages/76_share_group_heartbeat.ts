// ShareGroupHeartbeat (key 76): share-group members (KIP-932) join, stay in and leave a share group
// and receive their partition assignment from the coordinator. Flexible in every version.
import { api_spec, array_of, field, struct, struct_array } from '../schema.ts';

export const SHARE_GROUP_HEARTBEAT = api_spec({
  api_key: 76,
  name: 'ShareGroupHeartbeat',
  request: {
    name: 'ShareGroupHeartbeatRequest',
    api_key: 76,
    type: 'request',
    // Version 0 was the early-access version of Kafka 4.0 and is gone; 1 is the first stable one.
    valid_versions: '1',
    flexible_versions: '0+',
    fields: [
      field('group_id', 'string', '0+'),
      field('member_id', 'string', '0+'),
      // 0 joins the group, -1 leaves it.
      field('member_epoch', 'int32', '0+'),
      // null when unchanged since the previous heartbeat (or not known).
      field('rack_id', 'string', '0+', { nullable_versions: '0+', default: null }),
      field('subscribed_topic_names', array_of('string'), '0+', { nullable_versions: '0+', default: null }),
    ],
  },
  response: {
    name: 'ShareGroupHeartbeatResponse',
    api_key: 76,
    type: 'response',
    valid_versions: '1',
    flexible_versions: '0+',
    fields: [
      field('throttle_time_ms', 'int32', '0+'),
      field('error_code', 'int16', '0+'),
      field('error_message', 'string', '0+', { nullable_versions: '0+', default: null }),
      field('member_id', 'string', '0+', { nullable_versions: '0+', default: null }),
      field('member_epoch', 'int32', '0+'),
      field('heartbeat_interval_ms', 'int32', '0+'),
      // null when the assignment is not being (re)sent; a presence byte precedes it on the wire.
      field(
        'assignment',
        struct(
          field(
            'topic_partitions',
            struct_array(field('topic_id', 'uuid', '0+'), field('partitions', array_of('int32'), '0+')),
            '0+',
          ),
        ),
        '0+',
        { nullable_versions: '0+', default: null },
      ),
    ],
  },
});
