import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LIST_TRANSACTIONS } from './66_list_transactions.ts';
import { assert_round_trip, assert_round_trips_in_every_version, decode, encode, hex } from './test_support.ts';

const { request, response } = LIST_TRANSACTIONS;

// above 2^32, to check the int64 layout
const PRODUCER_ID = 2 ** 40 + 5;

function request_samples(v: number) {
  return [
    // ongoing transactions older than 15 minutes (v1+)
    { state_filters: ['Ongoing'], producer_id_filters: [], duration_filter: v >= 1 ? 900_000 : -1 },
    { state_filters: [], producer_id_filters: [PRODUCER_ID, 7001], duration_filter: -1 },
    { state_filters: [], producer_id_filters: [], duration_filter: -1 },
  ];
}

function response_samples(_v: number) {
  return [
    {
      throttle_time_ms: 0,
      error_code: 0,
      unknown_state_filters: ['Runing'],
      transaction_states: [
        { transactional_id: 'txn-payments-1', producer_id: PRODUCER_ID, transaction_state: 'Ongoing' },
        { transactional_id: 'etl-orders-0', producer_id: 7001, transaction_state: 'PrepareCommit' },
      ],
    },
    // COORDINATOR_LOAD_IN_PROGRESS
    { throttle_time_ms: 0, error_code: 14, unknown_state_filters: [], transaction_states: [] },
  ];
}

test('ListTransactions: version ranges', () => {
  assert.equal(request.valid_versions, '0-1');
  assert.equal(response.valid_versions, '0-1');
  assert.equal(request.flexible_versions, '0+');
  assert.equal(response.flexible_versions, '0+');
});

test('ListTransactions request round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(request, request_samples), [0, 1]);
});

test('ListTransactions response round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(response, response_samples), [0, 1]);
});

test('ListTransactions: hand-computed layouts (every version is flexible)', () => {
  const value = { state_filters: ['Empty'], producer_id_filters: [PRODUCER_ID], duration_filter: 60_000 };
  // v0: no duration filter
  assert.deepEqual(encode(request, 0, value), hex('02 06 456d707479', '02 0000010000000005', '00'));
  assert.deepEqual(
    assert_round_trip(request, 1, value),
    hex('02 06 456d707479', '02 0000010000000005', '000000000000ea60', '00'),
  );
  // a v0 request decodes with the duration filter off
  assert.equal(decode(request, 0, hex('01', '01', '00')).duration_filter, -1);
  assert.deepEqual(
    assert_round_trip(response, 1, {
      throttle_time_ms: 0,
      error_code: 0,
      unknown_state_filters: [],
      transaction_states: [{ transactional_id: 't', producer_id: PRODUCER_ID, transaction_state: 'Empty' }],
    }),
    hex('00000000', '0000', '01', '02', '02 74', '0000010000000005', '06 456d707479', '00', '00'),
  );
});

test('ListTransactions: unknown tagged fields are skipped', () => {
  assert.deepEqual(decode(response, 0, hex('00000000', '0000', '01', '01', '01 03 02 abcd')), {
    throttle_time_ms: 0,
    error_code: 0,
    unknown_state_filters: [],
    transaction_states: [],
  });
});
