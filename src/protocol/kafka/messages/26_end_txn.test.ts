import { test } from 'node:test';
import assert from 'node:assert/strict';
import { END_TXN } from './26_end_txn.ts';
import { assert_round_trip, assert_round_trips_in_every_version, decode, encode, hex } from './test_support.ts';

const { request, response } = END_TXN;

// above 2^32, to check the int64 layout
const PRODUCER_ID = 2 ** 40 + 5;

function request_samples(_v: number) {
  return [
    { transactional_id: 'txn-payments-1', producer_id: PRODUCER_ID, producer_epoch: 4, committed: true },
    { transactional_id: 'etl-orders-0', producer_id: 7001, producer_epoch: 0, committed: false },
  ];
}

function response_samples(v: number) {
  return [
    // from v5 the epoch after the bump
    { throttle_time_ms: 0, error_code: 0, producer_id: v >= 5 ? PRODUCER_ID : -1, producer_epoch: v >= 5 ? 5 : -1 },
    { throttle_time_ms: 10, error_code: 48, producer_id: -1, producer_epoch: -1 }, // INVALID_TXN_STATE
  ];
}

test('EndTxn: version ranges', () => {
  assert.equal(request.valid_versions, '0-5');
  assert.equal(response.valid_versions, '0-5');
  assert.equal(request.flexible_versions, '3+');
  assert.equal(response.flexible_versions, '3+');
});

test('EndTxn request round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(request, request_samples), [0, 1, 2, 3, 4, 5]);
});

test('EndTxn response round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(response, response_samples), [0, 1, 2, 3, 4, 5]);
});

test('EndTxn: hand-computed layouts', () => {
  const value = { transactional_id: 't', producer_id: PRODUCER_ID, producer_epoch: 4, committed: true };
  assert.deepEqual(assert_round_trip(request, 1, value), hex('0001 74', '0000010000000005', '0004', '01'));
  assert.deepEqual(
    assert_round_trip(request, 3, { ...value, committed: false }),
    hex('02 74', '0000010000000005', '0004', '00', '00'),
  );
  const reply = { throttle_time_ms: 0, error_code: 0, producer_id: PRODUCER_ID, producer_epoch: 5 };
  // before v5 the producer id and epoch are not on the wire
  assert.deepEqual(encode(response, 2, reply), hex('00000000', '0000'));
  assert.deepEqual(encode(response, 4, reply), hex('00000000', '0000', '00'));
  assert.deepEqual(assert_round_trip(response, 5, reply), hex('00000000', '0000', '0000010000000005', '0005', '00'));
  // and decode as -1
  assert.deepEqual(decode(response, 4, hex('00000000', '0033', '00')), {
    throttle_time_ms: 0,
    error_code: 51,
    producer_id: -1,
    producer_epoch: -1,
  });
});

test('EndTxn: unknown tagged fields in a flexible version are skipped', () => {
  assert.deepEqual(decode(request, 5, hex('02 74', '0000000000000001', '0000', '01', '01 03 01 00')), {
    transactional_id: 't',
    producer_id: 1,
    producer_epoch: 0,
    committed: true,
  });
});
