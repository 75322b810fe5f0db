import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DELETE_RECORDS } from './21_delete_records.ts';
import { assert_round_trip, assert_round_trips_in_every_version, hex } from './test_support.ts';

const { request, response } = DELETE_RECORDS;

function request_samples(_v: number) {
  return [
    {
      topics: [
        {
          name: 'orders',
          partitions: [
            { partition_index: 0, offset: 5_000_000_123 },
            { partition_index: 2, offset: -1 },
          ],
        },
        { name: 'audit', partitions: [{ partition_index: 1, offset: 42 }] },
      ],
      timeout_ms: 30000,
    },
  ];
}

function response_samples(v: number) {
  return [
    {
      throttle_time_ms: v >= 1 ? 12 : 0,
      topics: [
        {
          name: 'orders',
          partitions: [
            { partition_index: 0, low_watermark: 5_000_000_123, error_code: 0 },
            { partition_index: 2, low_watermark: -1, error_code: 6 },
          ],
        },
        { name: 'audit', partitions: [{ partition_index: 1, low_watermark: 42, error_code: 0 }] },
      ],
    },
  ];
}

test('DeleteRecords: version ranges', () => {
  assert.equal(request.valid_versions, '0-2');
  assert.equal(response.valid_versions, '0-2');
  assert.equal(request.flexible_versions, '2+');
  assert.equal(response.flexible_versions, '2+');
});

test('DeleteRecords request round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(request, request_samples), [0, 1, 2]);
});

test('DeleteRecords response round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(response, response_samples), [0, 1, 2]);
});

test('DeleteRecords: hand-computed layouts', () => {
  const value = {
    topics: [{ name: 'a', partitions: [{ partition_index: 0, offset: 0x1_0000_0002 }] }],
    timeout_ms: 1000,
  };
  assert.deepEqual(
    assert_round_trip(request, 1, value),
    hex('00000001', '0001 61', '00000001', '00000000', '00000001 00000002', '000003e8'),
  );
  assert.deepEqual(
    assert_round_trip(request, 2, value),
    hex('02', '02 61', '02', '00000000', '00000001 00000002', '00', '00', '000003e8', '00'),
  );
  assert.deepEqual(
    assert_round_trip(response, 2, {
      throttle_time_ms: 0,
      topics: [{ name: 'a', partitions: [{ partition_index: 0, low_watermark: -1, error_code: 6 }] }],
    }),
    hex('00000000', '02', '02 61', '02', '00000000', 'ffffffff ffffffff', '0006', '00', '00', '00'),
  );
});
