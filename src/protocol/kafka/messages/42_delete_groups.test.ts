import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DELETE_GROUPS } from './42_delete_groups.ts';
import { assert_round_trip, assert_round_trips_in_every_version, decode, hex } from './test_support.ts';

const { request, response } = DELETE_GROUPS;

function request_samples(_v: number) {
  return [{ groups_names: ['payments-consumers', 'billing'] }];
}

function response_samples(v: number) {
  return [
    {
      throttle_time_ms: v >= 1 ? 4 : 0,
      results: [
        { group_id: 'payments-consumers', error_code: 0 },
        { group_id: 'billing', error_code: 68 },
      ],
    },
  ];
}

test('DeleteGroups: version ranges', () => {
  assert.equal(request.valid_versions, '0-2');
  assert.equal(response.valid_versions, '0-2');
  assert.equal(request.flexible_versions, '2+');
  assert.equal(response.flexible_versions, '2+');
});

test('DeleteGroups request round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(request, request_samples), [0, 1, 2]);
});

test('DeleteGroups response round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(response, response_samples), [0, 1, 2]);
});

test('DeleteGroups: hand-computed layouts', () => {
  assert.deepEqual(assert_round_trip(request, 0, { groups_names: ['g'] }), hex('00000001', '0001 67'));
  assert.deepEqual(assert_round_trip(request, 2, { groups_names: ['g'] }), hex('02', '02 67', '00'));
  const reply = { throttle_time_ms: 4, results: [{ group_id: 'g', error_code: 68 }] };
  // throttle time is present from v0 in this API
  assert.deepEqual(assert_round_trip(response, 0, reply), hex('00000004', '00000001', '0001 67', '0044'));
  assert.deepEqual(assert_round_trip(response, 2, reply), hex('00000004', '02', '02 67', '0044', '00', '00'));
});

test('DeleteGroups: unknown tagged fields in a flexible version are skipped', () => {
  assert.deepEqual(decode(response, 2, hex('00000004', '02', '02 67', '0044', '01 01 01 ff', '00')), {
    throttle_time_ms: 4,
    results: [{ group_id: 'g', error_code: 68 }],
  });
});
