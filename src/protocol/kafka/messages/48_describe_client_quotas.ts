// DescribeClientQuotas (key 48): the quotas of the entities matching a filter. Each component names
// an entity type and a match: 0 an exact name, 1 the default entity, 2 any name. Flexible from 1.
import { api_spec, field, struct_array } from '../schema.ts';

export const DESCRIBE_CLIENT_QUOTAS = api_spec({
  api_key: 48,
  name: 'DescribeClientQuotas',
  request: {
    name: 'DescribeClientQuotasRequest',
    api_key: 48,
    type: 'request',
    valid_versions: '0-1',
    flexible_versions: '1+',
    fields: [
      field(
        'components',
        struct_array(
          field('entity_type', 'string', '0+'),
          field('match_type', 'int8', '0+'),
          field('match', 'string', '0+', { nullable_versions: '0+' }),
        ),
        '0+',
      ),
      field('strict', 'bool', '0+'),
    ],
  },
  response: {
    name: 'DescribeClientQuotasResponse',
    api_key: 48,
    type: 'response',
    valid_versions: '0-1',
    flexible_versions: '1+',
    fields: [
      field('throttle_time_ms', 'int32', '0+'),
      field('error_code', 'int16', '0+'),
      field('error_message', 'string', '0+', { nullable_versions: '0+', default: null }),
      field(
        'entries',
        struct_array(
          field(
            'entity',
            struct_array(
              field('entity_type', 'string', '0+'),
              field('entity_name', 'string', '0+', { nullable_versions: '0+' }),
            ),
            '0+',
          ),
          field('values', struct_array(field('key', 'string', '0+'), field('value', 'float64', '0+')), '0+'),
        ),
        '0+',
        { nullable_versions: '0+' },
      ),
    ],
  },
});
