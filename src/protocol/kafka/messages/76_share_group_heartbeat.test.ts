import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SHARE_GROUP_HEARTBEAT } from './76_share_group_heartbeat.ts';
import { assert_round_trip, assert_round_trips_in_every_version, decode, hex, uuid } from './test_support.ts';

const { request, response } = SHARE_GROUP_HEARTBEAT;
const ORDERS_ID = uuid('3f2b8c1e5a6d4f7e9b0c1d2e3f405162');
const AUDIT_ID = uuid('a1b2c3d4e5f60718293a4b5c6d7e8f90');
const MEMBER_ID = 'Jm4uX3bXQn2cX1dZ0VtZ4g';

function request_samples(_v: number) {
  return [
    // joining: epoch 0, full subscription and rack
    {
      group_id: 'invoice-workers',
      member_id: MEMBER_ID,
      member_epoch: 0,
      rack_id: 'us-east-1a',
      subscribed_topic_names: ['orders', 'audit'],
    },
    // steady state: nothing changed, so rack and subscription are null
    { group_id: 'invoice-workers', member_id: MEMBER_ID, member_epoch: 7, rack_id: null, subscribed_topic_names: null },
    // leaving
    { group_id: 'invoice-workers', member_id: MEMBER_ID, member_epoch: -1, rack_id: null, subscribed_topic_names: [] },
  ];
}

function response_samples(_v: number) {
  return [
    {
      throttle_time_ms: 0,
      error_code: 0,
      error_message: null,
      member_id: MEMBER_ID,
      member_epoch: 8,
      heartbeat_interval_ms: 5000,
      assignment: {
        topic_partitions: [
          { topic_id: ORDERS_ID, partitions: [0, 1, 2, 5] },
          { topic_id: AUDIT_ID, partitions: [3] },
        ],
      },
    },
    {
      throttle_time_ms: 0,
      error_code: 0,
      error_message: null,
      member_id: null,
      member_epoch: 8,
      heartbeat_interval_ms: 5000,
      assignment: null,
    },
    {
      throttle_time_ms: 0,
      error_code: 0,
      error_message: null,
      member_id: MEMBER_ID,
      member_epoch: 9,
      heartbeat_interval_ms: 5000,
      assignment: { topic_partitions: [] },
    },
    {
      throttle_time_ms: 12,
      error_code: 25, // UNKNOWN_MEMBER_ID
      error_message: 'The coordinator is not aware of this member.',
      member_id: null,
      member_epoch: -1,
      heartbeat_interval_ms: 0,
      assignment: null,
    },
  ];
}

test('ShareGroupHeartbeat: version ranges', () => {
  assert.equal(request.valid_versions, '1');
  assert.equal(response.valid_versions, '1');
  assert.equal(request.flexible_versions, '0+');
  assert.equal(response.flexible_versions, '0+');
});

test('ShareGroupHeartbeat request round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(request, request_samples), [1]);
});

test('ShareGroupHeartbeat response round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(response, response_samples), [1]);
});

test('ShareGroupHeartbeat: hand-computed layouts', () => {
  // compact strings g and m, epoch 0, null rack (compact 0), one subscribed topic t, no tags
  assert.deepEqual(
    assert_round_trip(request, 1, {
      group_id: 'g',
      member_id: 'm',
      member_epoch: 0,
      rack_id: null,
      subscribed_topic_names: ['t'],
    }),
    hex('02 67', '02 6d', '00000000', '00', '02 02 74', '00'),
  );
  // a null subscription is a compact array length of 0 (an empty one would be 01)
  assert.deepEqual(
    assert_round_trip(request, 1, {
      group_id: 'g',
      member_id: 'm',
      member_epoch: 3,
      rack_id: 'r',
      subscribed_topic_names: null,
    }),
    hex('02 67', '02 6d', '00000003', '02 72', '00', '00'),
  );
  // missing nullable fields default to null
  assert.deepEqual(decode(request, 1, hex('02 67', '02 6d', 'ffffffff', '00', '00', '00')), {
    group_id: 'g',
    member_id: 'm',
    member_epoch: -1,
    rack_id: null,
    subscribed_topic_names: null,
  });

  const topic_id = uuid('00112233445566778899aabbccddeeff');
  const reply = {
    throttle_time_ms: 0,
    error_code: 0,
    error_message: null,
    member_id: 'm',
    member_epoch: 1,
    heartbeat_interval_ms: 5000,
    assignment: { topic_partitions: [{ topic_id, partitions: [0, 1] }] },
  };
  // the assignment is a nullable struct: presence byte 01, then its array and its own (empty) tags
  assert.deepEqual(
    assert_round_trip(response, 1, reply),
    hex(
      '00000000',
      '0000',
      '00',
      '02 6d',
      '00000001',
      '00001388',
      '01',
      '02',
      '00112233445566778899aabbccddeeff',
      '03 00000000 00000001',
      '00',
      '00',
      '00',
    ),
  );
  assert.deepEqual(
    assert_round_trip(response, 1, { ...reply, member_id: null, assignment: null }),
    hex('00000000', '0000', '00', '00', '00000001', '00001388', 'ff', '00'),
  );
});

test('ShareGroupHeartbeat: unknown tagged fields are skipped', () => {
  assert.deepEqual(decode(request, 1, hex('02 67', '02 6d', '00000002', '00', '00', '01 05 02 abcd')), {
    group_id: 'g',
    member_id: 'm',
    member_epoch: 2,
    rack_id: null,
    subscribed_topic_names: null,
  });
});
