// DeleteTopics (key 20): deletes topics, by name up to v5 and by name or topic id (a list of
// name/id pairs) from v6.
import { api_spec, array_of, field, struct_array } from '../schema.ts';

export const DELETE_TOPICS = api_spec({
  api_key: 20,
  name: 'DeleteTopics',
  request: {
    name: 'DeleteTopicsRequest',
    api_key: 20,
    type: 'request',
    valid_versions: '0-6',
    flexible_versions: '4+',
    fields: [
      field(
        'topics',
        struct_array(
          field('name', 'string', '6+', { nullable_versions: '6+', default: null }),
          field('topic_id', 'uuid', '6+'),
        ),
        '6+',
      ),
      field('topic_names', array_of('string'), '0-5'),
      field('timeout_ms', 'int32', '0+'),
    ],
  },
  response: {
    name: 'DeleteTopicsResponse',
    api_key: 20,
    type: 'response',
    valid_versions: '0-6',
    flexible_versions: '4+',
    fields: [
      field('throttle_time_ms', 'int32', '1+'),
      field(
        'responses',
        struct_array(
          field('name', 'string', '0+', { nullable_versions: '6+' }),
          field('topic_id', 'uuid', '6+'),
          field('error_code', 'int16', '0+'),
          field('error_message', 'string', '5+', { nullable_versions: '5+', default: null }),
        ),
        '0+',
      ),
    ],
  },
});
