import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LIST_GROUPS } from './16_list_groups.ts';
import { assert_round_trip, assert_round_trips_in_every_version, decode, hex } from './test_support.ts';

const { request, response } = LIST_GROUPS;

function request_samples(v: number) {
  return [
    { states_filter: v >= 4 ? ['Stable', 'Empty'] : [], types_filter: v >= 5 ? ['classic', 'consumer'] : [] },
    { states_filter: [], types_filter: [] },
  ];
}

function response_samples(v: number) {
  return [
    {
      throttle_time_ms: v >= 1 ? 2 : 0,
      error_code: 0,
      groups: [
        {
          group_id: 'payments-consumers',
          protocol_type: 'consumer',
          group_state: v >= 4 ? 'Stable' : '',
          group_type: v >= 5 ? 'classic' : '',
        },
        {
          group_id: 'connect-cluster',
          protocol_type: 'connect',
          group_state: v >= 4 ? 'Empty' : '',
          group_type: v >= 5 ? 'classic' : '',
        },
      ],
    },
    { throttle_time_ms: 0, error_code: 14, groups: [] },
  ];
}

test('ListGroups: version ranges', () => {
  assert.equal(request.valid_versions, '0-5');
  assert.equal(response.valid_versions, '0-5');
  assert.equal(request.flexible_versions, '3+');
  assert.equal(response.flexible_versions, '3+');
});

test('ListGroups request round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(request, request_samples), [0, 1, 2, 3, 4, 5]);
});

test('ListGroups response round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(response, response_samples), [0, 1, 2, 3, 4, 5]);
});

test('ListGroups: hand-computed layouts', () => {
  // the request body is empty before v3, and only a tag section in v3
  assert.deepEqual(assert_round_trip(request, 0, { states_filter: [], types_filter: [] }), hex(''));
  assert.deepEqual(assert_round_trip(request, 3, { states_filter: [], types_filter: [] }), hex('00'));
  assert.deepEqual(
    assert_round_trip(request, 5, { states_filter: ['Stable'], types_filter: ['classic'] }),
    hex('02 07 537461626c65', '02 08 636c6173736963', '00'),
  );
  assert.deepEqual(
    assert_round_trip(response, 0, {
      throttle_time_ms: 0,
      error_code: 0,
      groups: [{ group_id: 'g', protocol_type: 'consumer', group_state: '', group_type: '' }],
    }),
    hex('0000', '00000001', '0001 67', '0008 636f6e73756d6572'),
  );
  assert.deepEqual(
    assert_round_trip(response, 4, {
      throttle_time_ms: 2,
      error_code: 0,
      groups: [{ group_id: 'g', protocol_type: '', group_state: 'Empty', group_type: '' }],
    }),
    hex('00000002', '0000', '02', '02 67', '01', '06 456d707479', '00', '00'),
  );
});

test('ListGroups: unknown tagged fields in a flexible version are skipped', () => {
  assert.deepEqual(decode(request, 4, hex('02 06 456d707479', '01 00 00')), {
    states_filter: ['Empty'],
    types_filter: [],
  });
});
