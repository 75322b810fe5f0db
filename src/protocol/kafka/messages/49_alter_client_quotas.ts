// AlterClientQuotas (key 49): per entity, quota keys to set or remove; one result per entity in
// the order given. A null entity name is that type's default. Flexible from version 1.
import { api_spec, field, struct_array } from '../schema.ts';

const ENTITY = struct_array(
  field('entity_type', 'string', '0+'),
  field('entity_name', 'string', '0+', { nullable_versions: '0+' }),
);

export const ALTER_CLIENT_QUOTAS = api_spec({
  api_key: 49,
  name: 'AlterClientQuotas',
  request: {
    name: 'AlterClientQuotasRequest',
    api_key: 49,
    type: 'request',
    valid_versions: '0-1',
    flexible_versions: '1+',
    fields: [
      field(
        'entries',
        struct_array(
          field('entity', ENTITY, '0+'),
          field(
            'ops',
            struct_array(field('key', 'string', '0+'), field('value', 'float64', '0+'), field('remove', 'bool', '0+')),
            '0+',
          ),
        ),
        '0+',
      ),
      field('validate_only', 'bool', '0+'),
    ],
  },
  response: {
    name: 'AlterClientQuotasResponse',
    api_key: 49,
    type: 'response',
    valid_versions: '0-1',
    flexible_versions: '1+',
    fields: [
      field('throttle_time_ms', 'int32', '0+'),
      field(
        'entries',
        struct_array(
          field('error_code', 'int16', '0+'),
          field('error_message', 'string', '0+', { nullable_versions: '0+', default: null }),
          field('entity', ENTITY, '0+'),
        ),
        '0+',
      ),
    ],
  },
});
