// EndTxn (key 26): a transactional producer asks its coordinator to commit or abort the open
// transaction. From v5 (KIP-890 part 2) the coordinator bumps the epoch at every transaction's end,
// so the response hands the producer the id and epoch to use for the next one.
import { api_spec, field } from '../schema.ts';

export const END_TXN = api_spec({
  api_key: 26,
  name: 'EndTxn',
  request: {
    name: 'EndTxnRequest',
    api_key: 26,
    type: 'request',
    valid_versions: '0-5',
    flexible_versions: '3+',
    fields: [
      field('transactional_id', 'string', '0+'),
      field('producer_id', 'int64', '0+'),
      field('producer_epoch', 'int16', '0+'),
      field('committed', 'bool', '0+'),
    ],
  },
  response: {
    name: 'EndTxnResponse',
    api_key: 26,
    type: 'response',
    valid_versions: '0-5',
    flexible_versions: '3+',
    fields: [
      field('throttle_time_ms', 'int32', '0+'),
      field('error_code', 'int16', '0+'),
      field('producer_id', 'int64', '5+', { default: -1 }),
      field('producer_epoch', 'int16', '5+', { default: -1 }),
    ],
  },
});
