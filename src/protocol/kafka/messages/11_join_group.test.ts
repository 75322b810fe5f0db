import { test } from 'node:test';
import assert from 'node:assert/strict';
import { JOIN_GROUP } from './11_join_group.ts';
import { assert_round_trip, assert_round_trips_in_every_version, decode, hex } from './test_support.ts';

const { request, response } = JOIN_GROUP;

// consumer protocol subscription and assignment blobs, opaque to the broker
const RANGE_METADATA = hex('0001', '00000002', '0006 6f7264657273', '0005 6175646974', 'ffffffff');
const STICKY_METADATA = hex(
  '0003',
  '00000001',
  '0006 6f7264657273',
  '00000004 00000001',
  '00000000',
  '00000000',
  'ffff',
  'ffffffff',
);

function request_samples(v: number) {
  const first_join = {
    group_id: 'payments-consumers',
    session_timeout_ms: 45_000,
    rebalance_timeout_ms: v >= 1 ? 300_000 : -1,
    member_id: '',
    group_instance_id: v >= 5 ? 'payments-pod-0' : null,
    protocol_type: 'consumer',
    protocols: [
      { name: 'range', metadata: RANGE_METADATA },
      { name: 'cooperative-sticky', metadata: STICKY_METADATA },
    ],
    reason: v >= 8 ? 'rebalance failed due to MemberIdRequiredException' : null,
  };
  const rejoin = {
    ...first_join,
    member_id: 'rdkafka-5c0e6f7a-1d2b-4c3d-9e8f-0a1b2c3d4e5f',
    group_instance_id: null,
    reason: null,
  };
  return [first_join, rejoin];
}

function response_samples(v: number) {
  const leader = {
    throttle_time_ms: v >= 2 ? 5 : 0,
    error_code: 0,
    generation_id: 3,
    protocol_type: v >= 7 ? 'consumer' : null,
    protocol_name: 'range',
    leader: 'consumer-1-a',
    skip_assignment: false,
    member_id: 'consumer-1-a',
    members: [
      { member_id: 'consumer-1-a', group_instance_id: v >= 5 ? 'payments-pod-0' : null, metadata: RANGE_METADATA },
      { member_id: 'consumer-2-b', group_instance_id: null, metadata: Buffer.alloc(0) },
    ],
  };
  const member_id_required = {
    throttle_time_ms: 0,
    error_code: 79,
    generation_id: -1,
    protocol_type: null,
    protocol_name: v >= 7 ? null : '',
    leader: '',
    skip_assignment: false,
    member_id: 'consumer-3-c',
    members: [],
  };
  // v9: a static leader whose assignment the coordinator already has
  return v >= 9 ? [leader, member_id_required, { ...leader, skip_assignment: true }] : [leader, member_id_required];
}

test('JoinGroup: version ranges', () => {
  assert.equal(request.valid_versions, '0-9');
  assert.equal(response.valid_versions, '0-9');
  assert.equal(request.flexible_versions, '6+');
  assert.equal(response.flexible_versions, '6+');
});

test('JoinGroup request round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(request, request_samples), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
});

test('JoinGroup response round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(response, response_samples), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
});

test('JoinGroup: hand-computed layouts', () => {
  const value = {
    group_id: 'g',
    session_timeout_ms: 45_000,
    rebalance_timeout_ms: 300_000,
    member_id: '',
    group_instance_id: null,
    protocol_type: 'consumer',
    protocols: [{ name: 'range', metadata: hex('0001') }],
    reason: null,
  };
  // v0: no rebalance timeout; bytes carry an int32 length
  assert.deepEqual(
    assert_round_trip(request, 0, { ...value, rebalance_timeout_ms: -1 }),
    hex('0001 67', '0000afc8', '0000', '0008 636f6e73756d6572', '00000001', '0005 72616e6765', '00000002 0001'),
  );
  // v6: compact strings and bytes, null instance id = 0
  assert.deepEqual(
    assert_round_trip(request, 6, value),
    hex(
      '02 67',
      '0000afc8',
      '000493e0',
      '01',
      '00',
      '09 636f6e73756d6572',
      '02',
      '06 72616e6765',
      '03 0001',
      '00',
      '00',
    ),
  );
  // response v1: no throttle time; error, generation, protocol, leader, member, members
  const reply = {
    throttle_time_ms: 0,
    error_code: 0,
    generation_id: 1,
    protocol_type: null,
    protocol_name: 'r',
    leader: 'a',
    skip_assignment: false,
    member_id: 'a',
    members: [{ member_id: 'a', group_instance_id: null, metadata: hex('ff') }],
  };
  assert.deepEqual(
    assert_round_trip(response, 1, reply),
    hex('0000', '00000001', '0001 72', '0001 61', '0001 61', '00000001', '0001 61', '00000001 ff'),
  );
  // response v9: protocol type before the name, skip_assignment after the leader
  assert.deepEqual(
    assert_round_trip(response, 9, { ...reply, protocol_type: 'consumer', skip_assignment: true }),
    hex(
      '00000000',
      '0000',
      '00000001',
      '09 636f6e73756d6572',
      '02 72',
      '02 61',
      '01',
      '02 61',
      '02',
      '02 61',
      '00',
      '02 ff',
      '00',
      '00',
    ),
  );
});

test('JoinGroup: unknown tagged fields in a flexible version are skipped', () => {
  const bytes = hex(
    '00000000',
    '0000',
    '00000001',
    '00',
    '00',
    '02 61',
    '02 61',
    '02',
    '02 61',
    '00',
    '01',
    '01 00 01 ff',
    '01 07 00',
  );
  assert.deepEqual(decode(response, 7, bytes), {
    throttle_time_ms: 0,
    error_code: 0,
    generation_id: 1,
    protocol_type: null,
    protocol_name: null,
    leader: 'a',
    skip_assignment: false,
    member_id: 'a',
    members: [{ member_id: 'a', group_instance_id: null, metadata: Buffer.alloc(0) }],
  });
});
