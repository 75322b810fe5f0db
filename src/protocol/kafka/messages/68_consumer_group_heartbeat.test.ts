import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CONSUMER_GROUP_HEARTBEAT } from './68_consumer_group_heartbeat.ts';
import { CONSUMER_GROUP_DESCRIBE } from './69_consumer_group_describe.ts';
import { assert_round_trip, assert_round_trips_in_every_version, decode, hex, uuid } from './test_support.ts';

const { request, response } = CONSUMER_GROUP_HEARTBEAT;
const PAYMENTS_ID = uuid('5c1e2d3f405162738495a6b7c8d9eaf0');
const MEMBER_ID = 'b9a1c2d3-0000-4e5f-8a9b-0c1d2e3f4a5b';

function request_samples(v: number) {
  return [
    {
      group_id: 'billing',
      member_id: MEMBER_ID,
      member_epoch: 0,
      instance_id: 'billing-1',
      rack_id: 'rack-a',
      rebalance_timeout_ms: 30_000,
      subscribed_topic_names: ['payments'],
      subscribed_topic_regex: null,
      server_assignor: 'uniform',
      topic_partitions: [],
    },
    {
      group_id: 'billing',
      member_id: MEMBER_ID,
      member_epoch: 4,
      instance_id: null,
      rack_id: null,
      rebalance_timeout_ms: -1,
      subscribed_topic_names: null,
      // v0 cannot carry a regex: it decodes as null
      subscribed_topic_regex: v >= 1 ? 'pay.*' : null,
      server_assignor: null,
      topic_partitions: [{ topic_id: PAYMENTS_ID, partitions: [0, 2] }],
    },
  ];
}

function response_samples(_v: number) {
  return [
    {
      throttle_time_ms: 0,
      error_code: 0,
      error_message: null,
      member_id: MEMBER_ID,
      member_epoch: 5,
      heartbeat_interval_ms: 5000,
      assignment: { topic_partitions: [{ topic_id: PAYMENTS_ID, partitions: [0, 1] }] },
    },
    {
      throttle_time_ms: 0,
      error_code: 110,
      error_message: 'fenced',
      member_id: null,
      member_epoch: -1,
      heartbeat_interval_ms: 0,
      assignment: null,
    },
  ];
}

test('ConsumerGroupHeartbeat request and response round-trip in versions 0 and 1', () => {
  assert.deepEqual(assert_round_trips_in_every_version(request, request_samples), [0, 1]);
  assert.deepEqual(assert_round_trips_in_every_version(response, response_samples), [0, 1]);
});

test('ConsumerGroupHeartbeat: v1 carries the regex after the topic names', () => {
  const body = {
    group_id: 'g',
    member_id: 'm',
    member_epoch: 1,
    instance_id: null,
    rack_id: null,
    rebalance_timeout_ms: -1,
    subscribed_topic_names: null,
    subscribed_topic_regex: 'x',
    server_assignor: null,
    topic_partitions: null,
  };
  assert.deepEqual(
    assert_round_trip(request, 1, body),
    hex('02 67', '02 6d', '00000001', '00', '00', 'ffffffff', '00', '02 78', '00', '00', '00'),
  );
  // v0 has no regex: it decodes as null
  assert.deepEqual(
    decode(request, 0, hex('02 67', '02 6d', '00000001', '00', '00', 'ffffffff', '00', '00', '00', '00')),
    { ...body, subscribed_topic_regex: null },
  );
});

test('ConsumerGroupDescribe round-trips', () => {
  const group = {
    error_code: 0,
    error_message: null,
    group_id: 'billing',
    group_state: 'Reconciling',
    group_epoch: 7,
    assignment_epoch: 7,
    assignor_name: 'uniform',
    members: [
      {
        member_id: MEMBER_ID,
        instance_id: null,
        rack_id: null,
        member_epoch: 6,
        client_id: 'c',
        client_host: '/127.0.0.1',
        subscribed_topic_names: ['payments'],
        subscribed_topic_regex: null,
        assignment: { topic_partitions: [{ topic_id: PAYMENTS_ID, topic_name: 'payments', partitions: [0] }] },
        target_assignment: { topic_partitions: [] },
      },
    ],
    authorized_operations: -2147483648,
  };
  assert.deepEqual(
    assert_round_trips_in_every_version(CONSUMER_GROUP_DESCRIBE.response, () => [
      { throttle_time_ms: 0, groups: [group] },
    ]),
    [0],
  );
});
