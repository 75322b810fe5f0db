import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SHARE_FETCH } from './78_share_fetch.ts';
import { assert_round_trip, assert_round_trips_in_every_version, decode, encode, hex, uuid } from './test_support.ts';

const { request, response } = SHARE_FETCH;
const ORDERS_ID = uuid('3f2b8c1e5a6d4f7e9b0c1d2e3f405162');
const AUDIT_ID = uuid('a1b2c3d4e5f60718293a4b5c6d7e8f90');
const MEMBER_ID = 'Jm4uX3bXQn2cX1dZ0VtZ4g';
const GAP = 0;
const ACCEPT = 1;
const RELEASE = 2;
const REJECT = 3;
const RENEW = 4;
// A stand-in for a record batch (base offset 100, length, epoch, magic 2, crc, ...).
const SMALL_BATCH = hex('0000000000000064 00000031 00000005 02 a1b2c3d4 0000 00000000 0000018f2a3b4c5d');

/** A new share session: epoch 0, nothing to acknowledge yet. */
function opening_request() {
  return {
    group_id: 'invoice-workers',
    member_id: MEMBER_ID,
    share_session_epoch: 0,
    max_wait_ms: 500,
    min_bytes: 1,
    max_bytes: 52428800,
    max_records: 500,
    batch_size: 500,
    share_acquire_mode: 0,
    is_renew_ack: false,
    topics: [
      {
        topic_id: ORDERS_ID,
        partitions: [
          { partition_index: 0, acknowledgement_batches: [] },
          { partition_index: 1, acknowledgement_batches: [] },
        ],
      },
    ],
    forgotten_topics_data: [],
  };
}

/** An open session: acknowledgements by range and per offset (with a gap), a delayed release, forgotten partitions. */
function acknowledging_request(v: number) {
  return {
    group_id: 'invoice-workers',
    member_id: MEMBER_ID,
    share_session_epoch: 4,
    max_wait_ms: 500,
    min_bytes: 1,
    max_bytes: 0x7fffffff,
    max_records: 200,
    batch_size: 100,
    share_acquire_mode: v >= 2 ? 1 : 0, // record-limit
    is_renew_ack: false,
    topics: [
      {
        topic_id: ORDERS_ID,
        partitions: [
          {
            partition_index: 0,
            acknowledgement_batches: [
              // one type for the whole range
              {
                first_offset: 100,
                last_offset: 149,
                acknowledge_types: [ACCEPT],
                sluice_failure_reason: null,
                sluice_release_delay_ms: -1,
              },
              // one type per offset, with a gap (a compacted-away offset)
              {
                first_offset: 150,
                last_offset: 154,
                acknowledge_types: [ACCEPT, GAP, RELEASE, REJECT, ACCEPT],
                sluice_failure_reason: null,
                sluice_release_delay_ms: -1,
              },
            ],
          },
        ],
      },
      {
        topic_id: AUDIT_ID,
        partitions: [
          {
            partition_index: 3,
            acknowledgement_batches: [
              {
                first_offset: 7,
                last_offset: 7,
                acknowledge_types: [RELEASE],
                sluice_failure_reason: 'billing timed out',
                sluice_release_delay_ms: 2500,
              },
            ],
          },
        ],
      },
    ],
    forgotten_topics_data: [{ topic_id: AUDIT_ID, partitions: [0, 2] }],
  };
}

/** Closing the session: epoch -1, final acknowledgements, nothing more to fetch. */
function closing_request(v: number) {
  return {
    group_id: null,
    member_id: MEMBER_ID,
    share_session_epoch: -1,
    max_wait_ms: 0,
    min_bytes: 0,
    max_bytes: 0,
    max_records: 0,
    batch_size: 0,
    share_acquire_mode: 0,
    is_renew_ack: v >= 2,
    topics: [
      {
        topic_id: ORDERS_ID,
        partitions: [
          {
            partition_index: 1,
            acknowledgement_batches: [
              {
                first_offset: 40,
                last_offset: 42,
                acknowledge_types: v >= 2 ? [RENEW] : [ACCEPT],
                sluice_failure_reason: null,
                sluice_release_delay_ms: -1,
              },
            ],
          },
        ],
      },
    ],
    forgotten_topics_data: [],
  };
}

function request_samples(v: number) {
  return [opening_request(), acknowledging_request(v), closing_request(v)];
}

function response_samples(_v: number) {
  return [
    {
      throttle_time_ms: 0,
      error_code: 0,
      error_message: null,
      acquisition_lock_timeout_ms: 30000,
      responses: [
        {
          topic_id: ORDERS_ID,
          partitions: [
            {
              partition_index: 0,
              error_code: 0,
              error_message: null,
              acknowledge_error_code: 0,
              acknowledge_error_message: null,
              current_leader: { leader_id: 1, leader_epoch: 5 },
              records: SMALL_BATCH,
              acquired_records: [
                { first_offset: 100, last_offset: 104, delivery_count: 1 },
                { first_offset: 105, last_offset: 105, delivery_count: 3 },
              ],
            },
            {
              partition_index: 1,
              error_code: 0,
              error_message: null,
              acknowledge_error_code: 121, // INVALID_RECORD_STATE
              acknowledge_error_message: 'The record state is invalid.',
              current_leader: { leader_id: 1, leader_epoch: 5 },
              records: Buffer.alloc(0),
              acquired_records: [],
            },
          ],
        },
        {
          topic_id: AUDIT_ID,
          partitions: [
            {
              partition_index: 3,
              error_code: 6, // NOT_LEADER_OR_FOLLOWER
              error_message: 'This broker is not the leader of audit-3.',
              acknowledge_error_code: 0,
              acknowledge_error_message: null,
              current_leader: { leader_id: 3, leader_epoch: 9 },
              records: Buffer.alloc(0),
              acquired_records: [],
            },
          ],
        },
      ],
      node_endpoints: [{ node_id: 3, host: 'broker-3.internal', port: 9092, rack: null }],
    },
    {
      throttle_time_ms: 40,
      error_code: 123, // INVALID_SHARE_SESSION_EPOCH
      error_message: 'The share session epoch is invalid.',
      acquisition_lock_timeout_ms: 0,
      responses: [],
      node_endpoints: [],
    },
  ];
}

test('ShareFetch: version ranges', () => {
  assert.equal(request.valid_versions, '1-2');
  assert.equal(response.valid_versions, '1-2');
  assert.equal(request.flexible_versions, '0+');
  assert.equal(response.flexible_versions, '0+');
});

test('ShareFetch request round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(request, request_samples), [1, 2]);
});

test('ShareFetch response round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(response, response_samples), [1, 2]);
});

test('ShareFetch: hand-computed request layouts', () => {
  const topic_id = uuid('00112233445566778899aabbccddeeff');
  const value = {
    group_id: 'g',
    member_id: 'm',
    share_session_epoch: 1,
    max_wait_ms: 500,
    min_bytes: 1,
    max_records: 500,
    batch_size: 100,
    share_acquire_mode: 1,
    is_renew_ack: true,
    topics: [
      {
        topic_id,
        partitions: [
          {
            partition_index: 0,
            acknowledgement_batches: [{ first_offset: 10, last_offset: 12, acknowledge_types: [1, 0, 3] }],
          },
        ],
      },
    ],
  };
  const head = ['02 67', '02 6d', '00000001', '000001f4', '00000001', '7fffffff', '000001f4', '00000064'];
  const topics = [
    '02',
    '00112233445566778899aabbccddeeff',
    '02',
    '00000000', // partition 0; no per-partition max bytes from v1
    '02',
    '000000000000000a',
    '000000000000000c',
    '04 01 00 03',
    '00', // batch 10..12: accept, gap, reject
    '00',
    '00', // partition tags, topic tags
    '01', // no forgotten topics
    '00',
  ];
  // v1: the missing max bytes defaults to 0x7fffffff; no acquire mode, no renew flag
  assert.deepEqual(encode(request, 1, value), hex(...head, ...topics));
  // v2: acquire mode (int8) and renew flag (bool) sit between the batch size and the topics
  assert.deepEqual(encode(request, 2, value), hex(...head, '01', '01', ...topics));
  // fields a version lacks decode to their defaults
  const decoded = decode(request, 1, hex(...head, ...topics));
  assert.equal(decoded.max_bytes, 0x7fffffff);
  assert.equal(decoded.share_acquire_mode, 0);
  assert.equal(decoded.is_renew_ack, false);
});

test('ShareFetch: hand-computed response layout', () => {
  const topic_id = uuid('00112233445566778899aabbccddeeff');
  const value = {
    throttle_time_ms: 0,
    error_code: 0,
    error_message: null,
    acquisition_lock_timeout_ms: 30000,
    responses: [
      {
        topic_id,
        partitions: [
          {
            partition_index: 0,
            error_code: 0,
            error_message: null,
            acknowledge_error_code: 0,
            acknowledge_error_message: null,
            current_leader: { leader_id: 1, leader_epoch: 5 },
            records: hex('aabb'),
            acquired_records: [{ first_offset: 10, last_offset: 11, delivery_count: 1 }],
          },
        ],
      },
    ],
    node_endpoints: [{ node_id: 1, host: 'h', port: 9092, rack: null }],
  };
  const bytes = hex(
    '00000000',
    '0000',
    '00',
    '00007530',
    '02',
    '00112233445566778899aabbccddeeff',
    '02',
    '00000000',
    '0000',
    '00',
    '0000',
    '00',
    '00000001 00000005 00', // current leader and its tags
    '03 aabb', // compact records: length + 1
    '02',
    '000000000000000a',
    '000000000000000b',
    '0001',
    '00',
    '00',
    '00', // partition tags, topic tags
    '02',
    '00000001',
    '02 68',
    '00002384',
    '00',
    '00',
    '00',
  );
  for (const version of [1, 2]) assert.deepEqual(assert_round_trip(response, version, value), bytes);
});

test('ShareFetch: records are not nullable in v1+', () => {
  const partition = {
    partition_index: 0,
    error_code: 0,
    error_message: null,
    acknowledge_error_code: 0,
    acknowledge_error_message: null,
    current_leader: { leader_id: 1, leader_epoch: 5 },
    records: null,
    acquired_records: [],
  };
  assert.throws(
    () =>
      encode(response, 1, {
        responses: [{ topic_id: uuid('00112233445566778899aabbccddeeff'), partitions: [partition] }],
      }),
    /records is not nullable/,
  );
  // an empty partition carries a zero-length batch (compact length 01); compact 00 (null) is rejected
  const empty = hex(
    '00000000',
    '0000',
    '00',
    '00000000',
    '02',
    '00112233445566778899aabbccddeeff',
    '02',
    '00000000',
    '0000',
    '00',
    '0000',
    '00',
    '00000001 00000005 00',
  );
  assert.deepEqual(decode(response, 2, Buffer.concat([empty, hex('01', '01', '00', '00', '01', '00')])).responses, [
    {
      topic_id: uuid('00112233445566778899aabbccddeeff'),
      partitions: [{ ...partition, records: Buffer.alloc(0) }],
    },
  ]);
  assert.throws(
    () => decode(response, 2, Buffer.concat([empty, hex('00', '01', '00', '00', '01', '00')])),
    /records is null but not nullable/,
  );
});
