// ElectLeaders (key 43): elect the preferred replica (election type 0) or, for a partition with no
// live in-sync replica, any live replica (type 1, v1+) as leader of the partitions named (null:
// every partition). Flexible from v2.
import { api_spec, array_of, field, struct_array } from '../schema.ts';

export const ELECT_LEADERS = api_spec({
  api_key: 43,
  name: 'ElectLeaders',
  request: {
    name: 'ElectLeadersRequest',
    api_key: 43,
    type: 'request',
    valid_versions: '0-2',
    flexible_versions: '2+',
    fields: [
      field('election_type', 'int8', '1+'),
      field(
        'topic_partitions',
        struct_array(field('topic', 'string', '0+'), field('partitions', array_of('int32'), '0+')),
        '0+',
        { nullable_versions: '0+' },
      ),
      field('timeout_ms', 'int32', '0+', { default: 60_000 }),
    ],
  },
  response: {
    name: 'ElectLeadersResponse',
    api_key: 43,
    type: 'response',
    valid_versions: '0-2',
    flexible_versions: '2+',
    fields: [
      field('throttle_time_ms', 'int32', '0+'),
      field('error_code', 'int16', '1+'),
      field(
        'replica_election_results',
        struct_array(
          field('topic', 'string', '0+'),
          field(
            'partition_result',
            struct_array(
              field('partition_id', 'int32', '0+'),
              field('error_code', 'int16', '0+'),
              field('error_message', 'string', '0+', { nullable_versions: '0+', default: null }),
            ),
            '0+',
          ),
        ),
        '0+',
      ),
    ],
  },
});
