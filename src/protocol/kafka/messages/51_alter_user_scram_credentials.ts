// AlterUserScramCredentials (key 51): SCRAM credentials removed or set, per user and mechanism. A
// client salts the password itself (salt, iterations, salted password), so the password never
// crosses the wire. Flexible in every version.
import { api_spec, field, struct_array } from '../schema.ts';

export const ALTER_SCRAM_CREDENTIALS = api_spec({
  api_key: 51,
  name: 'AlterUserScramCredentials',
  request: {
    name: 'AlterUserScramCredentialsRequest',
    api_key: 51,
    type: 'request',
    valid_versions: '0',
    flexible_versions: '0+',
    fields: [
      field('deletions', struct_array(field('name', 'string', '0+'), field('mechanism', 'int8', '0+')), '0+'),
      field(
        'upsertions',
        struct_array(
          field('name', 'string', '0+'),
          field('mechanism', 'int8', '0+'),
          field('iterations', 'int32', '0+'),
          field('salt', 'bytes', '0+'),
          field('salted_password', 'bytes', '0+'),
        ),
        '0+',
      ),
    ],
  },
  response: {
    name: 'AlterUserScramCredentialsResponse',
    api_key: 51,
    type: 'response',
    valid_versions: '0',
    flexible_versions: '0+',
    fields: [
      field('throttle_time_ms', 'int32', '0+'),
      field(
        'results',
        struct_array(
          field('user', 'string', '0+'),
          field('error_code', 'int16', '0+'),
          field('error_message', 'string', '0+', { nullable_versions: '0+', default: null }),
        ),
        '0+',
      ),
    ],
  },
});
