import { test } from 'node:test';
import assert from 'node:assert/strict';
import { INIT_PRODUCER_ID } from './22_init_producer_id.ts';
import { assert_round_trip, assert_round_trips_in_every_version, decode, hex } from './test_support.ts';

const { request, response } = INIT_PRODUCER_ID;

// above 2^32, to check the int64 layout
const PRODUCER_ID = 2 ** 40 + 5;

function request_samples(v: number) {
  return [
    // a transactional producer, resuming its id and epoch from v3
    {
      transactional_id: 'txn-payments-1',
      transaction_timeout_ms: 60_000,
      producer_id: v >= 3 ? PRODUCER_ID : -1,
      producer_epoch: v >= 3 ? 4 : -1,
    },
    // an idempotent producer
    { transactional_id: null, transaction_timeout_ms: 2_147_483_647, producer_id: -1, producer_epoch: -1 },
  ];
}

function response_samples(_v: number) {
  return [
    { throttle_time_ms: 0, error_code: 0, producer_id: PRODUCER_ID, producer_epoch: 5 },
    { throttle_time_ms: 20, error_code: 47, producer_id: -1, producer_epoch: -1 },
  ];
}

test('InitProducerId: version ranges', () => {
  assert.equal(request.valid_versions, '0-5');
  assert.equal(response.valid_versions, '0-5');
  assert.equal(request.flexible_versions, '2+');
  assert.equal(response.flexible_versions, '2+');
});

test('InitProducerId request round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(request, request_samples), [0, 1, 2, 3, 4, 5]);
});

test('InitProducerId response round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(response, response_samples), [0, 1, 2, 3, 4, 5]);
});

test('InitProducerId: hand-computed layouts', () => {
  // v1: null transactional id (int16 -1) and the timeout
  assert.deepEqual(
    assert_round_trip(request, 1, {
      transactional_id: null,
      transaction_timeout_ms: 60_000,
      producer_id: -1,
      producer_epoch: -1,
    }),
    hex('ffff', '0000ea60'),
  );
  // v3: compact id, then the producer id and epoch to resume
  assert.deepEqual(
    assert_round_trip(request, 3, {
      transactional_id: 't',
      transaction_timeout_ms: 60_000,
      producer_id: PRODUCER_ID,
      producer_epoch: 4,
    }),
    hex('02 74', '0000ea60', '0000010000000005', '0004', '00'),
  );
  // a missing producer id and epoch take their default of -1
  const defaults = decode(request, 3, hex('00', '0000ea60', 'ffffffffffffffff', 'ffff', '00'));
  assert.deepEqual(defaults, {
    transactional_id: null,
    transaction_timeout_ms: 60_000,
    producer_id: -1,
    producer_epoch: -1,
  });
  const reply = { throttle_time_ms: 0, error_code: 0, producer_id: PRODUCER_ID, producer_epoch: 5 };
  assert.deepEqual(assert_round_trip(response, 1, reply), hex('00000000', '0000', '0000010000000005', '0005'));
  assert.deepEqual(assert_round_trip(response, 2, reply), hex('00000000', '0000', '0000010000000005', '0005', '00'));
});

test('InitProducerId: unknown tagged fields in a flexible version are skipped', () => {
  assert.deepEqual(
    decode(response, 5, hex('00000000', '0000', '0000010000000005', '0005', '01 06 0a 00000000000000000000')),
    {
      throttle_time_ms: 0,
      error_code: 0,
      producer_id: PRODUCER_ID,
      producer_epoch: 5,
    },
  );
});
