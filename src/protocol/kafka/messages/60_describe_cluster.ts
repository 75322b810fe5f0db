// DescribeCluster (key 60): the cluster id, controller and brokers (or controllers) as the admin
// client sees them. Flexible in every version.
import { api_spec, field, struct_array } from '../schema.ts';

const NO_AUTHORIZED_OPERATIONS = -2147483648;

export const DESCRIBE_CLUSTER = api_spec({
  api_key: 60,
  name: 'DescribeCluster',
  request: {
    name: 'DescribeClusterRequest',
    api_key: 60,
    type: 'request',
    valid_versions: '0-2',
    flexible_versions: '0+',
    fields: [
      field('include_cluster_authorized_operations', 'bool', '0+'),
      field('endpoint_type', 'int8', '1+', { default: 1 }),
      field('include_fenced_brokers', 'bool', '2+'),
    ],
  },
  response: {
    name: 'DescribeClusterResponse',
    api_key: 60,
    type: 'response',
    valid_versions: '0-2',
    flexible_versions: '0+',
    fields: [
      field('throttle_time_ms', 'int32', '0+'),
      field('error_code', 'int16', '0+'),
      field('error_message', 'string', '0+', { nullable_versions: '0+', default: null }),
      field('endpoint_type', 'int8', '1+', { default: 1 }),
      field('cluster_id', 'string', '0+'),
      field('controller_id', 'int32', '0+', { default: -1 }),
      field(
        'brokers',
        struct_array(
          field('broker_id', 'int32', '0+'),
          field('host', 'string', '0+'),
          field('port', 'int32', '0+'),
          field('rack', 'string', '0+', { nullable_versions: '0+', default: null }),
          field('is_fenced', 'bool', '2+'),
        ),
        '0+',
      ),
      field('cluster_authorized_operations', 'int32', '0+', { default: NO_AUTHORIZED_OPERATIONS }),
    ],
  },
});
