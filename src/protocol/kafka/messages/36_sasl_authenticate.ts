// SaslAuthenticate (key 36): carries one SASL token each way after a v1 handshake; v1+ responses say
// how long the authenticated session lasts before the client must re-authenticate.
import { api_spec, field } from '../schema.ts';

export const SASL_AUTHENTICATE = api_spec({
  api_key: 36,
  name: 'SaslAuthenticate',
  request: {
    name: 'SaslAuthenticateRequest',
    api_key: 36,
    type: 'request',
    valid_versions: '0-2',
    flexible_versions: '2+',
    fields: [field('auth_bytes', 'bytes', '0+')],
  },
  response: {
    name: 'SaslAuthenticateResponse',
    api_key: 36,
    type: 'response',
    valid_versions: '0-2',
    flexible_versions: '2+',
    fields: [
      field('error_code', 'int16', '0+'),
      field('error_message', 'string', '0+', { nullable_versions: '0+' }),
      field('auth_bytes', 'bytes', '0+'),
      field('session_lifetime_ms', 'int64', '1+'),
    ],
  },
});
