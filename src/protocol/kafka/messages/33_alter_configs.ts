// AlterConfigs (key 33): replaces the whole set of dynamic configs of each resource with the given
// one (keys left out go back to their defaults), or only validates it.
import { api_spec, field, struct_array } from '../schema.ts';

export const ALTER_CONFIGS = api_spec({
  api_key: 33,
  name: 'AlterConfigs',
  request: {
    name: 'AlterConfigsRequest',
    api_key: 33,
    type: 'request',
    valid_versions: '0-2',
    flexible_versions: '2+',
    fields: [
      field(
        'resources',
        struct_array(
          field('resource_type', 'int8', '0+'),
          field('resource_name', 'string', '0+'),
          field(
            'configs',
            struct_array(field('name', 'string', '0+'), field('value', 'string', '0+', { nullable_versions: '0+' })),
            '0+',
          ),
        ),
        '0+',
      ),
      field('validate_only', 'bool', '0+'),
    ],
  },
  response: {
    name: 'AlterConfigsResponse',
    api_key: 33,
    type: 'response',
    valid_versions: '0-2',
    flexible_versions: '2+',
    fields: [
      field('throttle_time_ms', 'int32', '0+'),
      field(
        'responses',
        struct_array(
          field('error_code', 'int16', '0+'),
          field('error_message', 'string', '0+', { nullable_versions: '0+' }),
          field('resource_type', 'int8', '0+'),
          field('resource_name', 'string', '0+'),
        ),
        '0+',
      ),
    ],
  },
});
