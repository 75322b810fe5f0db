import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ADD_PARTITIONS_TO_TXN } from './24_add_partitions_to_txn.ts';
import { assert_round_trip, assert_round_trips_in_every_version, decode, encode, hex } from './test_support.ts';

const { request, response } = ADD_PARTITIONS_TO_TXN;

// above 2^32, to check the int64 layout
const PRODUCER_ID = 2 ** 40 + 5;

/** The client form's fields as a v4+ request decodes them (absent: their zero values). */
const NO_CLIENT_FORM = {
  v3_and_below_transactional_id: '',
  v3_and_below_producer_id: 0,
  v3_and_below_producer_epoch: 0,
  v3_and_below_topics: [],
};

function request_samples(v: number) {
  const topics = [
    { name: 'orders', partitions: [0, 3, 7] },
    { name: 'audit', partitions: [1] },
  ];
  if (v >= 4) {
    return [
      // a partition leader batching two transactions: one to enroll, one only to verify
      {
        transactions: [
          {
            transactional_id: 'txn-payments-1',
            producer_id: PRODUCER_ID,
            producer_epoch: 4,
            verify_only: false,
            topics,
          },
          {
            transactional_id: 'txn-billing-7',
            producer_id: 7001,
            producer_epoch: 0,
            verify_only: true,
            topics: [{ name: 'invoices', partitions: [2] }],
          },
        ],
        ...NO_CLIENT_FORM,
      },
      { transactions: [], ...NO_CLIENT_FORM },
    ];
  }
  const client = {
    transactions: [],
    v3_and_below_transactional_id: 'txn-payments-1',
    v3_and_below_producer_id: PRODUCER_ID,
    v3_and_below_producer_epoch: 4,
  };
  return [
    { ...client, v3_and_below_topics: topics },
    { ...client, v3_and_below_topics: [] },
  ];
}

function response_samples(v: number) {
  const topic_results = [
    {
      name: 'orders',
      results_by_partition: [
        { partition_index: 0, partition_error_code: 0 },
        { partition_index: 3, partition_error_code: 51 }, // CONCURRENT_TRANSACTIONS
      ],
    },
    { name: 'audit', results_by_partition: [{ partition_index: 1, partition_error_code: 3 }] },
  ];
  if (v >= 4) {
    return [
      {
        throttle_time_ms: 0,
        error_code: 0,
        results_by_transaction: [
          { transactional_id: 'txn-payments-1', topic_results },
          { transactional_id: 'txn-billing-7', topic_results: [] },
        ],
        results_by_topic_v3_and_below: [],
      },
      // the whole batch refused: CLUSTER_AUTHORIZATION_FAILED
      { throttle_time_ms: 0, error_code: 31, results_by_transaction: [], results_by_topic_v3_and_below: [] },
    ];
  }
  return [
    { throttle_time_ms: 12, error_code: 0, results_by_transaction: [], results_by_topic_v3_and_below: topic_results },
  ];
}

test('AddPartitionsToTxn: version ranges', () => {
  assert.equal(request.valid_versions, '0-5');
  assert.equal(response.valid_versions, '0-5');
  assert.equal(request.flexible_versions, '3+');
  assert.equal(response.flexible_versions, '3+');
});

test('AddPartitionsToTxn request round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(request, request_samples), [0, 1, 2, 3, 4, 5]);
});

test('AddPartitionsToTxn response round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(response, response_samples), [0, 1, 2, 3, 4, 5]);
});

test('AddPartitionsToTxn request: hand-computed layouts', () => {
  const client = {
    transactions: [],
    v3_and_below_transactional_id: 't',
    v3_and_below_producer_id: PRODUCER_ID,
    v3_and_below_producer_epoch: 4,
    v3_and_below_topics: [{ name: 'o', partitions: [1] }],
  };
  // v2: int16 string lengths, int32 array counts
  assert.deepEqual(
    assert_round_trip(request, 2, client),
    hex('0001 74', '0000010000000005', '0004', '00000001', '0001 6f', '00000001 00000001'),
  );
  // v3: the same fields, compact, with a tag section per topic and for the body
  assert.deepEqual(
    assert_round_trip(request, 3, client),
    hex('02 74', '0000010000000005', '0004', '02', '02 6f', '02 00000001', '00', '00'),
  );
  // v4: only the batch of transactions; verify_only after the epoch
  const batch = {
    transactions: [
      {
        transactional_id: 't',
        producer_id: PRODUCER_ID,
        producer_epoch: 4,
        verify_only: true,
        topics: [{ name: 'o', partitions: [1] }],
      },
    ],
    ...NO_CLIENT_FORM,
  };
  assert.deepEqual(
    assert_round_trip(request, 4, batch),
    hex('02', '02 74', '0000010000000005', '0004', '01', '02', '02 6f', '02 00000001', '00', '00', '00'),
  );
  // a missing verify_only is written as false
  assert.deepEqual(
    encode(request, 5, {
      transactions: [{ transactional_id: 't', producer_id: 1, producer_epoch: 0, topics: [] }],
    }),
    hex('02', '02 74', '0000000000000001', '0000', '00', '01', '00', '00'),
  );
});

test('AddPartitionsToTxn response: hand-computed layouts', () => {
  const results = [{ name: 'o', results_by_partition: [{ partition_index: 1, partition_error_code: 51 }] }];
  const client = {
    throttle_time_ms: 0,
    error_code: 0,
    results_by_transaction: [],
    results_by_topic_v3_and_below: results,
  };
  assert.deepEqual(
    assert_round_trip(response, 0, client),
    hex('00000000', '00000001', '0001 6f', '00000001', '00000001', '0033'),
  );
  assert.deepEqual(
    assert_round_trip(response, 3, client),
    hex('00000000', '02', '02 6f', '02', '00000001', '0033', '00', '00', '00'),
  );
  // v4: the top-level error code, then the results per transaction
  const batch = {
    throttle_time_ms: 0,
    error_code: 0,
    results_by_transaction: [{ transactional_id: 't', topic_results: results }],
    results_by_topic_v3_and_below: [],
  };
  assert.deepEqual(
    assert_round_trip(response, 4, batch),
    hex('00000000', '0000', '02', '02 74', '02', '02 6f', '02', '00000001', '0033', '00', '00', '00', '00'),
  );
});

test('AddPartitionsToTxn: unknown tagged fields in a flexible version are skipped', () => {
  // v3 response with an unknown tag (2, 1 byte) on the topic
  assert.deepEqual(decode(response, 3, hex('00000000', '02', '02 6f', '01', '01 02 01 ff', '00')), {
    throttle_time_ms: 0,
    error_code: 0,
    results_by_transaction: [],
    results_by_topic_v3_and_below: [{ name: 'o', results_by_partition: [] }],
  });
});
