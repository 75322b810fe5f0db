import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SHARE_ACKNOWLEDGE } from './79_share_acknowledge.ts';
import { assert_round_trip, assert_round_trips_in_every_version, decode, encode, hex, uuid } from './test_support.ts';

const { request, response } = SHARE_ACKNOWLEDGE;
const ORDERS_ID = uuid('3f2b8c1e5a6d4f7e9b0c1d2e3f405162');
const AUDIT_ID = uuid('a1b2c3d4e5f60718293a4b5c6d7e8f90');
const MEMBER_ID = 'Jm4uX3bXQn2cX1dZ0VtZ4g';
const GAP = 0;
const ACCEPT = 1;
const RELEASE = 2;
const REJECT = 3;
const RENEW = 4;

function request_samples(v: number) {
  return [
    {
      group_id: 'invoice-workers',
      member_id: MEMBER_ID,
      share_session_epoch: 5,
      is_renew_ack: false,
      topics: [
        {
          topic_id: ORDERS_ID,
          partitions: [
            {
              partition_index: 0,
              acknowledgement_batches: [
                {
                  first_offset: 100,
                  last_offset: 149,
                  acknowledge_types: [ACCEPT],
                  sluice_failure_reason: null,
                  sluice_release_delay_ms: -1,
                },
                {
                  first_offset: 150,
                  last_offset: 153,
                  acknowledge_types: [REJECT, GAP, ACCEPT, RELEASE],
                  sluice_failure_reason: null,
                  sluice_release_delay_ms: -1,
                },
              ],
            },
            {
              partition_index: 2,
              acknowledgement_batches: [
                {
                  first_offset: 8,
                  last_offset: 9,
                  acknowledge_types: [RELEASE],
                  sluice_failure_reason: 'billing timed out',
                  sluice_release_delay_ms: 2500,
                },
              ],
            },
          ],
        },
      ],
    },
    {
      group_id: 'invoice-workers',
      member_id: MEMBER_ID,
      share_session_epoch: 6,
      is_renew_ack: v >= 2,
      topics: [
        {
          topic_id: AUDIT_ID,
          partitions: [
            {
              partition_index: 3,
              acknowledgement_batches: [
                {
                  first_offset: 4000,
                  last_offset: 4010,
                  acknowledge_types: [v >= 2 ? RENEW : ACCEPT],
                  sluice_failure_reason: null,
                  sluice_release_delay_ms: -1,
                },
              ],
            },
          ],
        },
      ],
    },
    // closing the share session with nothing left to acknowledge
    { group_id: null, member_id: MEMBER_ID, share_session_epoch: -1, is_renew_ack: false, topics: [] },
  ];
}

function response_samples(v: number) {
  return [
    {
      throttle_time_ms: 0,
      error_code: 0,
      error_message: null,
      acquisition_lock_timeout_ms: v >= 2 ? 30000 : 0,
      responses: [
        {
          topic_id: ORDERS_ID,
          partitions: [
            {
              partition_index: 0,
              error_code: 0,
              error_message: null,
              current_leader: { leader_id: 1, leader_epoch: 5 },
            },
            {
              partition_index: 2,
              error_code: 121, // INVALID_RECORD_STATE
              error_message: 'The record state is invalid. The acknowledgement of delivery could not be completed.',
              current_leader: { leader_id: 1, leader_epoch: 5 },
            },
          ],
        },
        {
          topic_id: AUDIT_ID,
          partitions: [
            {
              partition_index: 3,
              error_code: 6,
              error_message: null,
              current_leader: { leader_id: 2, leader_epoch: 14 },
            },
          ], // NOT_LEADER_OR_FOLLOWER
        },
      ],
      node_endpoints: [{ node_id: 2, host: 'broker-2.internal', port: 9092, rack: 'us-east-1b' }],
    },
    {
      throttle_time_ms: 15,
      error_code: 122, // SHARE_SESSION_NOT_FOUND
      error_message: 'The share session was not found.',
      acquisition_lock_timeout_ms: 0,
      responses: [],
      node_endpoints: [],
    },
  ];
}

test('ShareAcknowledge: version ranges', () => {
  assert.equal(request.valid_versions, '1-2');
  assert.equal(response.valid_versions, '1-2');
  assert.equal(request.flexible_versions, '0+');
  assert.equal(response.flexible_versions, '0+');
});

test('ShareAcknowledge request round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(request, request_samples), [1, 2]);
});

test('ShareAcknowledge response round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(response, response_samples), [1, 2]);
});

const LAYOUT_TOPIC_ID = uuid('00112233445566778899aabbccddeeff');

test('ShareAcknowledge request v1 and v2: hand-computed layouts', () => {
  const topic_id = LAYOUT_TOPIC_ID;
  const value = {
    group_id: 'g',
    member_id: 'm',
    share_session_epoch: 2,
    is_renew_ack: true,
    topics: [
      {
        topic_id,
        partitions: [
          {
            partition_index: 1,
            acknowledgement_batches: [{ first_offset: 5, last_offset: 5, acknowledge_types: [4] }],
          },
        ],
      },
    ],
  };
  const topics = [
    '02',
    '00112233445566778899aabbccddeeff',
    '02',
    '00000001',
    '02',
    '0000000000000005',
    '0000000000000005',
    '02 04',
    '00',
    '00',
    '00',
    '00',
  ];
  // v1 has no renew flag; v2 puts it right after the session epoch
  assert.deepEqual(encode(request, 1, value), hex('02 67', '02 6d', '00000002', ...topics));
  assert.deepEqual(encode(request, 2, value), hex('02 67', '02 6d', '00000002', '01', ...topics));
  assert.equal(decode(request, 1, hex('02 67', '02 6d', '00000002', ...topics)).is_renew_ack, false);
  // a null group id is a compact length of 0
  assert.deepEqual(
    assert_round_trip(request, 2, {
      group_id: null,
      member_id: 'm',
      share_session_epoch: -1,
      is_renew_ack: false,
      topics: [],
    }),
    hex('00', '02 6d', 'ffffffff', '00', '01', '00'),
  );
});

test('ShareAcknowledge response v1 and v2: hand-computed layouts', () => {
  const topic_id = LAYOUT_TOPIC_ID;
  const reply = {
    throttle_time_ms: 0,
    error_code: 0,
    error_message: null,
    acquisition_lock_timeout_ms: 30000,
    responses: [
      {
        topic_id,
        partitions: [
          { partition_index: 1, error_code: 0, error_message: null, current_leader: { leader_id: 1, leader_epoch: 5 } },
        ],
      },
    ],
    node_endpoints: [],
  };
  const responses = [
    '02',
    '00112233445566778899aabbccddeeff',
    '02',
    '00000001',
    '0000',
    '00',
    '00000001 00000005 00',
    '00',
    '00',
    '01',
    '00',
  ];
  // the acquisition lock timeout appears from v2, after the error message
  assert.deepEqual(encode(response, 1, reply), hex('00000000', '0000', '00', ...responses));
  assert.deepEqual(assert_round_trip(response, 2, reply), hex('00000000', '0000', '00', '00007530', ...responses));
  assert.equal(decode(response, 1, hex('00000000', '0000', '00', ...responses)).acquisition_lock_timeout_ms, 0);
});
