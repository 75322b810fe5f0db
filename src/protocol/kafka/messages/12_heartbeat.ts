// Heartbeat (key 12): a classic group member tells the coordinator it is alive; the error code
// tells it when to rejoin.
import { api_spec, field } from '../schema.ts';

export const HEARTBEAT = api_spec({
  api_key: 12,
  name: 'Heartbeat',
  request: {
    name: 'HeartbeatRequest',
    api_key: 12,
    type: 'request',
    valid_versions: '0-4',
    flexible_versions: '4+',
    fields: [
      field('group_id', 'string', '0+'),
      field('generation_id', 'int32', '0+'),
      field('member_id', 'string', '0+'),
      field('group_instance_id', 'string', '3+', { nullable_versions: '3+', default: null }),
    ],
  },
  response: {
    name: 'HeartbeatResponse',
    api_key: 12,
    type: 'response',
    valid_versions: '0-4',
    flexible_versions: '4+',
    fields: [field('throttle_time_ms', 'int32', '1+'), field('error_code', 'int16', '0+')],
  },
});
