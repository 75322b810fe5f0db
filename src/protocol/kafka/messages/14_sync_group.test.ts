import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SYNC_GROUP } from './14_sync_group.ts';
import { assert_round_trip, assert_round_trips_in_every_version, decode, hex } from './test_support.ts';

const { request, response } = SYNC_GROUP;

// consumer protocol assignments (version, topic partitions, user data), opaque to the broker
const ASSIGNMENT_A = hex('0001', '00000001', '0006 6f7264657273', '00000002 00000000 00000001', 'ffffffff');
const ASSIGNMENT_B = hex('0001', '00000001', '0006 6f7264657273', '00000001 00000002', 'ffffffff');

function request_samples(v: number) {
  const leader = {
    group_id: 'payments-consumers',
    generation_id: 3,
    member_id: 'consumer-1-a',
    group_instance_id: v >= 3 ? 'payments-pod-0' : null,
    protocol_type: v >= 5 ? 'consumer' : null,
    protocol_name: v >= 5 ? 'range' : null,
    assignments: [
      { member_id: 'consumer-1-a', assignment: ASSIGNMENT_A },
      { member_id: 'consumer-2-b', assignment: ASSIGNMENT_B },
    ],
  };
  const follower = { ...leader, member_id: 'consumer-2-b', group_instance_id: null, assignments: [] };
  return [leader, follower];
}

function response_samples(v: number) {
  return [
    {
      throttle_time_ms: v >= 1 ? 3 : 0,
      error_code: 0,
      protocol_type: v >= 5 ? 'consumer' : null,
      protocol_name: v >= 5 ? 'range' : null,
      assignment: ASSIGNMENT_A,
    },
    { throttle_time_ms: 0, error_code: 27, protocol_type: null, protocol_name: null, assignment: Buffer.alloc(0) },
  ];
}

test('SyncGroup: version ranges', () => {
  assert.equal(request.valid_versions, '0-5');
  assert.equal(response.valid_versions, '0-5');
  assert.equal(request.flexible_versions, '4+');
  assert.equal(response.flexible_versions, '4+');
});

test('SyncGroup request round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(request, request_samples), [0, 1, 2, 3, 4, 5]);
});

test('SyncGroup response round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(response, response_samples), [0, 1, 2, 3, 4, 5]);
});

test('SyncGroup: hand-computed layouts', () => {
  const value = {
    group_id: 'g',
    generation_id: 3,
    member_id: 'm',
    group_instance_id: null,
    protocol_type: null,
    protocol_name: null,
    assignments: [{ member_id: 'm', assignment: hex('abcd') }],
  };
  assert.deepEqual(
    assert_round_trip(request, 0, value),
    hex('0001 67', '00000003', '0001 6d', '00000001', '0001 6d', '00000002 abcd'),
  );
  // v5: protocol type and name between the instance id and the assignments
  assert.deepEqual(
    assert_round_trip(request, 5, { ...value, protocol_type: 'consumer', protocol_name: 'range' }),
    hex(
      '02 67',
      '00000003',
      '02 6d',
      '00',
      '09 636f6e73756d6572',
      '06 72616e6765',
      '02',
      '02 6d',
      '03 abcd',
      '00',
      '00',
    ),
  );
  const reply = {
    throttle_time_ms: 3,
    error_code: 0,
    protocol_type: null,
    protocol_name: null,
    assignment: hex('abcd'),
  };
  assert.deepEqual(assert_round_trip(response, 0, { ...reply, throttle_time_ms: 0 }), hex('0000', '00000002 abcd'));
  assert.deepEqual(assert_round_trip(response, 4, reply), hex('00000003', '0000', '03 abcd', '00'));
  assert.deepEqual(assert_round_trip(response, 5, reply), hex('00000003', '0000', '00', '00', '03 abcd', '00'));
});

test('SyncGroup: unknown tagged fields in a flexible version are skipped', () => {
  assert.deepEqual(decode(response, 4, hex('00000003', '0000', '03 abcd', '01 04 03 010203')), {
    throttle_time_ms: 3,
    error_code: 0,
    protocol_type: null,
    protocol_name: null,
    assignment: hex('abcd'),
  });
});
