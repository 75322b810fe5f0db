import { test } from 'node:test';
import assert from 'node:assert/strict';
import { METADATA } from './03_metadata.ts';
import { ZERO_UUID, assert_round_trips_in_every_version, decode, encode, hex, uuid } from './test_support.ts';

const { request, response } = METADATA;
const ORDERS_ID = uuid('3f2b8c1e5a6d4f7e9b0c1d2e3f405162');
const OFFSETS_ID = uuid('5e4d3c2b1a0918273645546372819000');
const NONE = -2147483648;
// READ, WRITE, DESCRIBE... as a bit set of ACL operations.
const TOPIC_OPERATIONS = 0b0000_1111_1111_1000;
const CLUSTER_OPERATIONS = 0b0001_1111_1000_0000;

function request_samples(v: number) {
  const flags = {
    allow_auto_topic_creation: v >= 4 ? false : true,
    include_cluster_authorized_operations: v >= 8 && v <= 10,
    include_topic_authorized_operations: v >= 8,
  };
  const by_name =
    v >= 10
      ? [
          { topic_id: ORDERS_ID, name: null },
          { topic_id: ZERO_UUID, name: 'audit' },
        ]
      : [
          { topic_id: ZERO_UUID, name: 'orders' },
          { topic_id: ZERO_UUID, name: 'audit' },
        ];
  return [
    { topics: by_name, ...flags },
    // All topics: null from v1; v0 has no null array and asks for all topics with an empty one.
    {
      topics: v >= 1 ? null : [],
      allow_auto_topic_creation: true,
      include_cluster_authorized_operations: false,
      include_topic_authorized_operations: false,
    },
  ];
}

function response_samples(v: number) {
  return [
    {
      throttle_time_ms: v >= 3 ? 5 : 0,
      brokers: [
        { node_id: 1, host: 'broker-1.internal', port: 9092, rack: v >= 1 ? 'us-east-1a' : null },
        { node_id: 2, host: 'broker-2.internal', port: 9092, rack: null },
      ],
      cluster_id: v >= 2 ? 'sluice-cluster-1' : null,
      controller_id: v >= 1 ? 1 : -1,
      topics: [
        {
          error_code: 0,
          name: 'orders',
          topic_id: v >= 10 ? ORDERS_ID : ZERO_UUID,
          is_internal: false,
          partitions: [
            {
              error_code: 0,
              partition_index: 0,
              leader_id: 1,
              leader_epoch: v >= 7 ? 5 : -1,
              replica_nodes: [1, 2, 3],
              isr_nodes: [1, 2],
              offline_replicas: v >= 5 ? [3] : [],
            },
            {
              error_code: 0,
              partition_index: 1,
              leader_id: 2,
              leader_epoch: v >= 7 ? 2 : -1,
              replica_nodes: [2, 3, 1],
              isr_nodes: [2, 3, 1],
              offline_replicas: [],
            },
          ],
          topic_authorized_operations: v >= 8 ? TOPIC_OPERATIONS : NONE,
        },
        {
          error_code: 0,
          name: '__consumer_offsets',
          topic_id: v >= 10 ? OFFSETS_ID : ZERO_UUID,
          is_internal: v >= 1,
          partitions: [
            {
              error_code: 0,
              partition_index: 0,
              leader_id: 1,
              leader_epoch: -1,
              replica_nodes: [1],
              isr_nodes: [1],
              offline_replicas: [],
            },
          ],
          topic_authorized_operations: NONE,
        },
        {
          error_code: 3, // UNKNOWN_TOPIC_OR_PARTITION
          name: v >= 12 ? null : 'missing',
          topic_id: v >= 10 ? uuid('11111111111111111111111111111111') : ZERO_UUID,
          is_internal: false,
          partitions: [],
          topic_authorized_operations: NONE,
        },
      ],
      cluster_authorized_operations: v >= 8 && v <= 10 ? CLUSTER_OPERATIONS : NONE,
      error_code: 0,
    },
  ];
}

test('Metadata: version ranges', () => {
  assert.equal(request.valid_versions, '0-13');
  assert.equal(response.valid_versions, '0-13');
  assert.equal(request.flexible_versions, '9+');
});

test('Metadata request round-trips in every version', () => {
  assert.equal(assert_round_trips_in_every_version(request, request_samples).length, 14);
});

test('Metadata response round-trips in every version', () => {
  assert.equal(assert_round_trips_in_every_version(response, response_samples).length, 14);
});

test('Metadata: hand-computed layouts', () => {
  assert.deepEqual(encode(request, 0, { topics: [{ name: 't' }] }), hex('00000001', '0001 74'));
  assert.deepEqual(encode(request, 1, { topics: null }), hex('ffffffff'));
  assert.equal(decode(request, 1, hex('ffffffff')).topics, null);
  // v4 adds allow_auto_topic_creation (its default is true).
  assert.deepEqual(encode(request, 4, { topics: null }), hex('ffffffff', '01'));
  // v9 (flexible): compact array and name, topic tags, three flags (8-10 and 8+), body tags.
  assert.deepEqual(encode(request, 9, { topics: [{ name: 't' }] }), hex('02', '02 74', '00', '01', '00', '00', '00'));
  // v10: topic id before the (now nullable) name.
  const id = uuid('00112233445566778899aabbccddeeff');
  assert.deepEqual(
    encode(request, 10, { topics: [{ topic_id: id, name: null }] }),
    hex('02', '00112233445566778899aabbccddeeff', '00', '00', '01', '00', '00', '00'),
  );

  // Response v0: brokers (id, host, port), topics (error, name, partitions with replica and isr lists).
  const v0 = {
    brokers: [{ node_id: 1, host: 'h', port: 9092 }],
    topics: [
      {
        error_code: 0,
        name: 't',
        partitions: [{ error_code: 0, partition_index: 0, leader_id: 1, replica_nodes: [1], isr_nodes: [1] }],
      },
    ],
  };
  assert.deepEqual(
    encode(response, 0, v0),
    hex(
      '00000001',
      '00000001',
      '0001 68',
      '00002384',
      '00000001',
      '0000',
      '0001 74',
      '00000001',
      '0000',
      '00000000',
      '00000001',
      '00000001 00000001',
      '00000001 00000001',
    ),
  );
  // v13 (flexible): throttle, empty brokers, null cluster id, controller, empty topics, then the
  // top-level error code new in v13.
  assert.deepEqual(
    encode(response, 13, {
      throttle_time_ms: 0,
      brokers: [],
      cluster_id: null,
      controller_id: 1,
      topics: [],
      error_code: 58,
    }),
    hex('00000000', '01', '00', '00000001', '01', '003a', '00'),
  );
});
