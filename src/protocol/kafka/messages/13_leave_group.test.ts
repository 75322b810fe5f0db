import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LEAVE_GROUP } from './13_leave_group.ts';
import { assert_round_trip, assert_round_trips_in_every_version, decode, hex } from './test_support.ts';

const { request, response } = LEAVE_GROUP;

function request_samples(v: number) {
  if (v <= 2)
    return [{ group_id: 'payments-consumers', member_id: 'rdkafka-5c0e6f7a-1d2b-4c3d-9e8f-0a1b2c3d4e5f', members: [] }];
  return [
    {
      group_id: 'payments-consumers',
      member_id: '',
      members: [
        {
          member_id: 'rdkafka-5c0e6f7a-1d2b-4c3d-9e8f-0a1b2c3d4e5f',
          group_instance_id: null,
          reason: v >= 5 ? 'the consumer is being closed' : null,
        },
        { member_id: '', group_instance_id: 'payments-pod-1', reason: null },
      ],
    },
  ];
}

function response_samples(v: number) {
  if (v <= 2) return [{ throttle_time_ms: v >= 1 ? 7 : 0, error_code: 0, members: [] }];
  return [
    {
      throttle_time_ms: 7,
      error_code: 0,
      members: [
        { member_id: 'rdkafka-5c0e6f7a-1d2b-4c3d-9e8f-0a1b2c3d4e5f', group_instance_id: null, error_code: 0 },
        { member_id: '', group_instance_id: 'payments-pod-1', error_code: 25 },
      ],
    },
  ];
}

test('LeaveGroup: version ranges', () => {
  assert.equal(request.valid_versions, '0-5');
  assert.equal(response.valid_versions, '0-5');
  assert.equal(request.flexible_versions, '4+');
  assert.equal(response.flexible_versions, '4+');
});

test('LeaveGroup request round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(request, request_samples), [0, 1, 2, 3, 4, 5]);
});

test('LeaveGroup response round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(response, response_samples), [0, 1, 2, 3, 4, 5]);
});

test('LeaveGroup: hand-computed layouts', () => {
  assert.deepEqual(
    assert_round_trip(request, 0, { group_id: 'g', member_id: 'm', members: [] }),
    hex('0001 67', '0001 6d'),
  );
  // v3: the single member id gives way to a member array
  const batch = { group_id: 'g', member_id: '', members: [{ member_id: 'm', group_instance_id: null, reason: null }] };
  assert.deepEqual(assert_round_trip(request, 3, batch), hex('0001 67', '00000001', '0001 6d', 'ffff'));
  assert.deepEqual(assert_round_trip(request, 4, batch), hex('02 67', '02', '02 6d', '00', '00', '00'));
  assert.deepEqual(
    assert_round_trip(request, 5, { ...batch, members: [{ member_id: 'm', group_instance_id: 'i', reason: 'r' }] }),
    hex('02 67', '02', '02 6d', '02 69', '02 72', '00', '00'),
  );
  assert.deepEqual(assert_round_trip(response, 0, { throttle_time_ms: 0, error_code: 0, members: [] }), hex('0000'));
  assert.deepEqual(
    assert_round_trip(response, 4, {
      throttle_time_ms: 7,
      error_code: 0,
      members: [{ member_id: 'm', group_instance_id: null, error_code: 25 }],
    }),
    hex('00000007', '0000', '02', '02 6d', '00', '0019', '00', '00'),
  );
});

test('LeaveGroup: unknown tagged fields in a flexible version are skipped', () => {
  const bytes = hex('02 67', '02', '02 6d', '00', '01 02 01 ff', '00');
  assert.deepEqual(decode(request, 4, bytes), {
    group_id: 'g',
    member_id: '',
    members: [{ member_id: 'm', group_instance_id: null, reason: null }],
  });
});
