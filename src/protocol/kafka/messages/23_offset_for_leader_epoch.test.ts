import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OFFSET_FOR_LEADER_EPOCH } from './23_offset_for_leader_epoch.ts';
import { assert_round_trips_in_every_version, decode, encode, hex } from './test_support.ts';

const { request, response } = OFFSET_FOR_LEADER_EPOCH;

function request_samples(v: number) {
  return [
    {
      // -2 (the default) marks a client; followers send their broker id.
      replica_id: v >= 3 ? 3 : -2,
      topics: [
        {
          topic: 'orders',
          partitions: [
            { partition: 0, current_leader_epoch: v >= 2 ? 7 : -1, leader_epoch: 5 },
            { partition: 1, current_leader_epoch: v >= 2 ? 7 : -1, leader_epoch: 6 },
          ],
        },
        { topic: 'audit', partitions: [{ partition: 2, current_leader_epoch: -1, leader_epoch: 0 }] },
      ],
    },
    { replica_id: -2, topics: [] },
  ];
}

function response_samples(v: number) {
  return [
    {
      throttle_time_ms: v >= 2 ? 20 : 0,
      topics: [
        {
          topic: 'orders',
          partitions: [
            { error_code: 0, partition: 0, leader_epoch: v >= 1 ? 5 : -1, end_offset: 1180 },
            { error_code: 74, partition: 1, leader_epoch: -1, end_offset: -1 }, // FENCED_LEADER_EPOCH
          ],
        },
      ],
    },
  ];
}

test('OffsetForLeaderEpoch: version ranges', () => {
  assert.equal(request.valid_versions, '0-4');
  assert.equal(response.valid_versions, '0-4');
  assert.equal(request.flexible_versions, '4+');
});

test('OffsetForLeaderEpoch request round-trips in every version', () => {
  assert.equal(assert_round_trips_in_every_version(request, request_samples).length, 5);
});

test('OffsetForLeaderEpoch response round-trips in every version', () => {
  assert.equal(assert_round_trips_in_every_version(response, response_samples).length, 5);
});

test('OffsetForLeaderEpoch: hand-computed layouts', () => {
  const value = {
    replica_id: 1,
    topics: [{ topic: 't', partitions: [{ partition: 0, current_leader_epoch: 2, leader_epoch: 1 }] }],
  };
  // v0: topic, partition, leader epoch.
  assert.deepEqual(encode(request, 0, value), hex('00000001', '0001 74', '00000001', '00000000', '00000001'));
  // v3: replica id first, current leader epoch before the leader epoch.
  assert.deepEqual(
    encode(request, 3, value),
    hex('00000001', '00000001', '0001 74', '00000001', '00000000', '00000002', '00000001'),
  );
  // v4 (flexible): compact counts and name, three tag sections; a missing replica id is -2.
  assert.deepEqual(
    encode(request, 4, { topics: value.topics }),
    hex('fffffffe', '02', '02 74', '02', '00000000', '00000002', '00000001', '00', '00', '00'),
  );
  // Response v0: error, partition, end offset (no leader epoch yet); decodes it as -1.
  const r0 = hex('00000001', '0001 74', '00000001', '0000', '00000000', '0000000000000064');
  const decoded = decode(response, 0, r0) as { topics: Array<{ partitions: Array<Record<string, unknown>> }> };
  assert.deepEqual(decoded.topics[0]!.partitions[0], {
    error_code: 0,
    partition: 0,
    leader_epoch: -1,
    end_offset: 100,
  });
  assert.deepEqual(encode(response, 0, decoded), r0);
});
