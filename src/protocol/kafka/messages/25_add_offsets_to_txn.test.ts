import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ADD_OFFSETS_TO_TXN } from './25_add_offsets_to_txn.ts';
import { assert_round_trip, assert_round_trips_in_every_version, decode, hex } from './test_support.ts';

const { request, response } = ADD_OFFSETS_TO_TXN;

// above 2^32, to check the int64 layout
const PRODUCER_ID = 2 ** 40 + 5;

function request_samples(_v: number) {
  return [
    { transactional_id: 'txn-payments-1', producer_id: PRODUCER_ID, producer_epoch: 4, group_id: 'payments-consumers' },
    { transactional_id: 'etl-orders-0', producer_id: 0, producer_epoch: 32_767, group_id: '' },
  ];
}

function response_samples(_v: number) {
  return [
    { throttle_time_ms: 0, error_code: 0 },
    { throttle_time_ms: 25, error_code: 90 }, // PRODUCER_FENCED
  ];
}

test('AddOffsetsToTxn: version ranges', () => {
  assert.equal(request.valid_versions, '0-4');
  assert.equal(response.valid_versions, '0-4');
  assert.equal(request.flexible_versions, '3+');
  assert.equal(response.flexible_versions, '3+');
});

test('AddOffsetsToTxn request round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(request, request_samples), [0, 1, 2, 3, 4]);
});

test('AddOffsetsToTxn response round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(response, response_samples), [0, 1, 2, 3, 4]);
});

test('AddOffsetsToTxn: hand-computed layouts', () => {
  const value = { transactional_id: 't', producer_id: PRODUCER_ID, producer_epoch: 4, group_id: 'g' };
  assert.deepEqual(assert_round_trip(request, 2, value), hex('0001 74', '0000010000000005', '0004', '0001 67'));
  assert.deepEqual(assert_round_trip(request, 3, value), hex('02 74', '0000010000000005', '0004', '02 67', '00'));
  const reply = { throttle_time_ms: 25, error_code: 90 };
  assert.deepEqual(assert_round_trip(response, 0, reply), hex('00000019', '005a'));
  assert.deepEqual(assert_round_trip(response, 4, reply), hex('00000019', '005a', '00'));
});

test('AddOffsetsToTxn: unknown tagged fields in a flexible version are skipped', () => {
  assert.deepEqual(decode(response, 3, hex('00000000', '0000', '01 04 02 abcd')), {
    throttle_time_ms: 0,
    error_code: 0,
  });
});
