// CreateAcls (key 30): ACL bindings to add, answered one result each in the order given.
// Flexible from version 2.
import { api_spec, field, struct_array } from '../schema.ts';

export const CREATE_ACLS = api_spec({
  api_key: 30,
  name: 'CreateAcls',
  request: {
    name: 'CreateAclsRequest',
    api_key: 30,
    type: 'request',
    valid_versions: '0-3',
    flexible_versions: '2+',
    fields: [
      field(
        'creations',
        struct_array(
          field('resource_type', 'int8', '0+'),
          field('resource_name', 'string', '0+'),
          field('resource_pattern_type', 'int8', '1+', { default: 3 }),
          field('principal', 'string', '0+'),
          field('host', 'string', '0+'),
          field('operation', 'int8', '0+'),
          field('permission_type', 'int8', '0+'),
        ),
        '0+',
      ),
    ],
  },
  response: {
    name: 'CreateAclsResponse',
    api_key: 30,
    type: 'response',
    valid_versions: '0-3',
    flexible_versions: '2+',
    fields: [
      field('throttle_time_ms', 'int32', '0+'),
      field(
        'results',
        struct_array(
          field('error_code', 'int16', '0+'),
          field('error_message', 'string', '0+', { nullable_versions: '0+', default: null }),
        ),
        '0+',
      ),
    ],
  },
});
