import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OFFSET_COMMIT } from './08_offset_commit.ts';
import { assert_round_trip, assert_round_trips_in_every_version, decode, encode, hex } from './test_support.ts';

const { request, response } = OFFSET_COMMIT;

function request_samples(v: number) {
  const partition = (partition_index: number, committed_offset: number, committed_metadata: string | null) => ({
    partition_index,
    committed_offset,
    committed_leader_epoch: v >= 6 ? 4 : -1,
    commit_timestamp: v === 1 ? 1_700_000_000_000 + partition_index : -1,
    committed_metadata,
  });
  const group = {
    group_id: 'payments-consumers',
    generation_id_or_member_epoch: v >= 1 ? 7 : -1,
    member_id: v >= 1 ? 'rdkafka-5c0e6f7a-1d2b-4c3d-9e8f-0a1b2c3d4e5f' : '',
    group_instance_id: v >= 7 ? 'payments-pod-0' : null,
    retention_time_ms: v >= 2 && v <= 4 ? 604_800_000 : -1,
  };
  return [
    {
      ...group,
      topics: [
        { name: 'orders', partitions: [partition(0, 1_234_567_890_123, 'checkpoint-17'), partition(3, 42, null)] },
        { name: 'audit', partitions: [partition(1, 0, '')] },
      ],
    },
    // a static member that is not one in this version, committing nothing
    { ...group, group_instance_id: null, topics: [] },
  ];
}

function response_samples(v: number) {
  return [
    {
      throttle_time_ms: v >= 3 ? 12 : 0,
      topics: [
        {
          name: 'orders',
          partitions: [
            { partition_index: 0, error_code: 0 },
            { partition_index: 3, error_code: 22 },
          ],
        },
        { name: 'audit', partitions: [{ partition_index: 1, error_code: 0 }] },
      ],
    },
  ];
}

test('OffsetCommit: version ranges', () => {
  assert.equal(request.valid_versions, '0-9');
  assert.equal(response.valid_versions, '0-9');
  assert.equal(request.flexible_versions, '8+');
  assert.equal(response.flexible_versions, '8+');
});

test('OffsetCommit request round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(request, request_samples), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
});

test('OffsetCommit response round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(response, response_samples), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
});

/** The hand-computed layouts' request: one offset of one partition. */
const value = {
  group_id: 'g',
  generation_id_or_member_epoch: 5,
  member_id: 'm',
  group_instance_id: null,
  retention_time_ms: -1,
  topics: [
    {
      name: 't',
      partitions: [
        {
          partition_index: 0,
          committed_offset: 10,
          committed_leader_epoch: -1,
          commit_timestamp: -1,
          committed_metadata: null,
        },
      ],
    },
  ],
};

test('OffsetCommit request v1: hand-computed layout', () => {
  // v1: the only version with a per-partition commit timestamp
  assert.deepEqual(
    encode(request, 1, {
      ...value,
      topics: [
        {
          name: 't',
          partitions: [{ partition_index: 0, committed_offset: 10, commit_timestamp: 256, committed_metadata: '' }],
        },
      ],
    }),
    hex(
      '0001 67',
      '00000005',
      '0001 6d',
      '00000001',
      '0001 74',
      '00000001',
      '00000000',
      '000000000000000a',
      '0000000000000100',
      '0000',
    ),
  );
});

test('OffsetCommit request v2 and v8: hand-computed layouts', () => {
  // v2: retention time after the member id, int32 counts, null metadata = int16 -1
  assert.deepEqual(
    assert_round_trip(request, 2, value),
    hex(
      '0001 67',
      '00000005',
      '0001 6d',
      'ffffffffffffffff',
      '00000001',
      '0001 74',
      '00000001',
      '00000000',
      '000000000000000a',
      'ffff',
    ),
  );
  // v8: compact strings and arrays, null instance id = 0, leader epoch, a tag section per struct
  assert.deepEqual(
    assert_round_trip(request, 8, value),
    hex(
      '02 67',
      '00000005',
      '02 6d',
      '00',
      '02',
      '02 74',
      '02',
      '00000000',
      '000000000000000a',
      'ffffffff',
      '00',
      '00',
      '00',
      '00',
    ),
  );
});

test('OffsetCommit response v0 and v8: hand-computed layouts', () => {
  // v0 has no throttle time
  const reply = { throttle_time_ms: 0, topics: [{ name: 't', partitions: [{ partition_index: 1, error_code: 27 }] }] };
  assert.deepEqual(assert_round_trip(response, 0, reply), hex('00000001', '0001 74', '00000001', '00000001', '001b'));
  assert.deepEqual(
    assert_round_trip(response, 8, reply),
    hex('00000000', '02', '02 74', '02', '00000001', '001b', '00', '00', '00'),
  );
});

test('OffsetCommit: unknown tagged fields in a flexible version are skipped', () => {
  // v8 response with an unknown tag (5, 2 bytes) on the partition and one (10, 1 byte) at the top level
  const bytes = hex('00000000', '02', '02 74', '02', '00000001', '001b', '01 05 02 abcd', '00', '01 0a 01 ff');
  assert.deepEqual(decode(response, 8, bytes), {
    throttle_time_ms: 0,
    topics: [{ name: 't', partitions: [{ partition_index: 1, error_code: 27 }] }],
  });
});
