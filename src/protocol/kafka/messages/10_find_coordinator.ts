// FindCoordinator (key 10): which broker coordinates a group, a transactional id or a share
// partition; v4+ looks up several keys in one request.
import { api_spec, array_of, field, struct_array } from '../schema.ts';

export const FIND_COORDINATOR = api_spec({
  api_key: 10,
  name: 'FindCoordinator',
  request: {
    name: 'FindCoordinatorRequest',
    api_key: 10,
    type: 'request',
    valid_versions: '0-6',
    flexible_versions: '3+',
    fields: [
      field('key', 'string', '0-3'),
      field('key_type', 'int8', '1+'),
      field('coordinator_keys', array_of('string'), '4+'),
    ],
  },
  response: {
    name: 'FindCoordinatorResponse',
    api_key: 10,
    type: 'response',
    valid_versions: '0-6',
    flexible_versions: '3+',
    fields: [
      field('throttle_time_ms', 'int32', '1+'),
      field('error_code', 'int16', '0-3'),
      field('error_message', 'string', '1-3', { nullable_versions: '1-3' }),
      field('node_id', 'int32', '0-3'),
      field('host', 'string', '0-3'),
      field('port', 'int32', '0-3'),
      field(
        'coordinators',
        struct_array(
          field('key', 'string', '4+'),
          field('node_id', 'int32', '4+'),
          field('host', 'string', '4+'),
          field('port', 'int32', '4+'),
          field('error_code', 'int16', '4+'),
          field('error_message', 'string', '4+', { nullable_versions: '4+' }),
        ),
        '4+',
      ),
    ],
  },
});
