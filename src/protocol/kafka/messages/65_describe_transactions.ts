// DescribeTransactions (key 65): the transaction coordinator's state for the transactional ids
// asked about (state, timeout, start time, producer, enrolled partitions), for the admin tools of
// KIP-664. Flexible in every version.
import { api_spec, array_of, field, struct_array } from '../schema.ts';

export const DESCRIBE_TRANSACTIONS = api_spec({
  api_key: 65,
  name: 'DescribeTransactions',
  request: {
    name: 'DescribeTransactionsRequest',
    api_key: 65,
    type: 'request',
    valid_versions: '0',
    flexible_versions: '0+',
    fields: [field('transactional_ids', array_of('string'), '0+')],
  },
  response: {
    name: 'DescribeTransactionsResponse',
    api_key: 65,
    type: 'response',
    valid_versions: '0',
    flexible_versions: '0+',
    fields: [
      field('throttle_time_ms', 'int32', '0+'),
      field(
        'transaction_states',
        struct_array(
          field('error_code', 'int16', '0+'),
          field('transactional_id', 'string', '0+'),
          field('transaction_state', 'string', '0+'),
          field('transaction_timeout_ms', 'int32', '0+'),
          field('transaction_start_time_ms', 'int64', '0+'),
          field('producer_id', 'int64', '0+'),
          field('producer_epoch', 'int16', '0+'),
          // while the markers are being written, only the partitions that have none yet
          field(
            'topics',
            struct_array(field('topic', 'string', '0+'), field('partitions', array_of('int32'), '0+')),
            '0+',
          ),
        ),
        '0+',
      ),
    ],
  },
});
