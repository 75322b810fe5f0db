import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CREATE_PARTITIONS } from './37_create_partitions.ts';
import { assert_round_trip, assert_round_trips_in_every_version, hex } from './test_support.ts';

const { request, response } = CREATE_PARTITIONS;

function request_samples(v: number) {
  return [
    {
      topics: [
        {
          name: 'orders',
          count: 6,
          assignments: [{ broker_ids: [1, 2] }, { broker_ids: [2, 3] }, { broker_ids: [3, 1] }],
        },
        { name: 'audit', count: 4, assignments: null },
      ],
      timeout_ms: 30000,
      validate_only: v % 2 === 1,
    },
  ];
}

function response_samples(v: number) {
  return [
    {
      throttle_time_ms: v * 10,
      results: [
        { name: 'orders', error_code: 0, error_message: null },
        {
          name: 'audit',
          error_code: 37,
          error_message: 'Topic currently has 8 partitions, which is higher than the requested 4.',
        },
      ],
    },
  ];
}

test('CreatePartitions: version ranges', () => {
  assert.equal(request.valid_versions, '0-3');
  assert.equal(response.valid_versions, '0-3');
  assert.equal(request.flexible_versions, '2+');
  assert.equal(response.flexible_versions, '2+');
});

test('CreatePartitions request round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(request, request_samples), [0, 1, 2, 3]);
});

test('CreatePartitions response round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(response, response_samples), [0, 1, 2, 3]);
});

test('CreatePartitions: hand-computed layouts', () => {
  // v1: null assignments = -1 count
  assert.deepEqual(
    assert_round_trip(request, 1, {
      topics: [{ name: 'a', count: 3, assignments: null }],
      timeout_ms: 1000,
      validate_only: false,
    }),
    hex('00000001', '0001 61', '00000003', 'ffffffff', '000003e8', '00'),
  );
  // v2: compact assignments, each a struct holding a compact int32 list
  assert.deepEqual(
    assert_round_trip(request, 2, {
      topics: [{ name: 'a', count: 3, assignments: [{ broker_ids: [1] }] }],
      timeout_ms: 1000,
      validate_only: false,
    }),
    hex('02', '02 61', '00000003', '02', '02 00000001 00', '00', '000003e8', '00', '00'),
  );
  assert.deepEqual(
    assert_round_trip(response, 3, {
      throttle_time_ms: 0,
      results: [{ name: 'a', error_code: 37, error_message: 'x' }],
    }),
    hex('00000000', '02', '02 61', '0025', '02 78', '00', '00'),
  );
});
