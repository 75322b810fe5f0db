// DescribeAcls (key 29): the ACL bindings matching one filter, grouped by resource pattern. A
// null name, principal or host matches any; type, pattern type, operation and permission take
// Kafka's ANY (1), and the pattern type MATCH (2) as well. Flexible from version 2.
import { api_spec, field, struct_array } from '../schema.ts';

export const DESCRIBE_ACLS = api_spec({
  api_key: 29,
  name: 'DescribeAcls',
  request: {
    name: 'DescribeAclsRequest',
    api_key: 29,
    type: 'request',
    valid_versions: '0-3',
    flexible_versions: '2+',
    fields: [
      field('resource_type_filter', 'int8', '0+'),
      field('resource_name_filter', 'string', '0+', { nullable_versions: '0+' }),
      field('pattern_type_filter', 'int8', '1+', { default: 3 }),
      field('principal_filter', 'string', '0+', { nullable_versions: '0+' }),
      field('host_filter', 'string', '0+', { nullable_versions: '0+' }),
      field('operation', 'int8', '0+'),
      field('permission_type', 'int8', '0+'),
    ],
  },
  response: {
    name: 'DescribeAclsResponse',
    api_key: 29,
    type: 'response',
    valid_versions: '0-3',
    flexible_versions: '2+',
    fields: [
      field('throttle_time_ms', 'int32', '0+'),
      field('error_code', 'int16', '0+'),
      field('error_message', 'string', '0+', { nullable_versions: '0+', default: null }),
      field(
        'resources',
        struct_array(
          field('resource_type', 'int8', '0+'),
          field('resource_name', 'string', '0+'),
          field('pattern_type', 'int8', '1+', { default: 3 }),
          field(
            'acls',
            struct_array(
              field('principal', 'string', '0+'),
              field('host', 'string', '0+'),
              field('operation', 'int8', '0+'),
              field('permission_type', 'int8', '0+'),
            ),
            '0+',
          ),
        ),
        '0+',
      ),
    ],
  },
});
