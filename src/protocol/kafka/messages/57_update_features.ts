// UpdateFeatures (key 57): change the cluster's finalized feature levels. Flexible.
import { api_spec, field, struct_array } from '../schema.ts';

export const UPDATE_FEATURES = api_spec({
  api_key: 57,
  name: 'UpdateFeatures',
  request: {
    name: 'UpdateFeaturesRequest',
    api_key: 57,
    type: 'request',
    valid_versions: '0-2',
    flexible_versions: '0+',
    fields: [
      field('timeout_ms', 'int32', '0+', { default: 60_000 }),
      field(
        'feature_updates',
        struct_array(
          field('feature', 'string', '0+'),
          field('max_version_level', 'int16', '0+'),
          field('allow_downgrade', 'bool', '0'),
          field('upgrade_type', 'int8', '1+', { default: 1 }),
        ),
        '0+',
      ),
      field('validate_only', 'bool', '1+', { default: false }),
    ],
  },
  response: {
    name: 'UpdateFeaturesResponse',
    api_key: 57,
    type: 'response',
    valid_versions: '0-2',
    flexible_versions: '0+',
    fields: [
      field('throttle_time_ms', 'int32', '0+'),
      field('error_code', 'int16', '0+'),
      field('error_message', 'string', '0+', { nullable_versions: '0+', default: null }),
      field(
        'results',
        struct_array(
          field('feature', 'string', '0+'),
          field('error_code', 'int16', '0+'),
          field('error_message', 'string', '0+', { nullable_versions: '0+', default: null }),
        ),
        '0-1',
      ),
    ],
  },
});
