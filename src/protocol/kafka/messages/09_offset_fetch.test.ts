import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OFFSET_FETCH } from './09_offset_fetch.ts';
import { assert_round_trip, assert_round_trips_in_every_version, decode, hex } from './test_support.ts';

const { request, response } = OFFSET_FETCH;

function request_samples(v: number) {
  if (v <= 7) {
    const one_group = {
      group_id: 'payments-consumers',
      topics: [
        { name: 'orders', partition_indexes: [0, 1, 2] },
        { name: 'audit', partition_indexes: [5] },
      ],
      groups: [],
      require_stable: v >= 7,
    };
    // from v2 a null topic list asks for every topic the group has offsets for
    return v >= 2 ? [one_group, { ...one_group, topics: null }] : [one_group];
  }
  return [
    {
      group_id: '',
      topics: [],
      groups: [
        {
          group_id: 'payments-consumers',
          member_id: v >= 9 ? 'mE3hW1xqT2ayc0bq2y9Ymw' : null,
          member_epoch: v >= 9 ? 12 : -1,
          topics: [
            { name: 'orders', partition_indexes: [0, 1] },
            { name: 'audit', partition_indexes: [] },
          ],
        },
        { group_id: 'billing', member_id: null, member_epoch: -1, topics: null },
      ],
      require_stable: true,
    },
  ];
}

function response_samples(v: number) {
  if (v <= 7) {
    return [
      {
        throttle_time_ms: v >= 3 ? 25 : 0,
        topics: [
          {
            name: 'orders',
            partitions: [
              {
                partition_index: 0,
                committed_offset: 1500,
                committed_leader_epoch: v >= 5 ? 3 : -1,
                metadata: 'checkpoint-17',
                error_code: 0,
              },
              { partition_index: 1, committed_offset: -1, committed_leader_epoch: -1, metadata: null, error_code: 0 },
            ],
          },
        ],
        error_code: 0,
        groups: [],
      },
      // a group-level error, carried at the top level from v2
      { throttle_time_ms: 0, topics: [], error_code: v >= 2 ? 16 : 0, groups: [] },
    ];
  }
  return [
    {
      throttle_time_ms: 25,
      topics: [],
      error_code: 0,
      groups: [
        {
          group_id: 'payments-consumers',
          topics: [
            {
              name: 'orders',
              partitions: [
                { partition_index: 0, committed_offset: 1500, committed_leader_epoch: 3, metadata: '', error_code: 0 },
                { partition_index: 1, committed_offset: -1, committed_leader_epoch: -1, metadata: null, error_code: 0 },
              ],
            },
          ],
          error_code: 0,
        },
        { group_id: 'billing', topics: [], error_code: 69 },
      ],
    },
  ];
}

test('OffsetFetch: version ranges', () => {
  assert.equal(request.valid_versions, '0-9');
  assert.equal(response.valid_versions, '0-9');
  assert.equal(request.flexible_versions, '6+');
  assert.equal(response.flexible_versions, '6+');
});

test('OffsetFetch request round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(request, request_samples), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
});

test('OffsetFetch response round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(response, response_samples), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
});

test('OffsetFetch: hand-computed layouts', () => {
  // v1: one group, int32 counts, an int32 array of partition indexes
  assert.deepEqual(
    assert_round_trip(request, 1, {
      group_id: 'g',
      topics: [{ name: 't', partition_indexes: [0, 1] }],
      groups: [],
      require_stable: false,
    }),
    hex('0001 67', '00000001', '0001 74', '00000002 00000000 00000001'),
  );
  // v2: a null topic list is an int32 count of -1
  assert.deepEqual(
    assert_round_trip(request, 2, { group_id: 'g', topics: null, groups: [], require_stable: false }),
    hex('0001 67', 'ffffffff'),
  );
  // v8: the group array replaces group id and topics; a null compact array is 0; require_stable last
  assert.deepEqual(
    assert_round_trip(request, 8, {
      group_id: '',
      topics: [],
      groups: [{ group_id: 'g', member_id: null, member_epoch: -1, topics: null }],
      require_stable: true,
    }),
    hex('02', '02 67', '00', '00', '01', '00'),
  );
  // v9 adds the member id and epoch after the group id
  assert.deepEqual(
    assert_round_trip(request, 9, {
      group_id: '',
      topics: [],
      groups: [{ group_id: 'g', member_id: 'm', member_epoch: 3, topics: [{ name: 't', partition_indexes: [7] }] }],
      require_stable: false,
    }),
    hex('02', '02 67', '02 6d', '00000003', '02', '02 74', '02 00000007', '00', '00', '00', '00'),
  );
  // response v5: leader epoch between offset and metadata, top-level error code
  assert.deepEqual(
    assert_round_trip(response, 5, {
      throttle_time_ms: 1,
      topics: [
        {
          name: 't',
          partitions: [
            { partition_index: 0, committed_offset: 9, committed_leader_epoch: 2, metadata: null, error_code: 0 },
          ],
        },
      ],
      error_code: 0,
      groups: [],
    }),
    hex(
      '00000001',
      '00000001',
      '0001 74',
      '00000001',
      '00000000',
      '0000000000000009',
      '00000002',
      'ffff',
      '0000',
      '0000',
    ),
  );
});

test('OffsetFetch: unknown tagged fields in a flexible version are skipped', () => {
  // v8 request with an unknown tag on the group and one at the top level
  const bytes = hex('02', '02 67', '00', '01 03 01 ff', '01', '01 09 02 abcd');
  assert.deepEqual(decode(request, 8, bytes), {
    group_id: '',
    topics: [],
    groups: [{ group_id: 'g', member_id: null, member_epoch: -1, topics: null }],
    require_stable: true,
  });
});
