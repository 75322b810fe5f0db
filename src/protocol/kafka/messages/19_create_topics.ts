// CreateTopics (key 19): creates topics with a partition count and replication factor or an explicit
// replica assignment, plus per-topic configs; v5+ answers with the resulting configs, v7+ the topic id.
import { api_spec, array_of, field, struct_array } from '../schema.ts';

export const CREATE_TOPICS = api_spec({
  api_key: 19,
  name: 'CreateTopics',
  request: {
    name: 'CreateTopicsRequest',
    api_key: 19,
    type: 'request',
    valid_versions: '0-7',
    flexible_versions: '5+',
    fields: [
      field(
        'topics',
        struct_array(
          field('name', 'string', '0+'),
          field('num_partitions', 'int32', '0+'),
          field('replication_factor', 'int16', '0+'),
          field(
            'assignments',
            struct_array(field('partition_index', 'int32', '0+'), field('broker_ids', array_of('int32'), '0+')),
            '0+',
          ),
          field(
            'configs',
            struct_array(field('name', 'string', '0+'), field('value', 'string', '0+', { nullable_versions: '0+' })),
            '0+',
          ),
        ),
        '0+',
      ),
      field('timeout_ms', 'int32', '0+', { default: 60000 }),
      field('validate_only', 'bool', '1+'),
    ],
  },
  response: {
    name: 'CreateTopicsResponse',
    api_key: 19,
    type: 'response',
    valid_versions: '0-7',
    flexible_versions: '5+',
    fields: [
      field('throttle_time_ms', 'int32', '2+'),
      field(
        'topics',
        struct_array(
          field('name', 'string', '0+'),
          field('topic_id', 'uuid', '7+'),
          field('error_code', 'int16', '0+'),
          field('error_message', 'string', '1+', { nullable_versions: '0+' }),
          field('topic_config_error_code', 'int16', '5+', { tag: 0 }),
          field('num_partitions', 'int32', '5+', { default: -1 }),
          field('replication_factor', 'int16', '5+', { default: -1 }),
          field(
            'configs',
            struct_array(
              field('name', 'string', '5+'),
              field('value', 'string', '5+', { nullable_versions: '5+' }),
              field('read_only', 'bool', '5+'),
              field('config_source', 'int8', '5+', { default: -1 }),
              field('is_sensitive', 'bool', '5+'),
            ),
            '5+',
            { nullable_versions: '5+' },
          ),
        ),
        '0+',
      ),
    ],
  },
});
