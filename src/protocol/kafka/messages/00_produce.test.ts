import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PRODUCE } from './00_produce.ts';
import { ZERO_UUID, assert_round_trips_in_every_version, decode, encode, hex, uuid } from './test_support.ts';

const { request, response } = PRODUCE;
const ORDERS_ID = uuid('3f2b8c1e5a6d4f7e9b0c1d2e3f405162');
const AUDIT_ID = uuid('a1b2c3d4e5f60718293a4b5c6d7e8f90');
// Stand-ins for record batches: the codec treats them as opaque bytes.
const BATCH = hex(
  '0000000000000000 0000003b 00000000 02 c1d2e3f4 0000 00000000',
  '0000018f2a3b4c5d 0000018f2a3b4c5d ffffffffffffffff ffff ffffffff 00000001',
  '12 0000 0000 06 6b31 06 7631 00',
);
const LARGE_BATCH = Buffer.alloc(2048, 0x5a);

function request_samples(v: number) {
  const topic = (name: string, id: string) => ({ name: v <= 12 ? name : '', topic_id: v >= 13 ? id : ZERO_UUID });
  return [
    {
      transactional_id: v >= 3 ? 'payments-txn-7' : null,
      acks: -1,
      timeout_ms: 30000,
      topic_data: [
        {
          ...topic('orders', ORDERS_ID),
          partition_data: [
            { index: 0, records: BATCH },
            { index: 1, records: null },
          ],
        },
        { ...topic('audit', AUDIT_ID), partition_data: [{ index: 4, records: LARGE_BATCH }] },
      ],
      sluice_broker_append: false,
    },
    { transactional_id: null, acks: 1, timeout_ms: 1500, topic_data: [], sluice_broker_append: v >= 9 },
  ];
}

function response_samples(v: number) {
  return [
    {
      responses: [
        {
          name: v <= 12 ? 'orders' : '',
          topic_id: v >= 13 ? ORDERS_ID : ZERO_UUID,
          partition_responses: [
            {
              index: 0,
              error_code: 0,
              base_offset: 1042,
              log_append_time_ms: v >= 2 ? 1717171717171 : -1,
              log_start_offset: v >= 5 ? 17 : -1,
              record_errors: [],
              error_message: null,
              current_leader: v >= 10 ? { leader_id: 1, leader_epoch: 9 } : {},
            },
            {
              index: 1,
              error_code: 87, // INVALID_RECORD
              base_offset: -1,
              log_append_time_ms: -1,
              log_start_offset: v >= 5 ? 0 : -1,
              record_errors:
                v >= 8
                  ? [
                      { batch_index: 3, batch_index_error_message: 'compacted topic record without key' },
                      { batch_index: 5, batch_index_error_message: null },
                    ]
                  : [],
              error_message: v >= 8 ? 'One or more records have been rejected' : null,
              current_leader: v >= 10 ? { leader_id: 2, leader_epoch: 10 } : {},
            },
          ],
        },
      ],
      throttle_time_ms: v >= 1 ? 25 : 0,
      node_endpoints:
        v >= 10
          ? [
              { node_id: 1, host: 'broker-1.internal', port: 9092, rack: 'us-east-1a' },
              { node_id: 2, host: 'broker-2.internal', port: 9094, rack: null },
            ]
          : [],
    },
  ];
}

test('Produce: version ranges', () => {
  assert.equal(request.valid_versions, '0-13');
  assert.equal(response.valid_versions, '0-13');
  assert.equal(request.flexible_versions, '9+');
});

test('Produce request round-trips in every version', () => {
  const versions = assert_round_trips_in_every_version(request, request_samples);
  assert.deepEqual(versions, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
});

test('Produce response round-trips in every version', () => {
  const versions = assert_round_trips_in_every_version(response, response_samples);
  assert.deepEqual(versions, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
});

test('Produce: hand-computed layouts', () => {
  const value = {
    transactional_id: null,
    acks: -1,
    timeout_ms: 5000,
    topic_data: [{ name: 't', partition_data: [{ index: 2, records: hex('0a0b0c') }] }],
  };
  // v3: null int16 string, acks, timeout, int32 array counts, int16 topic name, int32 record length.
  assert.deepEqual(
    encode(request, 3, value),
    hex('ffff', 'ffff', '00001388', '00000001', '0001 74', '00000001', '00000002', '00000003 0a0b0c'),
  );
  // v0 has no transactional id.
  assert.deepEqual(
    encode(request, 0, value),
    hex('ffff', '00001388', '00000001', '0001 74', '00000001', '00000002', '00000003 0a0b0c'),
  );
  // v13 (flexible): compact string, topic id instead of name, compact array counts and bytes, empty tag sections.
  const topic_id = uuid('00112233445566778899aabbccddeeff');
  const v13 = {
    ...value,
    transactional_id: 'x',
    topic_data: [{ topic_id, partition_data: [{ index: 2, records: hex('0a0b0c') }] }],
  };
  const v13_bytes = hex(
    '02 78',
    'ffff',
    '00001388',
    '02',
    '00112233445566778899aabbccddeeff',
    '02',
    '00000002',
    '04 0a0b0c',
    '00',
    '00',
    '00',
  );
  assert.deepEqual(encode(request, 13, v13), v13_bytes);
  const decoded = decode(request, 13, v13_bytes);
  assert.equal((decoded.topic_data as Array<{ topic_id: string }>)[0]!.topic_id, topic_id);

  // Response v0: no throttle time, no log append time.
  const partition = { index: 0, error_code: 0, base_offset: 5, log_append_time_ms: -1, log_start_offset: 0 };
  assert.deepEqual(
    encode(response, 0, { responses: [{ name: 't', partition_responses: [partition] }] }),
    hex('00000001', '0001 74', '00000001', '00000000', '0000', '0000000000000005'),
  );
  // Response v10: current_leader is tag 0 of the partition; node_endpoints is tag 0 of the body.
  const v10 = {
    responses: [
      {
        name: 't',
        partition_responses: [
          { ...partition, record_errors: [], error_message: null, current_leader: { leader_id: 1, leader_epoch: 2 } },
        ],
      },
    ],
    throttle_time_ms: 0,
    node_endpoints: [{ node_id: 1, host: 'h', port: 9092, rack: null }],
  };
  assert.deepEqual(
    encode(response, 10, v10),
    hex(
      '02',
      '02 74',
      '02',
      '00000000',
      '0000',
      '0000000000000005',
      'ffffffffffffffff',
      '0000000000000000',
      '01',
      '00',
      '01 00 09 00000001 00000002 00', // partition tags: one, tag 0, 9 bytes
      '00', // topic tags
      '00000000',
      '01 00 0d 02 00000001 02 68 00002384 00 00', // body tags: one, tag 0, 13 bytes
    ),
  );
});
