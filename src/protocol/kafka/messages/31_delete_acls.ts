// DeleteAcls (key 31): filters (as DescribeAcls's), each answered with the bindings it matched
// and removed. Flexible from version 2.
import { api_spec, field, struct_array } from '../schema.ts';

export const DELETE_ACLS = api_spec({
  api_key: 31,
  name: 'DeleteAcls',
  request: {
    name: 'DeleteAclsRequest',
    api_key: 31,
    type: 'request',
    valid_versions: '0-3',
    flexible_versions: '2+',
    fields: [
      field(
        'filters',
        struct_array(
          field('resource_type_filter', 'int8', '0+'),
          field('resource_name_filter', 'string', '0+', { nullable_versions: '0+' }),
          field('pattern_type_filter', 'int8', '1+', { default: 3 }),
          field('principal_filter', 'string', '0+', { nullable_versions: '0+' }),
          field('host_filter', 'string', '0+', { nullable_versions: '0+' }),
          field('operation', 'int8', '0+'),
          field('permission_type', 'int8', '0+'),
        ),
        '0+',
      ),
    ],
  },
  response: {
    name: 'DeleteAclsResponse',
    api_key: 31,
    type: 'response',
    valid_versions: '0-3',
    flexible_versions: '2+',
    fields: [
      field('throttle_time_ms', 'int32', '0+'),
      field(
        'filter_results',
        struct_array(
          field('error_code', 'int16', '0+'),
          field('error_message', 'string', '0+', { nullable_versions: '0+', default: null }),
          field(
            'matching_acls',
            struct_array(
              field('error_code', 'int16', '0+'),
              field('error_message', 'string', '0+', { nullable_versions: '0+', default: null }),
              field('resource_type', 'int8', '0+'),
              field('resource_name', 'string', '0+'),
              field('pattern_type', 'int8', '1+', { default: 3 }),
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
