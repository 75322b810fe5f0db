// InitProducerId (key 22): hands an idempotent or transactional producer its producer id and
// epoch; v3+ lets a producer ask to keep its id after an epoch error.
import { api_spec, field } from '../schema.ts';

export const INIT_PRODUCER_ID = api_spec({
  api_key: 22,
  name: 'InitProducerId',
  request: {
    name: 'InitProducerIdRequest',
    api_key: 22,
    type: 'request',
    valid_versions: '0-5',
    flexible_versions: '2+',
    fields: [
      field('transactional_id', 'string', '0+', { nullable_versions: '0+' }),
      field('transaction_timeout_ms', 'int32', '0+'),
      field('producer_id', 'int64', '3+', { default: -1 }),
      field('producer_epoch', 'int16', '3+', { default: -1 }),
    ],
  },
  response: {
    name: 'InitProducerIdResponse',
    api_key: 22,
    type: 'response',
    valid_versions: '0-5',
    flexible_versions: '2+',
    fields: [
      field('throttle_time_ms', 'int32', '0+'),
      field('error_code', 'int16', '0+'),
      field('producer_id', 'int64', '0+', { default: -1 }),
      field('producer_epoch', 'int16', '0+'),
    ],
  },
});
