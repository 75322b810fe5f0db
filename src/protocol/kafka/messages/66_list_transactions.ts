// ListTransactions (key 66): the transactions a coordinator knows, filtered by state and producer
// id and (v1+) by how long they have been running, so operators can find hanging ones (KIP-664,
// KIP-994). An empty filter matches everything. Flexible in every version.
import { api_spec, array_of, field, struct_array } from '../schema.ts';

export const LIST_TRANSACTIONS = api_spec({
  api_key: 66,
  name: 'ListTransactions',
  request: {
    name: 'ListTransactionsRequest',
    api_key: 66,
    type: 'request',
    valid_versions: '0-1',
    flexible_versions: '0+',
    fields: [
      field('state_filters', array_of('string'), '0+'),
      field('producer_id_filters', array_of('int64'), '0+'),
      // milliseconds; negative: no filter on the duration
      field('duration_filter', 'int64', '1+', { default: -1 }),
    ],
  },
  response: {
    name: 'ListTransactionsResponse',
    api_key: 66,
    type: 'response',
    valid_versions: '0-1',
    flexible_versions: '0+',
    fields: [
      field('throttle_time_ms', 'int32', '0+'),
      field('error_code', 'int16', '0+'),
      // so a client can tell a misspelt state from one with no transactions in it
      field('unknown_state_filters', array_of('string'), '0+'),
      field(
        'transaction_states',
        struct_array(
          field('transactional_id', 'string', '0+'),
          field('producer_id', 'int64', '0+'),
          field('transaction_state', 'string', '0+'),
        ),
        '0+',
      ),
    ],
  },
});
