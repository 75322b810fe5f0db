import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LIST_PARTITION_REASSIGNMENTS } from './46_list_partition_reassignments.ts';
import { assert_round_trips_in_every_version, decode, encode, hex } from './test_support.ts';

const { request, response } = LIST_PARTITION_REASSIGNMENTS;

test('ListPartitionReassignments: version ranges', () => {
  assert.equal(request.valid_versions, '0');
  assert.equal(request.flexible_versions, '0+');
});

test('ListPartitionReassignments round-trips: all partitions, some, and a listing', () => {
  assert_round_trips_in_every_version(request, () => [
    { timeout_ms: 60000, topics: null },
    {
      timeout_ms: 5000,
      topics: [
        { name: 'orders', partition_indexes: [0, 3] },
        { name: 'audit', partition_indexes: [] },
      ],
    },
  ]);
  assert_round_trips_in_every_version(response, () => [
    { throttle_time_ms: 0, error_code: 0, error_message: null, topics: [] },
    {
      throttle_time_ms: 0,
      error_code: 0,
      error_message: null,
      topics: [
        {
          name: 'orders',
          partitions: [{ partition_index: 3, replicas: [1, 2, 4], adding_replicas: [4], removing_replicas: [2] }],
        },
      ],
    },
  ]);
});

test('ListPartitionReassignments: hand-computed layouts', () => {
  // timeout, a null compact array (0), body tags.
  assert.deepEqual(encode(request, 0, { timeout_ms: 5000, topics: null }), hex('00001388', '00', '00'));
  assert.equal(decode(request, 0, hex('00001388', '00', '00')).topics, null);
  // one topic "t" with partition 1: array length+1, compact string, int32 array, topic tags.
  assert.deepEqual(
    encode(request, 0, { timeout_ms: 5000, topics: [{ name: 't', partition_indexes: [1] }] }),
    hex('00001388', '02', '02 74', '02 00000001', '00', '00'),
  );
  const listing = {
    throttle_time_ms: 0,
    error_code: 0,
    error_message: null,
    topics: [
      {
        name: 't',
        partitions: [{ partition_index: 0, replicas: [1, 2], adding_replicas: [2], removing_replicas: [] }],
      },
    ],
  };
  assert.deepEqual(
    encode(response, 0, listing),
    hex(
      '00000000',
      '0000',
      '00',
      '02',
      '02 74',
      '02',
      '00000000',
      '03 00000001 00000002',
      '02 00000002',
      '01',
      '00',
      '00',
      '00',
    ),
  );
});
