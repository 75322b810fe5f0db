import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DESCRIBE_PRODUCERS } from './61_describe_producers.ts';
import { assert_round_trip, assert_round_trips_in_every_version, decode, encode, hex } from './test_support.ts';

const { request, response } = DESCRIBE_PRODUCERS;

// above 2^32, to check the int64 layout
const PRODUCER_ID = 2 ** 40 + 5;

test('DescribeProducers: version ranges', () => {
  assert.equal(request.valid_versions, '0');
  assert.equal(response.valid_versions, '0');
  assert.equal(request.flexible_versions, '0+');
  assert.equal(response.flexible_versions, '0+');
});

test('DescribeProducers round-trips: a listing, an error and nothing asked', () => {
  assert.deepEqual(
    assert_round_trips_in_every_version(request, () => [
      {
        topics: [
          { name: 'orders', partition_indexes: [0, 3] },
          { name: 'audit', partition_indexes: [] },
        ],
      },
      { topics: [] },
    ]),
    [0],
  );
  assert.deepEqual(
    assert_round_trips_in_every_version(response, () => [
      {
        throttle_time_ms: 0,
        topics: [
          {
            name: 'orders',
            partitions: [
              {
                partition_index: 0,
                error_code: 0,
                error_message: null,
                active_producers: [
                  // in a transaction since offset 1200
                  {
                    producer_id: PRODUCER_ID,
                    producer_epoch: 4,
                    last_sequence: 311,
                    last_timestamp: 1_700_000_000_123,
                    coordinator_epoch: 12,
                    current_txn_start_offset: 1200,
                  },
                  // idempotent only
                  {
                    producer_id: 7001,
                    producer_epoch: 0,
                    last_sequence: 9,
                    last_timestamp: 1_700_000_000_456,
                    coordinator_epoch: -1,
                    current_txn_start_offset: -1,
                  },
                ],
              },
              {
                partition_index: 3,
                error_code: 6, // NOT_LEADER_OR_FOLLOWER
                error_message: 'This server is not the leader for that topic-partition.',
                active_producers: [],
              },
            ],
          },
        ],
      },
      { throttle_time_ms: 15, topics: [] },
    ]),
    [0],
  );
});

test('DescribeProducers: hand-computed layouts (every version is flexible)', () => {
  // compact array and name, an int32 array, topic tags, body tags
  assert.deepEqual(
    assert_round_trip(request, 0, { topics: [{ name: 't', partition_indexes: [1, 2] }] }),
    hex('02', '02 74', '03 00000001 00000002', '00', '00'),
  );
  const producer = {
    producer_id: PRODUCER_ID,
    producer_epoch: 4,
    last_sequence: 7,
    last_timestamp: 256,
    coordinator_epoch: 12,
    current_txn_start_offset: 10,
  };
  const listing = {
    throttle_time_ms: 0,
    topics: [
      {
        name: 't',
        partitions: [{ partition_index: 1, error_code: 0, error_message: null, active_producers: [producer] }],
      },
    ],
  };
  assert.deepEqual(
    assert_round_trip(response, 0, listing),
    hex(
      '00000000',
      '02',
      '02 74',
      '02',
      '00000001',
      '0000',
      '00',
      '02',
      '0000010000000005',
      '00000004',
      '00000007',
      '0000000000000100',
      '0000000c',
      '000000000000000a',
      '00',
      '00',
      '00',
      '00',
    ),
  );
  // a producer row left without its sequence, timestamp and transaction start takes -1 for each
  const row = encode(response, 0, {
    throttle_time_ms: 0,
    topics: [
      {
        name: 't',
        partitions: [
          {
            partition_index: 1,
            error_code: 0,
            active_producers: [{ producer_id: 1, producer_epoch: 0, coordinator_epoch: 0 }],
          },
        ],
      },
    ],
  });
  assert.deepEqual(
    row,
    hex(
      '00000000',
      '02 02 74',
      '02 00000001 0000 00',
      '02 0000000000000001 00000000 ffffffff ffffffffffffffff 00000000 ffffffffffffffff 00',
      '00 00 00',
    ),
  );
});

test('DescribeProducers: unknown tagged fields are skipped', () => {
  assert.deepEqual(decode(request, 0, hex('02', '02 74', '01', '01 05 01 ff', '00')), {
    topics: [{ name: 't', partition_indexes: [] }],
  });
});
