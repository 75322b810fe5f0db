import { test } from 'node:test';
import assert from 'node:assert/strict';
import { WRITE_TXN_MARKERS } from './27_write_txn_markers.ts';
import { assert_round_trip, assert_round_trips_in_every_version, decode, hex } from './test_support.ts';

const { request, response } = WRITE_TXN_MARKERS;

// above 2^32, to check the int64 layout
const PRODUCER_ID = 2 ** 40 + 5;

function request_samples(_v: number) {
  return [
    {
      markers: [
        {
          producer_id: PRODUCER_ID,
          producer_epoch: 4,
          transaction_result: true,
          topics: [
            { name: 'orders', partition_indexes: [0, 3] },
            { name: '__consumer_offsets', partition_indexes: [17] },
          ],
          coordinator_epoch: 12,
        },
        {
          producer_id: 7001,
          producer_epoch: 0,
          transaction_result: false,
          topics: [{ name: 'audit', partition_indexes: [1] }],
          coordinator_epoch: 12,
        },
      ],
    },
    { markers: [] },
  ];
}

function response_samples(_v: number) {
  return [
    {
      markers: [
        {
          producer_id: PRODUCER_ID,
          topics: [
            {
              name: 'orders',
              partitions: [
                { partition_index: 0, error_code: 0 },
                { partition_index: 3, error_code: 6 }, // NOT_LEADER_OR_FOLLOWER
              ],
            },
            { name: '__consumer_offsets', partitions: [{ partition_index: 17, error_code: 0 }] },
          ],
        },
        { producer_id: 7001, topics: [] },
      ],
    },
  ];
}

test('WriteTxnMarkers: version ranges', () => {
  assert.equal(request.valid_versions, '0-1');
  assert.equal(response.valid_versions, '0-1');
  assert.equal(request.flexible_versions, '1+');
  assert.equal(response.flexible_versions, '1+');
});

test('WriteTxnMarkers request round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(request, request_samples), [0, 1]);
});

test('WriteTxnMarkers response round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(response, response_samples), [0, 1]);
});

test('WriteTxnMarkers: hand-computed layouts', () => {
  const value = {
    markers: [
      {
        producer_id: PRODUCER_ID,
        producer_epoch: 4,
        transaction_result: true,
        topics: [{ name: 't', partition_indexes: [2] }],
        coordinator_epoch: 12,
      },
    ],
  };
  // v0: the coordinator epoch after the topics
  assert.deepEqual(
    assert_round_trip(request, 0, value),
    hex('00000001', '0000010000000005', '0004', '01', '00000001', '0001 74', '00000001 00000002', '0000000c'),
  );
  // v1: compact, a tag section per topic, per marker and for the body
  assert.deepEqual(
    assert_round_trip(request, 1, value),
    hex('02', '0000010000000005', '0004', '01', '02', '02 74', '02 00000002', '00', '0000000c', '00', '00'),
  );
  const reply = {
    markers: [
      { producer_id: PRODUCER_ID, topics: [{ name: 't', partitions: [{ partition_index: 2, error_code: 6 }] }] },
    ],
  };
  assert.deepEqual(
    assert_round_trip(response, 0, reply),
    hex('00000001', '0000010000000005', '00000001', '0001 74', '00000001', '00000002', '0006'),
  );
  assert.deepEqual(
    assert_round_trip(response, 1, reply),
    hex('02', '0000010000000005', '02', '02 74', '02', '00000002', '0006', '00', '00', '00', '00'),
  );
});

test('WriteTxnMarkers: unknown tagged fields in a flexible version are skipped', () => {
  // an unknown tag (2, 1 byte) on the marker
  assert.deepEqual(
    decode(request, 1, hex('02', '0000000000000001', '0000', '00', '01', '00000000', '01 02 01 02', '00')),
    {
      markers: [{ producer_id: 1, producer_epoch: 0, transaction_result: false, topics: [], coordinator_epoch: 0 }],
    },
  );
});
