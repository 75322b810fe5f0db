import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FIND_COORDINATOR } from './10_find_coordinator.ts';
import { assert_round_trip, assert_round_trips_in_every_version, decode, hex } from './test_support.ts';

const { request, response } = FIND_COORDINATOR;

function request_samples(v: number) {
  if (v <= 3) {
    const group = { key: 'payments-consumers', key_type: 0, coordinator_keys: [] };
    // key type 1 (transaction) exists from v1
    return v >= 1 ? [group, { key: 'txn-payments-1', key_type: 1, coordinator_keys: [] }] : [group];
  }
  return [
    { key: '', key_type: 0, coordinator_keys: ['payments-consumers', 'billing'] },
    { key: '', key_type: 1, coordinator_keys: ['txn-payments-1'] },
  ];
}

function response_samples(v: number) {
  if (v <= 3) {
    return [
      {
        throttle_time_ms: v >= 1 ? 10 : 0,
        error_code: 0,
        error_message: v >= 1 ? null : '',
        node_id: 2,
        host: 'broker-2.sluice.internal',
        port: 9092,
        coordinators: [],
      },
      {
        throttle_time_ms: 0,
        error_code: 15,
        error_message: v >= 1 ? 'The coordinator is not available.' : '',
        node_id: -1,
        host: '',
        port: -1,
        coordinators: [],
      },
    ];
  }
  return [
    {
      throttle_time_ms: 10,
      error_code: 0,
      error_message: '',
      node_id: 0,
      host: '',
      port: 0,
      coordinators: [
        {
          key: 'payments-consumers',
          node_id: 2,
          host: 'broker-2.sluice.internal',
          port: 9092,
          error_code: 0,
          error_message: null,
        },
        {
          key: 'billing',
          node_id: -1,
          host: '',
          port: -1,
          error_code: 15,
          error_message: 'The coordinator is not available.',
        },
      ],
    },
  ];
}

test('FindCoordinator: version ranges', () => {
  assert.equal(request.valid_versions, '0-6');
  assert.equal(response.valid_versions, '0-6');
  assert.equal(request.flexible_versions, '3+');
  assert.equal(response.flexible_versions, '3+');
});

test('FindCoordinator request round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(request, request_samples), [0, 1, 2, 3, 4, 5, 6]);
});

test('FindCoordinator response round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(response, response_samples), [0, 1, 2, 3, 4, 5, 6]);
});

test('FindCoordinator: hand-computed layouts', () => {
  // v0: just the key; v1 adds the key type
  assert.deepEqual(assert_round_trip(request, 0, { key: 'g', key_type: 0, coordinator_keys: [] }), hex('0001 67'));
  assert.deepEqual(
    assert_round_trip(request, 1, { key: 'g', key_type: 1, coordinator_keys: [] }),
    hex('0001 67', '01'),
  );
  // v4: the key type, then a compact array of keys
  assert.deepEqual(
    assert_round_trip(request, 4, { key: '', key_type: 0, coordinator_keys: ['g'] }),
    hex('00', '02', '02 67', '00'),
  );
  // response v0: error, node, host, port
  assert.deepEqual(
    assert_round_trip(response, 0, {
      throttle_time_ms: 0,
      error_code: 0,
      error_message: '',
      node_id: 2,
      host: 'h',
      port: 9092,
      coordinators: [],
    }),
    hex('0000', '00000002', '0001 68', '00002384'),
  );
  // response v3: flexible, null message = 0
  assert.deepEqual(
    assert_round_trip(response, 3, {
      throttle_time_ms: 10,
      error_code: 0,
      error_message: null,
      node_id: 2,
      host: 'h',
      port: 9092,
      coordinators: [],
    }),
    hex('0000000a', '0000', '00', '00000002', '02 68', '00002384', '00'),
  );
  // response v4: one entry per key
  assert.deepEqual(
    assert_round_trip(response, 4, {
      throttle_time_ms: 0,
      error_code: 0,
      error_message: '',
      node_id: 0,
      host: '',
      port: 0,
      coordinators: [{ key: 'g', node_id: 2, host: 'h', port: 9092, error_code: 0, error_message: null }],
    }),
    hex('00000000', '02', '02 67', '00000002', '02 68', '00002384', '0000', '00', '00', '00'),
  );
});

test('FindCoordinator: unknown tagged fields in a flexible version are skipped', () => {
  const bytes = hex('00', '02', '02 67', '02 01 01 ff 04 00');
  assert.deepEqual(decode(request, 4, bytes), { key: '', key_type: 0, coordinator_keys: ['g'] });
});
