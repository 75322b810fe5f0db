import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TXN_OFFSET_COMMIT } from './28_txn_offset_commit.ts';
import { assert_round_trip, assert_round_trips_in_every_version, decode, hex } from './test_support.ts';

const { request, response } = TXN_OFFSET_COMMIT;

// above 2^32, to check the int64 layout
const PRODUCER_ID = 2 ** 40 + 5;

function request_samples(v: number) {
  const partition = (partition_index: number, committed_offset: number, committed_metadata: string | null) => ({
    partition_index,
    committed_offset,
    committed_leader_epoch: v >= 2 ? 4 : -1,
    committed_metadata,
  });
  const commit = {
    transactional_id: 'txn-payments-1',
    group_id: 'payments-consumers',
    producer_id: PRODUCER_ID,
    producer_epoch: 4,
    generation_id: v >= 3 ? 7 : -1,
    member_id: v >= 3 ? 'rdkafka-5c0e6f7a-1d2b-4c3d-9e8f-0a1b2c3d4e5f' : '',
    group_instance_id: v >= 3 ? 'payments-pod-0' : null,
  };
  return [
    {
      ...commit,
      topics: [
        { name: 'orders', partitions: [partition(0, 1_234_567_890_123, 'checkpoint-17'), partition(3, 42, null)] },
        { name: 'audit', partitions: [partition(1, 0, '')] },
      ],
    },
    // a producer outside any group membership, committing nothing
    { ...commit, generation_id: -1, member_id: '', group_instance_id: null, topics: [] },
  ];
}

function response_samples(_v: number) {
  return [
    {
      throttle_time_ms: 0,
      topics: [
        {
          name: 'orders',
          partitions: [
            { partition_index: 0, error_code: 0 },
            { partition_index: 3, error_code: 22 }, // ILLEGAL_GENERATION
          ],
        },
        { name: 'audit', partitions: [{ partition_index: 1, error_code: 0 }] },
      ],
    },
    { throttle_time_ms: 40, topics: [] },
  ];
}

test('TxnOffsetCommit: version ranges', () => {
  assert.equal(request.valid_versions, '0-5');
  assert.equal(response.valid_versions, '0-5');
  assert.equal(request.flexible_versions, '3+');
  assert.equal(response.flexible_versions, '3+');
});

test('TxnOffsetCommit request round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(request, request_samples), [0, 1, 2, 3, 4, 5]);
});

test('TxnOffsetCommit response round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(response, response_samples), [0, 1, 2, 3, 4, 5]);
});

/** The hand-computed layouts' request: one offset of one partition. */
const value = {
  transactional_id: 't',
  group_id: 'g',
  producer_id: PRODUCER_ID,
  producer_epoch: 4,
  generation_id: -1,
  member_id: '',
  group_instance_id: null,
  topics: [
    {
      name: 'o',
      partitions: [{ partition_index: 0, committed_offset: 10, committed_leader_epoch: 3, committed_metadata: null }],
    },
  ],
};

test('TxnOffsetCommit request: hand-computed layouts', () => {
  // v2: the leader epoch after the offset, null metadata = int16 -1
  assert.deepEqual(
    assert_round_trip(request, 2, value),
    hex(
      '0001 74',
      '0001 67',
      '0000010000000005',
      '0004',
      '00000001',
      '0001 6f',
      '00000001',
      '00000000',
      '000000000000000a',
      '00000003',
      'ffff',
    ),
  );
  // v3: the member's generation, id and (null) instance id after the epoch; compact, with tag sections
  assert.deepEqual(
    assert_round_trip(request, 3, { ...value, generation_id: 5, member_id: 'm' }),
    hex(
      '02 74',
      '02 67',
      '0000010000000005',
      '0004',
      '00000005',
      '02 6d',
      '00',
      '02',
      '02 6f',
      '02',
      '00000000',
      '000000000000000a',
      '00000003',
      '00',
      '00',
      '00',
      '00',
    ),
  );
  // v1 has no leader epoch nor membership: they decode as -1, '' and null
  const v1 = hex(
    '0001 74 0001 67',
    '0000010000000005 0004',
    '00000001 0001 6f',
    '00000001 00000000 000000000000000a ffff',
  );
  assert.deepEqual(decode(request, 1, v1), {
    ...value,
    topics: [
      {
        name: 'o',
        partitions: [
          { partition_index: 0, committed_offset: 10, committed_leader_epoch: -1, committed_metadata: null },
        ],
      },
    ],
  });
});

test('TxnOffsetCommit response: hand-computed layouts', () => {
  const reply = { throttle_time_ms: 0, topics: [{ name: 'o', partitions: [{ partition_index: 0, error_code: 22 }] }] };
  assert.deepEqual(
    assert_round_trip(response, 0, reply),
    hex('00000000', '00000001', '0001 6f', '00000001', '00000000', '0016'),
  );
  assert.deepEqual(
    assert_round_trip(response, 5, reply),
    hex('00000000', '02', '02 6f', '02', '00000000', '0016', '00', '00', '00'),
  );
});

test('TxnOffsetCommit: unknown tagged fields in a flexible version are skipped', () => {
  // v4 response with an unknown tag (0, 2 bytes) on the partition
  const bytes = hex('00000000', '02', '02 6f', '02', '00000000', '0016', '01 00 02 abcd', '00', '00');
  assert.deepEqual(decode(response, 4, bytes), {
    throttle_time_ms: 0,
    topics: [{ name: 'o', partitions: [{ partition_index: 0, error_code: 22 }] }],
  });
});
