// Metadata (key 3): the brokers of the cluster, its controller, and the partitions, leaders and
// replicas of the requested topics (or of all topics). Flexible from v9.
import { api_spec, array_of, field, struct_array } from '../schema.ts';

const NO_AUTHORIZED_OPERATIONS = -2147483648;

export const METADATA = api_spec({
  api_key: 3,
  name: 'Metadata',
  request: {
    name: 'MetadataRequest',
    api_key: 3,
    type: 'request',
    valid_versions: '0-13',
    flexible_versions: '9+',
    fields: [
      field(
        'topics',
        struct_array(field('topic_id', 'uuid', '10+'), field('name', 'string', '0+', { nullable_versions: '10+' })),
        '0+',
        { nullable_versions: '1+' },
      ),
      field('allow_auto_topic_creation', 'bool', '4+', { default: true }),
      field('include_cluster_authorized_operations', 'bool', '8-10'),
      field('include_topic_authorized_operations', 'bool', '8+'),
    ],
  },
  response: {
    name: 'MetadataResponse',
    api_key: 3,
    type: 'response',
    valid_versions: '0-13',
    flexible_versions: '9+',
    fields: [
      field('throttle_time_ms', 'int32', '3+'),
      field(
        'brokers',
        struct_array(
          field('node_id', 'int32', '0+'),
          field('host', 'string', '0+'),
          field('port', 'int32', '0+'),
          field('rack', 'string', '1+', { nullable_versions: '1+', default: null }),
        ),
        '0+',
      ),
      field('cluster_id', 'string', '2+', { nullable_versions: '2+', default: null }),
      field('controller_id', 'int32', '1+', { default: -1 }),
      field(
        'topics',
        struct_array(
          field('error_code', 'int16', '0+'),
          field('name', 'string', '0+', { nullable_versions: '12+' }),
          field('topic_id', 'uuid', '10+'),
          field('is_internal', 'bool', '1+'),
          field(
            'partitions',
            struct_array(
              field('error_code', 'int16', '0+'),
              field('partition_index', 'int32', '0+'),
              field('leader_id', 'int32', '0+'),
              field('leader_epoch', 'int32', '7+', { default: -1 }),
              field('replica_nodes', array_of('int32'), '0+'),
              field('isr_nodes', array_of('int32'), '0+'),
              field('offline_replicas', array_of('int32'), '5+'),
            ),
            '0+',
          ),
          field('topic_authorized_operations', 'int32', '8+', { default: NO_AUTHORIZED_OPERATIONS }),
        ),
        '0+',
      ),
      field('cluster_authorized_operations', 'int32', '8-10', { default: NO_AUTHORIZED_OPERATIONS }),
      field('error_code', 'int16', '13+'),
    ],
  },
});
