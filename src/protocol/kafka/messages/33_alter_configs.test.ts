import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ALTER_CONFIGS } from './33_alter_configs.ts';
import { assert_round_trip, assert_round_trips_in_every_version, hex } from './test_support.ts';

const { request, response } = ALTER_CONFIGS;

function request_samples(v: number) {
  return [
    {
      resources: [
        {
          resource_type: 2,
          resource_name: 'orders',
          configs: [
            { name: 'retention.ms', value: '86400000' },
            { name: 'cleanup.policy', value: null },
          ],
        },
        { resource_type: 4, resource_name: '', configs: [{ name: 'log.cleaner.threads', value: '2' }] },
      ],
      validate_only: v === 1,
    },
  ];
}

function response_samples(v: number) {
  return [
    {
      throttle_time_ms: v,
      responses: [
        { error_code: 0, error_message: null, resource_type: 2, resource_name: 'orders' },
        { error_code: 44, error_message: 'Invalid value for log.cleaner.threads', resource_type: 4, resource_name: '' },
      ],
    },
  ];
}

test('AlterConfigs: version ranges', () => {
  assert.equal(request.valid_versions, '0-2');
  assert.equal(response.valid_versions, '0-2');
  assert.equal(request.flexible_versions, '2+');
  assert.equal(response.flexible_versions, '2+');
});

test('AlterConfigs request round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(request, request_samples), [0, 1, 2]);
});

test('AlterConfigs response round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(response, response_samples), [0, 1, 2]);
});

test('AlterConfigs: hand-computed layouts', () => {
  const value = {
    resources: [{ resource_type: 2, resource_name: 'a', configs: [{ name: 'k', value: null }] }],
    validate_only: false,
  };
  assert.deepEqual(
    assert_round_trip(request, 1, value),
    hex('00000001', '02', '0001 61', '00000001', '0001 6b', 'ffff', '00'),
  );
  assert.deepEqual(
    assert_round_trip(request, 2, value),
    hex('02', '02', '02 61', '02', '02 6b', '00', '00', '00', '00', '00'),
  );
  const reply = {
    throttle_time_ms: 0,
    responses: [{ error_code: 0, error_message: null, resource_type: 2, resource_name: 'a' }],
  };
  assert.deepEqual(assert_round_trip(response, 0, reply), hex('00000000', '00000001', '0000', 'ffff', '02', '0001 61'));
  assert.deepEqual(
    assert_round_trip(response, 2, reply),
    hex('00000000', '02', '0000', '00', '02', '02 61', '00', '00'),
  );
});
