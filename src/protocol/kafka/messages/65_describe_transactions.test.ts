import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DESCRIBE_TRANSACTIONS } from './65_describe_transactions.ts';
import { assert_round_trip, assert_round_trips_in_every_version, decode, hex } from './test_support.ts';

const { request, response } = DESCRIBE_TRANSACTIONS;

// above 2^32, to check the int64 layout
const PRODUCER_ID = 2 ** 40 + 5;

test('DescribeTransactions: version ranges', () => {
  assert.equal(request.valid_versions, '0');
  assert.equal(response.valid_versions, '0');
  assert.equal(request.flexible_versions, '0+');
  assert.equal(response.flexible_versions, '0+');
});

test('DescribeTransactions round-trips: an open transaction, an unknown id and nothing asked', () => {
  assert.deepEqual(
    assert_round_trips_in_every_version(request, () => [
      { transactional_ids: ['txn-payments-1', 'etl-orders-0'] },
      { transactional_ids: [] },
    ]),
    [0],
  );
  assert.deepEqual(
    assert_round_trips_in_every_version(response, () => [
      {
        throttle_time_ms: 0,
        transaction_states: [
          {
            error_code: 0,
            transactional_id: 'txn-payments-1',
            transaction_state: 'Ongoing',
            transaction_timeout_ms: 60_000,
            transaction_start_time_ms: 1_700_000_000_123,
            producer_id: PRODUCER_ID,
            producer_epoch: 4,
            topics: [
              { topic: 'orders', partitions: [0, 3] },
              { topic: '__consumer_offsets', partitions: [17] },
            ],
          },
          {
            error_code: 105, // TRANSACTIONAL_ID_NOT_FOUND
            transactional_id: 'etl-orders-0',
            transaction_state: '',
            transaction_timeout_ms: 0,
            transaction_start_time_ms: -1,
            producer_id: -1,
            producer_epoch: -1,
            topics: [],
          },
        ],
      },
      { throttle_time_ms: 20, transaction_states: [] },
    ]),
    [0],
  );
});

test('DescribeTransactions: hand-computed layouts (every version is flexible)', () => {
  // compact array of compact strings, body tags
  assert.deepEqual(assert_round_trip(request, 0, { transactional_ids: ['t', 'u'] }), hex('03', '02 74', '02 75', '00'));
  const state = {
    error_code: 0,
    transactional_id: 't',
    transaction_state: 'Ongoing',
    transaction_timeout_ms: 60_000,
    transaction_start_time_ms: 256,
    producer_id: PRODUCER_ID,
    producer_epoch: 4,
    topics: [{ topic: 'o', partitions: [1] }],
  };
  assert.deepEqual(
    assert_round_trip(response, 0, { throttle_time_ms: 0, transaction_states: [state] }),
    hex(
      '00000000',
      '02',
      '0000',
      '02 74',
      '08 4f6e676f696e67',
      '0000ea60',
      '0000000000000100',
      '0000010000000005',
      '0004',
      '02',
      '02 6f',
      '02 00000001',
      '00',
      '00',
      '00',
    ),
  );
});

test('DescribeTransactions: unknown tagged fields are skipped', () => {
  assert.deepEqual(decode(request, 0, hex('02', '02 74', '01 00 01 ff')), { transactional_ids: ['t'] });
});
