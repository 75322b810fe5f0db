// SaslHandshake (key 17): the client names the SASL mechanism it wants; the broker answers with the
// mechanisms it has enabled. v0 carries the SASL tokens as raw frames after it, v1 in SaslAuthenticate.
import { api_spec, array_of, field } from '../schema.ts';

export const SASL_HANDSHAKE = api_spec({
  api_key: 17,
  name: 'SaslHandshake',
  request: {
    name: 'SaslHandshakeRequest',
    api_key: 17,
    type: 'request',
    valid_versions: '0-1',
    flexible_versions: 'none',
    fields: [field('mechanism', 'string', '0+')],
  },
  response: {
    name: 'SaslHandshakeResponse',
    api_key: 17,
    type: 'response',
    valid_versions: '0-1',
    flexible_versions: 'none',
    fields: [field('error_code', 'int16', '0+'), field('mechanisms', array_of('string'), '0+')],
  },
});
