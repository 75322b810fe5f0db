import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SHARE_GROUP_DESCRIBE } from './77_share_group_describe.ts';
import { assert_round_trip, assert_round_trips_in_every_version, decode, hex, uuid } from './test_support.ts';

const { request, response } = SHARE_GROUP_DESCRIBE;
const ORDERS_ID = uuid('3f2b8c1e5a6d4f7e9b0c1d2e3f405162');
const AUDIT_ID = uuid('a1b2c3d4e5f60718293a4b5c6d7e8f90');
const NO_AUTHORIZED_OPERATIONS = -2147483648;

function request_samples(_v: number) {
  return [
    { group_ids: ['invoice-workers', 'audit-readers'], include_authorized_operations: true },
    { group_ids: [], include_authorized_operations: false },
  ];
}

function response_samples(_v: number) {
  return [
    {
      throttle_time_ms: 0,
      groups: [
        {
          error_code: 0,
          error_message: null,
          group_id: 'invoice-workers',
          group_state: 'Stable',
          group_epoch: 12,
          assignment_epoch: 12,
          assignor_name: 'simple',
          members: [
            {
              member_id: 'Jm4uX3bXQn2cX1dZ0VtZ4g',
              rack_id: 'us-east-1a',
              member_epoch: 12,
              client_id: 'invoice-worker-1',
              client_host: '/10.0.3.17',
              subscribed_topic_names: ['orders', 'audit'],
              assignment: {
                topic_partitions: [
                  { topic_id: ORDERS_ID, topic_name: 'orders', partitions: [0, 1, 2] },
                  { topic_id: AUDIT_ID, topic_name: 'audit', partitions: [0] },
                ],
              },
            },
            {
              member_id: 'q9Zr1k2LS0ay7c1m3o5Xcw',
              rack_id: null,
              member_epoch: 11,
              client_id: 'invoice-worker-2',
              client_host: '/10.0.3.18',
              subscribed_topic_names: ['orders'],
              assignment: { topic_partitions: [] },
            },
          ],
          authorized_operations: 0b0000_1011_0000_0000,
        },
        {
          error_code: 69, // GROUP_ID_NOT_FOUND
          error_message: 'Group audit-readers not found.',
          group_id: 'audit-readers',
          group_state: '',
          group_epoch: 0,
          assignment_epoch: 0,
          assignor_name: '',
          members: [],
          authorized_operations: NO_AUTHORIZED_OPERATIONS,
        },
      ],
    },
    { throttle_time_ms: 25, groups: [] },
  ];
}

test('ShareGroupDescribe: version ranges', () => {
  assert.equal(request.valid_versions, '1');
  assert.equal(response.valid_versions, '1');
  assert.equal(request.flexible_versions, '1+');
  assert.equal(response.flexible_versions, '1+');
});

test('ShareGroupDescribe request round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(request, request_samples), [1]);
});

test('ShareGroupDescribe response round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(response, response_samples), [1]);
});

test('ShareGroupDescribe: hand-computed layouts', () => {
  assert.deepEqual(
    assert_round_trip(request, 1, { group_ids: ['g'], include_authorized_operations: true }),
    hex('02 02 67', '01', '00'),
  );

  const topic_id = uuid('00112233445566778899aabbccddeeff');
  const value = {
    throttle_time_ms: 0,
    groups: [
      {
        error_code: 0,
        error_message: null,
        group_id: 'g',
        group_state: 'Stable',
        group_epoch: 2,
        assignment_epoch: 2,
        assignor_name: 'simple',
        members: [
          {
            member_id: 'm',
            rack_id: null,
            member_epoch: 2,
            client_id: 'c',
            client_host: 'h',
            subscribed_topic_names: ['t'],
            assignment: { topic_partitions: [{ topic_id, topic_name: 't', partitions: [0] }] },
          },
        ],
        authorized_operations: NO_AUTHORIZED_OPERATIONS,
      },
    ],
  };
  assert.deepEqual(
    assert_round_trip(response, 1, value),
    hex(
      '00000000',
      '02',
      // group: error, null message, id, state, epochs, assignor
      '0000',
      '00',
      '02 67',
      '07 537461626c65',
      '00000002',
      '00000002',
      '07 73696d706c65',
      '02',
      // member: id, null rack, epoch, client id, host, subscription
      '02 6d',
      '00',
      '00000002',
      '02 63',
      '02 68',
      '02 02 74',
      // assignment struct (not nullable, so no presence byte): one topic-partitions entry
      '02',
      '00112233445566778899aabbccddeeff',
      '02 74',
      '02 00000000',
      '00',
      '00',
      '00', // member tags
      '80000000',
      '00', // authorized operations, group tags
      '00',
    ),
  );
});

test('ShareGroupDescribe: unknown tagged fields of a group are skipped', () => {
  const bytes = hex(
    '00000000',
    '02',
    '0045',
    '00',
    '02 67',
    '01',
    'ffffffff',
    'ffffffff',
    '01',
    '01',
    '80000000',
    '01 07 01 00',
    '00',
  );
  assert.deepEqual(decode(response, 1, bytes), {
    throttle_time_ms: 0,
    groups: [
      {
        error_code: 69,
        error_message: null,
        group_id: 'g',
        group_state: '',
        group_epoch: -1,
        assignment_epoch: -1,
        assignor_name: '',
        members: [],
        authorized_operations: -2147483648,
      },
    ],
  });
});
