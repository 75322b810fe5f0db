// DescribeConfigs (key 32): reads the configuration of topics, brokers and other resources, all keys
// or the listed ones; v1+ adds each entry's source and synonyms, v3+ its type and documentation.
import { api_spec, array_of, field, struct_array } from '../schema.ts';

export const DESCRIBE_CONFIGS = api_spec({
  api_key: 32,
  name: 'DescribeConfigs',
  request: {
    name: 'DescribeConfigsRequest',
    api_key: 32,
    type: 'request',
    valid_versions: '0-4',
    flexible_versions: '4+',
    fields: [
      field(
        'resources',
        struct_array(
          field('resource_type', 'int8', '0+'),
          field('resource_name', 'string', '0+'),
          field('configuration_keys', array_of('string'), '0+', { nullable_versions: '0+' }),
        ),
        '0+',
      ),
      field('include_synonyms', 'bool', '1+'),
      field('include_documentation', 'bool', '3+'),
    ],
  },
  response: {
    name: 'DescribeConfigsResponse',
    api_key: 32,
    type: 'response',
    valid_versions: '0-4',
    flexible_versions: '4+',
    fields: [
      field('throttle_time_ms', 'int32', '0+'),
      field(
        'results',
        struct_array(
          field('error_code', 'int16', '0+'),
          field('error_message', 'string', '0+', { nullable_versions: '0+' }),
          field('resource_type', 'int8', '0+'),
          field('resource_name', 'string', '0+'),
          field(
            'configs',
            struct_array(
              field('name', 'string', '0+'),
              field('value', 'string', '0+', { nullable_versions: '0+' }),
              field('read_only', 'bool', '0+'),
              field('is_default', 'bool', '0'),
              field('config_source', 'int8', '1+', { default: -1 }),
              field('is_sensitive', 'bool', '0+'),
              field(
                'synonyms',
                struct_array(
                  field('name', 'string', '1+'),
                  field('value', 'string', '1+', { nullable_versions: '0+' }),
                  field('source', 'int8', '1+'),
                ),
                '1+',
              ),
              field('config_type', 'int8', '3+'),
              field('documentation', 'string', '3+', { nullable_versions: '0+' }),
            ),
            '0+',
          ),
        ),
        '0+',
      ),
    ],
  },
});
