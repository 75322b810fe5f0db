import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LIST_OFFSETS } from './02_list_offsets.ts';
import { assert_round_trips_in_every_version, decode, encode, hex } from './test_support.ts';

const { request, response } = LIST_OFFSETS;
const LATEST = -1;
const EARLIEST = -2;

function request_samples(v: number) {
  return [
    {
      replica_id: -1,
      isolation_level: v >= 2 ? 1 : 0,
      topics: [
        {
          name: 'orders',
          partitions: [
            {
              partition_index: 0,
              current_leader_epoch: v >= 4 ? 5 : -1,
              timestamp: LATEST,
              max_num_offsets: v === 0 ? 3 : 1,
            },
            { partition_index: 1, current_leader_epoch: v >= 4 ? 5 : -1, timestamp: 1717171717171, max_num_offsets: 1 },
          ],
        },
        {
          name: 'audit',
          partitions: [{ partition_index: 0, current_leader_epoch: -1, timestamp: EARLIEST, max_num_offsets: 1 }],
        },
      ],
      timeout_ms: v >= 10 ? 30000 : 0,
    },
    { replica_id: 2, isolation_level: 0, topics: [], timeout_ms: 0 },
  ];
}

function response_samples(v: number) {
  return [
    {
      throttle_time_ms: v >= 2 ? 15 : 0,
      topics: [
        {
          name: 'orders',
          partitions: [
            {
              partition_index: 0,
              error_code: 0,
              old_style_offsets: v === 0 ? [1300, 1200, 0] : [],
              timestamp: -1,
              offset: v >= 1 ? 1300 : -1,
              leader_epoch: v >= 4 ? 5 : -1,
            },
            {
              partition_index: 1,
              error_code: 6, // NOT_LEADER_OR_FOLLOWER
              old_style_offsets: [],
              timestamp: v >= 1 ? 1717171717171 : -1,
              offset: -1,
              leader_epoch: -1,
            },
          ],
        },
      ],
    },
  ];
}

test('ListOffsets: version ranges', () => {
  assert.equal(request.valid_versions, '0-10');
  assert.equal(response.valid_versions, '0-10');
  assert.equal(request.flexible_versions, '6+');
});

test('ListOffsets request round-trips in every version', () => {
  assert.equal(assert_round_trips_in_every_version(request, request_samples).length, 11);
});

test('ListOffsets response round-trips in every version', () => {
  assert.equal(assert_round_trips_in_every_version(response, response_samples).length, 11);
});

test('ListOffsets: hand-computed layouts', () => {
  // v0: replica, topics, partition, timestamp, max_num_offsets (v0 only).
  const v0 = {
    replica_id: -1,
    topics: [{ name: 't', partitions: [{ partition_index: 0, timestamp: EARLIEST, max_num_offsets: 1 }] }],
  };
  assert.deepEqual(
    encode(request, 0, v0),
    hex('ffffffff', '00000001', '0001 74', '00000001', '00000000', 'fffffffffffffffe', '00000001'),
  );
  // v6 (flexible): isolation level, compact counts and name, leader epoch, three empty tag sections.
  const v6 = {
    replica_id: -1,
    isolation_level: 0,
    topics: [{ name: 't', partitions: [{ partition_index: 0, current_leader_epoch: 3, timestamp: LATEST }] }],
  };
  assert.deepEqual(
    encode(request, 6, v6),
    hex('ffffffff', '00', '02', '02 74', '02', '00000000', '00000003', 'ffffffffffffffff', '00', '00', '00'),
  );
  // v10 adds the timeout after the topics.
  assert.deepEqual(
    encode(request, 10, { ...v6, timeout_ms: 1000 }),
    hex(
      'ffffffff',
      '00',
      '02',
      '02 74',
      '02',
      '00000000',
      '00000003',
      'ffffffffffffffff',
      '00',
      '00',
      '000003e8',
      '00',
    ),
  );
  // Response v0: the list of old-style offsets; v1+ fields come back as their defaults.
  const r0 = hex('00000001', '0001 74', '00000001', '00000000', '0000', '00000001 000000000000002a');
  assert.deepEqual(
    encode(response, 0, {
      topics: [{ name: 't', partitions: [{ partition_index: 0, error_code: 0, old_style_offsets: [42] }] }],
    }),
    r0,
  );
  const decoded = decode(response, 0, r0) as { topics: Array<{ partitions: Array<Record<string, unknown>> }> };
  assert.equal(decoded.topics[0]!.partitions[0]!.offset, -1);
});
