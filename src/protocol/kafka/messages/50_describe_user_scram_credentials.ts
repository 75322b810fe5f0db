// DescribeUserScramCredentials (key 50): the SCRAM mechanisms and iteration counts each user has
// (never a salt or key); null users means every user. Flexible in every version.
import { api_spec, field, struct_array } from '../schema.ts';

export const DESCRIBE_SCRAM_CREDENTIALS = api_spec({
  api_key: 50,
  name: 'DescribeUserScramCredentials',
  request: {
    name: 'DescribeUserScramCredentialsRequest',
    api_key: 50,
    type: 'request',
    valid_versions: '0',
    flexible_versions: '0+',
    fields: [field('users', struct_array(field('name', 'string', '0+')), '0+', { nullable_versions: '0+' })],
  },
  response: {
    name: 'DescribeUserScramCredentialsResponse',
    api_key: 50,
    type: 'response',
    valid_versions: '0',
    flexible_versions: '0+',
    fields: [
      field('throttle_time_ms', 'int32', '0+'),
      field('error_code', 'int16', '0+'),
      field('error_message', 'string', '0+', { nullable_versions: '0+', default: null }),
      field(
        'results',
        struct_array(
          field('user', 'string', '0+'),
          field('error_code', 'int16', '0+'),
          field('error_message', 'string', '0+', { nullable_versions: '0+', default: null }),
          field(
            'credential_infos',
            struct_array(field('mechanism', 'int8', '0+'), field('iterations', 'int32', '0+')),
            '0+',
          ),
        ),
        '0+',
      ),
    ],
  },
});
