import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FETCH } from './01_fetch.ts';
import { ZERO_UUID, assert_round_trips_in_every_version, decode, encode, hex, uuid } from './test_support.ts';

const { request, response } = FETCH;
const ORDERS_ID = uuid('3f2b8c1e5a6d4f7e9b0c1d2e3f405162');
const AUDIT_ID = uuid('a1b2c3d4e5f60718293a4b5c6d7e8f90');
const DIRECTORY_ID = uuid('0f1e2d3c4b5a69788796a5b4c3d2e1f0');
/** Long.MAX_VALUE as the codec sees it (a double, so 2^63). */
const INT64_MAX = 2 ** 63;
// Stand-ins for record batches; the large one goes through the writer's by-reference path.
const SMALL_BATCH = hex('0000000000000064 00000031 00000005 02 a1b2c3d4 0000 00000000 0000018f2a3b4c5d');
const LARGE_BATCH = Buffer.alloc(1500, 0x3c);

function topic_key(v: number, name: string, id: string) {
  return { topic: v <= 12 ? name : '', topic_id: v >= 13 ? id : ZERO_UUID };
}

function request_samples(v: number) {
  const consumer = {
    cluster_id: v >= 12 ? 'sluice-cluster-1' : null,
    replica_id: -1,
    replica_state: v >= 15 ? { replica_id: -1, replica_epoch: -1 } : {},
    max_wait_ms: 500,
    min_bytes: 1,
    max_bytes: v >= 3 ? 52428800 : 0x7fffffff,
    isolation_level: v >= 4 ? 1 : 0,
    session_id: v >= 7 ? 1207 : 0,
    session_epoch: v >= 7 ? 3 : -1,
    topics: [
      {
        ...topic_key(v, 'orders', ORDERS_ID),
        partitions: [
          {
            partition: 0,
            current_leader_epoch: v >= 9 ? 5 : -1,
            fetch_offset: 1200,
            last_fetched_epoch: v >= 12 ? 4 : -1,
            log_start_offset: -1,
            partition_max_bytes: 1048576,
            replica_directory_id: ZERO_UUID,
            high_watermark: INT64_MAX,
          },
          {
            partition: 3,
            current_leader_epoch: v >= 9 ? 5 : -1,
            fetch_offset: 0,
            last_fetched_epoch: -1,
            log_start_offset: -1,
            partition_max_bytes: 1048576,
            replica_directory_id: ZERO_UUID,
            high_watermark: INT64_MAX,
          },
        ],
      },
    ],
    forgotten_topics_data: v >= 7 ? [{ ...topic_key(v, 'audit', AUDIT_ID), partitions: [0, 2] }] : [],
    rack_id: v >= 11 ? 'us-east-1a' : '',
  };
  const follower = {
    cluster_id: null,
    replica_id: v <= 14 ? 2 : -1,
    replica_state: v >= 15 ? { replica_id: 2, replica_epoch: 77 } : {},
    max_wait_ms: 500,
    min_bytes: 1,
    max_bytes: v >= 3 ? 10485760 : 0x7fffffff,
    isolation_level: 0,
    session_id: 0,
    session_epoch: v >= 7 ? 0 : -1,
    topics: [
      {
        ...topic_key(v, 'orders', ORDERS_ID),
        partitions: [
          {
            partition: 1,
            current_leader_epoch: v >= 9 ? 6 : -1,
            fetch_offset: 990,
            last_fetched_epoch: v >= 12 ? 6 : -1,
            log_start_offset: v >= 5 ? 100 : -1,
            partition_max_bytes: 1048576,
            replica_directory_id: v >= 17 ? DIRECTORY_ID : ZERO_UUID,
            high_watermark: v >= 18 ? 985 : INT64_MAX,
          },
        ],
      },
    ],
    forgotten_topics_data: [],
    rack_id: '',
  };
  return [consumer, follower];
}

function response_samples(v: number) {
  const tagged = (value: object) => (v >= 12 ? value : {});
  return [
    {
      throttle_time_ms: v >= 1 ? 10 : 0,
      error_code: 0,
      session_id: v >= 7 ? 1207 : 0,
      responses: [
        {
          ...topic_key(v, 'orders', ORDERS_ID),
          partitions: [
            {
              partition_index: 0,
              error_code: 0,
              high_watermark: 1300,
              last_stable_offset: v >= 4 ? 1290 : -1,
              log_start_offset: v >= 5 ? 0 : -1,
              diverging_epoch: tagged({ epoch: 3, end_offset: 1180 }),
              current_leader: tagged({ leader_id: 1, leader_epoch: 5 }),
              snapshot_id: tagged({ end_offset: 1000, epoch: 2 }),
              aborted_transactions:
                v >= 4
                  ? [
                      { producer_id: 4001, first_offset: 1210 },
                      { producer_id: 4002, first_offset: 1250 },
                    ]
                  : [],
              preferred_read_replica: v >= 11 ? 2 : -1,
              records: LARGE_BATCH,
            },
            {
              partition_index: 1,
              error_code: 1, // OFFSET_OUT_OF_RANGE
              high_watermark: -1,
              last_stable_offset: -1,
              log_start_offset: -1,
              diverging_epoch: tagged({ epoch: -1, end_offset: -1 }),
              current_leader: tagged({ leader_id: 3, leader_epoch: 8 }),
              snapshot_id: tagged({ end_offset: -1, epoch: -1 }),
              aborted_transactions: v >= 4 ? null : [],
              preferred_read_replica: -1,
              records: null,
            },
            {
              partition_index: 2,
              error_code: 0,
              high_watermark: 77,
              last_stable_offset: v >= 4 ? 77 : -1,
              log_start_offset: v >= 5 ? 10 : -1,
              diverging_epoch: tagged({ epoch: -1, end_offset: -1 }),
              current_leader: tagged({ leader_id: 1, leader_epoch: 5 }),
              snapshot_id: tagged({ end_offset: -1, epoch: -1 }),
              aborted_transactions: [],
              preferred_read_replica: -1,
              records: SMALL_BATCH,
            },
          ],
        },
      ],
      node_endpoints:
        v >= 16
          ? [
              { node_id: 1, host: 'broker-1.internal', port: 9092, rack: 'us-east-1a' },
              { node_id: 3, host: 'broker-3.internal', port: 9092, rack: null },
            ]
          : [],
    },
  ];
}

test('Fetch: version ranges', () => {
  assert.equal(request.valid_versions, '0-18');
  assert.equal(response.valid_versions, '0-18');
  assert.equal(request.flexible_versions, '12+');
});

test('Fetch request round-trips in every version', () => {
  const versions = assert_round_trips_in_every_version(request, request_samples);
  assert.equal(versions.length, 19);
});

test('Fetch response round-trips in every version', () => {
  const versions = assert_round_trips_in_every_version(response, response_samples);
  assert.equal(versions.length, 19);
});

// The hand-computed layouts' requests: one partition of one topic.
const partition = { partition: 0, fetch_offset: 7, partition_max_bytes: 4096 };
const base = { replica_id: -1, max_wait_ms: 500, min_bytes: 1, max_bytes: 1024, isolation_level: 1 };
const topic_id = uuid('00112233445566778899aabbccddeeff');

test('Fetch request v4: hand-computed layout', () => {
  // v4: no session fields, no leader epochs, no log start offset, no forgotten topics, no rack.
  assert.deepEqual(
    encode(request, 4, { ...base, topics: [{ topic: 't', partitions: [partition] }] }),
    hex(
      'ffffffff',
      '000001f4',
      '00000001',
      '00000400',
      '01',
      '00000001',
      '0001 74',
      '00000001',
      '00000000',
      '0000000000000007',
      '00001000',
    ),
  );
});

test('Fetch request v13 and v18 (flexible): hand-computed layouts', () => {
  // v13: topic id, defaults for the epochs, empty forgotten list and rack, cluster id as tag 0.
  const v13_bytes = hex(
    'ffffffff',
    '000001f4',
    '00000001',
    '00000400',
    '00',
    '00000000',
    'ffffffff',
    '02',
    '00112233445566778899aabbccddeeff',
    '02',
    '00000000',
    'ffffffff',
    '0000000000000007',
    'ffffffff',
    'ffffffffffffffff',
    '00001000',
    '00',
    '00',
    '01',
    '01',
    '01 00 02 02 63',
  );
  assert.deepEqual(
    encode(request, 13, {
      ...base,
      isolation_level: 0,
      cluster_id: 'c',
      topics: [{ topic_id, partitions: [partition] }],
    }),
    v13_bytes,
  );
  assert.equal(decode(request, 13, v13_bytes).cluster_id, 'c');
  // v18: the follower's high watermark is tag 1 of the partition, after the directory id (tag 0).
  const v18 = encode(request, 18, {
    ...base,
    topics: [{ topic_id, partitions: [{ ...partition, replica_directory_id: topic_id, high_watermark: 6 }] }],
  });
  assert.ok(v18.includes(hex('00001000', '02', '00 10 00112233445566778899aabbccddeeff', '01 08 0000000000000006')));
});

test('Fetch response v0 and v12: hand-computed layouts', () => {
  // Response v0: topic, partition, error, high watermark, records.
  assert.deepEqual(
    encode(response, 0, {
      responses: [
        { topic: 't', partitions: [{ partition_index: 0, error_code: 0, high_watermark: 10, records: hex('aabb') }] },
      ],
    }),
    hex('00000001', '0001 74', '00000001', '00000000', '0000', '000000000000000a', '00000002 aabb'),
  );
  // Response v12 (flexible): null aborted list as compact 0, diverging epoch as tag 0 of the partition.
  const v12_partition = {
    partition_index: 0,
    error_code: 0,
    high_watermark: 10,
    last_stable_offset: 10,
    log_start_offset: 0,
    diverging_epoch: { epoch: 1, end_offset: 8 },
    aborted_transactions: null,
    preferred_read_replica: -1,
    records: hex('aabb'),
  };
  assert.deepEqual(
    encode(response, 12, {
      throttle_time_ms: 0,
      error_code: 0,
      session_id: 0,
      responses: [{ topic: 't', partitions: [v12_partition] }],
    }),
    hex(
      '00000000',
      '0000',
      '00000000',
      '02',
      '02 74',
      '02',
      '00000000',
      '0000',
      '000000000000000a',
      '000000000000000a',
      '0000000000000000',
      '00',
      'ffffffff',
      '03 aabb',
      '01 00 0d 00000001 0000000000000008 00',
      '00',
      '00',
    ),
  );
});
