import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DESCRIBE_GROUPS } from './15_describe_groups.ts';
import { assert_round_trip, assert_round_trips_in_every_version, decode, hex } from './test_support.ts';

const { request, response } = DESCRIBE_GROUPS;

const NO_OPERATIONS = -2147483648;
const SUBSCRIPTION = hex('0001', '00000001', '0006 6f7264657273', 'ffffffff');
const ASSIGNMENT = hex('0001', '00000001', '0006 6f7264657273', '00000002 00000000 00000001', 'ffffffff');

function request_samples(v: number) {
  return [{ groups: ['payments-consumers', 'billing'], include_authorized_operations: v >= 3 }];
}

function response_samples(v: number) {
  return [
    {
      throttle_time_ms: v >= 1 ? 3 : 0,
      groups: [
        {
          error_code: 0,
          error_message: null,
          group_id: 'payments-consumers',
          group_state: 'Stable',
          protocol_type: 'consumer',
          protocol_data: 'range',
          members: [
            {
              member_id: 'rdkafka-5c0e6f7a-1d2b-4c3d-9e8f-0a1b2c3d4e5f',
              group_instance_id: v >= 4 ? 'payments-pod-0' : null,
              client_id: 'rdkafka',
              client_host: '/10.0.0.5',
              member_metadata: SUBSCRIPTION,
              member_assignment: ASSIGNMENT,
            },
            {
              member_id: 'consumer-2-b',
              group_instance_id: null,
              client_id: 'kafkajs',
              client_host: '/10.0.0.6',
              member_metadata: SUBSCRIPTION,
              member_assignment: Buffer.alloc(0),
            },
          ],
          // DESCRIBE | READ | DELETE as a bit set
          authorized_operations: v >= 3 ? (1 << 8) | (1 << 3) | (1 << 6) : NO_OPERATIONS,
        },
        {
          // v6 reports an unknown group as an error with a message; earlier versions as a dead group
          error_code: v >= 6 ? 69 : 0,
          error_message: v >= 6 ? 'Group billing not found.' : null,
          group_id: 'billing',
          group_state: 'Dead',
          protocol_type: '',
          protocol_data: '',
          members: [],
          authorized_operations: NO_OPERATIONS,
        },
      ],
    },
  ];
}

test('DescribeGroups: version ranges', () => {
  assert.equal(request.valid_versions, '0-6');
  assert.equal(response.valid_versions, '0-6');
  assert.equal(request.flexible_versions, '5+');
  assert.equal(response.flexible_versions, '5+');
});

test('DescribeGroups request round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(request, request_samples), [0, 1, 2, 3, 4, 5, 6]);
});

test('DescribeGroups response round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(response, response_samples), [0, 1, 2, 3, 4, 5, 6]);
});

test('DescribeGroups: hand-computed layouts', () => {
  assert.deepEqual(
    assert_round_trip(request, 0, { groups: ['g'], include_authorized_operations: false }),
    hex('00000001', '0001 67'),
  );
  assert.deepEqual(
    assert_round_trip(request, 3, { groups: ['g'], include_authorized_operations: true }),
    hex('00000001', '0001 67', '01'),
  );
  assert.deepEqual(
    assert_round_trip(request, 5, { groups: ['g'], include_authorized_operations: false }),
    hex('02', '02 67', '00', '00'),
  );
  const group = {
    error_code: 0,
    error_message: null,
    group_id: 'g',
    group_state: 'S',
    protocol_type: 'c',
    protocol_data: 'r',
    members: [
      {
        member_id: 'm',
        group_instance_id: null,
        client_id: 'c',
        client_host: 'h',
        member_metadata: hex('01'),
        member_assignment: hex('02'),
      },
    ],
    authorized_operations: NO_OPERATIONS,
  };
  // v4: nullable instance id after the member id; authorized operations closing the group
  assert.deepEqual(
    assert_round_trip(response, 4, { throttle_time_ms: 1, groups: [group] }),
    hex(
      '00000001',
      '00000001',
      '0000',
      '0001 67',
      '0001 53',
      '0001 63',
      '0001 72',
      '00000001',
      '0001 6d',
      'ffff',
      '0001 63',
      '0001 68',
      '00000001 01',
      '00000001 02',
      '80000000',
    ),
  );
  // v6: error message right after the error code
  assert.deepEqual(
    assert_round_trip(response, 6, {
      throttle_time_ms: 1,
      groups: [{ ...group, error_code: 69, error_message: 'x', members: [] }],
    }),
    hex('00000001', '02', '0045', '02 78', '02 67', '02 53', '02 63', '02 72', '01', '80000000', '00', '00'),
  );
});

test('DescribeGroups: unknown tagged fields in a flexible version are skipped', () => {
  assert.deepEqual(decode(request, 5, hex('02', '02 67', '01', '01 00 02 abcd')), {
    groups: ['g'],
    include_authorized_operations: true,
  });
});
