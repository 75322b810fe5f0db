// ApiVersions (key 18): which APIs and versions the broker supports. Flexible from v3; the
// response header stays v0 in every version (see header.ts).
import { api_spec, field, struct_array } from '../schema.ts';

export const API_VERSIONS = api_spec({
  api_key: 18,
  name: 'ApiVersions',
  request: {
    name: 'ApiVersionsRequest',
    api_key: 18,
    type: 'request',
    valid_versions: '0-4',
    flexible_versions: '3+',
    fields: [field('client_software_name', 'string', '3+'), field('client_software_version', 'string', '3+')],
  },
  response: {
    name: 'ApiVersionsResponse',
    api_key: 18,
    type: 'response',
    valid_versions: '0-4',
    flexible_versions: '3+',
    fields: [
      field('error_code', 'int16', '0+'),
      field(
        'api_keys',
        struct_array(
          field('api_key', 'int16', '0+'),
          field('min_version', 'int16', '0+'),
          field('max_version', 'int16', '0+'),
        ),
        '0+',
      ),
      field('throttle_time_ms', 'int32', '1+'),
      field(
        'supported_features',
        struct_array(
          field('name', 'string', '3+'),
          field('min_version', 'int16', '3+'),
          field('max_version', 'int16', '3+'),
        ),
        '3+',
        { tag: 0 },
      ),
      field('finalized_features_epoch', 'int64', '3+', { tag: 1, default: -1 }),
      field(
        'finalized_features',
        struct_array(
          field('name', 'string', '3+'),
          field('max_version_level', 'int16', '3+'),
          field('min_version_level', 'int16', '3+'),
        ),
        '3+',
        { tag: 2 },
      ),
      field('zk_migration_ready', 'bool', '3+', { tag: 3, default: false }),
    ],
  },
});
