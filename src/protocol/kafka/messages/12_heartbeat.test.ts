import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HEARTBEAT } from './12_heartbeat.ts';
import { assert_round_trip, assert_round_trips_in_every_version, decode, hex } from './test_support.ts';

const { request, response } = HEARTBEAT;

function request_samples(v: number) {
  const dynamic_member = {
    group_id: 'payments-consumers',
    generation_id: 3,
    member_id: 'rdkafka-5c0e6f7a-1d2b-4c3d-9e8f-0a1b2c3d4e5f',
    group_instance_id: null,
  };
  return v >= 3 ? [dynamic_member, { ...dynamic_member, group_instance_id: 'payments-pod-0' }] : [dynamic_member];
}

function response_samples(v: number) {
  return [
    { throttle_time_ms: v >= 1 ? 100 : 0, error_code: 0 },
    { throttle_time_ms: 0, error_code: 27 },
  ];
}

test('Heartbeat: version ranges', () => {
  assert.equal(request.valid_versions, '0-4');
  assert.equal(response.valid_versions, '0-4');
  assert.equal(request.flexible_versions, '4+');
  assert.equal(response.flexible_versions, '4+');
});

test('Heartbeat request round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(request, request_samples), [0, 1, 2, 3, 4]);
});

test('Heartbeat response round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(response, response_samples), [0, 1, 2, 3, 4]);
});

test('Heartbeat: hand-computed layouts', () => {
  const value = { group_id: 'g', generation_id: 3, member_id: 'm', group_instance_id: null };
  assert.deepEqual(assert_round_trip(request, 0, value), hex('0001 67', '00000003', '0001 6d'));
  // v3: a nullable instance id (int16 -1 when null)
  assert.deepEqual(assert_round_trip(request, 3, value), hex('0001 67', '00000003', '0001 6d', 'ffff'));
  assert.deepEqual(
    assert_round_trip(request, 4, { ...value, group_instance_id: 'i' }),
    hex('02 67', '00000003', '02 6d', '02 69', '00'),
  );
  assert.deepEqual(assert_round_trip(response, 0, { throttle_time_ms: 0, error_code: 27 }), hex('001b'));
  assert.deepEqual(
    assert_round_trip(response, 4, { throttle_time_ms: 100, error_code: 27 }),
    hex('00000064', '001b', '00'),
  );
});

test('Heartbeat: unknown tagged fields in a flexible version are skipped', () => {
  assert.deepEqual(decode(response, 4, hex('00000064', '001b', '02 00 01 ff 03 02 abcd')), {
    throttle_time_ms: 100,
    error_code: 27,
  });
});
