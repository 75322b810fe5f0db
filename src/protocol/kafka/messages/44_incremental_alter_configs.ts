// IncrementalAlterConfigs (key 44): changes single config keys of each resource (set, delete, append
// to or subtract from a list) and leaves the others as they are.
import { api_spec, field, struct_array } from '../schema.ts';

export const INCREMENTAL_ALTER_CONFIGS = api_spec({
  api_key: 44,
  name: 'IncrementalAlterConfigs',
  request: {
    name: 'IncrementalAlterConfigsRequest',
    api_key: 44,
    type: 'request',
    valid_versions: '0-1',
    flexible_versions: '1+',
    fields: [
      field(
        'resources',
        struct_array(
          field('resource_type', 'int8', '0+'),
          field('resource_name', 'string', '0+'),
          field(
            'configs',
            struct_array(
              field('name', 'string', '0+'),
              field('config_operation', 'int8', '0+'),
              field('value', 'string', '0+', { nullable_versions: '0+' }),
            ),
            '0+',
          ),
        ),
        '0+',
      ),
      field('validate_only', 'bool', '0+'),
    ],
  },
  response: {
    name: 'IncrementalAlterConfigsResponse',
    api_key: 44,
    type: 'response',
    valid_versions: '0-1',
    flexible_versions: '1+',
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
