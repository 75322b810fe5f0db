// OffsetForLeaderEpoch (key 23): the end offset of a given leader epoch in each partition, used to
// detect and truncate log divergence after a leader change. Flexible from v4.
import { api_spec, field, struct_array } from '../schema.ts';

export const OFFSET_FOR_LEADER_EPOCH = api_spec({
  api_key: 23,
  name: 'OffsetForLeaderEpoch',
  request: {
    name: 'OffsetForLeaderEpochRequest',
    api_key: 23,
    type: 'request',
    valid_versions: '0-4',
    flexible_versions: '4+',
    fields: [
      field('replica_id', 'int32', '3+', { default: -2 }),
      field(
        'topics',
        struct_array(
          field('topic', 'string', '0+'),
          field(
            'partitions',
            struct_array(
              field('partition', 'int32', '0+'),
              field('current_leader_epoch', 'int32', '2+', { default: -1 }),
              field('leader_epoch', 'int32', '0+'),
            ),
            '0+',
          ),
        ),
        '0+',
      ),
    ],
  },
  response: {
    name: 'OffsetForLeaderEpochResponse',
    api_key: 23,
    type: 'response',
    valid_versions: '0-4',
    flexible_versions: '4+',
    fields: [
      field('throttle_time_ms', 'int32', '2+'),
      field(
        'topics',
        struct_array(
          field('topic', 'string', '0+'),
          field(
            'partitions',
            struct_array(
              field('error_code', 'int16', '0+'),
              field('partition', 'int32', '0+'),
              field('leader_epoch', 'int32', '1+', { default: -1 }),
              field('end_offset', 'int64', '0+', { default: -1 }),
            ),
            '0+',
          ),
        ),
        '0+',
      ),
    ],
  },
});
