// AddPartitionsToTxn (key 24): enrolls partitions in a producer's open transaction before it
// writes to them, so the coordinator knows where to send the commit or abort markers. Up to v3 a
// client names one transaction; v4+ is the brokers' form, batching several transactions, and with
// verify_only a partition leader only checks that a partition is already enrolled.
import { api_spec, array_of, field, struct_array } from '../schema.ts';

// One layout for the topics of a transaction, whether a client (v0-3) or a broker (v4+) sends them.
const TOPICS = struct_array(field('name', 'string', '0+'), field('partitions', array_of('int32'), '0+'));

// One layout for the per-topic results, top-level up to v3 and per transaction from v4.
const TOPIC_RESULTS = struct_array(
  field('name', 'string', '0+'),
  field(
    'results_by_partition',
    struct_array(field('partition_index', 'int32', '0+'), field('partition_error_code', 'int16', '0+')),
    '0+',
  ),
);

export const ADD_PARTITIONS_TO_TXN = api_spec({
  api_key: 24,
  name: 'AddPartitionsToTxn',
  request: {
    name: 'AddPartitionsToTxnRequest',
    api_key: 24,
    type: 'request',
    valid_versions: '0-5',
    flexible_versions: '3+',
    fields: [
      field(
        'transactions',
        struct_array(
          field('transactional_id', 'string', '4+'),
          field('producer_id', 'int64', '4+'),
          field('producer_epoch', 'int16', '4+'),
          field('verify_only', 'bool', '4+', { default: false }),
          field('topics', TOPICS, '4+'),
        ),
        '4+',
      ),
      field('v3_and_below_transactional_id', 'string', '0-3'),
      field('v3_and_below_producer_id', 'int64', '0-3'),
      field('v3_and_below_producer_epoch', 'int16', '0-3'),
      field('v3_and_below_topics', TOPICS, '0-3'),
    ],
  },
  response: {
    name: 'AddPartitionsToTxnResponse',
    api_key: 24,
    type: 'response',
    valid_versions: '0-5',
    flexible_versions: '3+',
    fields: [
      field('throttle_time_ms', 'int32', '0+'),
      field('error_code', 'int16', '4+'),
      field(
        'results_by_transaction',
        struct_array(field('transactional_id', 'string', '4+'), field('topic_results', TOPIC_RESULTS, '4+')),
        '4+',
      ),
      field('results_by_topic_v3_and_below', TOPIC_RESULTS, '0-3'),
    ],
  },
});
