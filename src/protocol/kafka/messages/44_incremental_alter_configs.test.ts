import { test } from 'node:test';
import assert from 'node:assert/strict';
import { INCREMENTAL_ALTER_CONFIGS } from './44_incremental_alter_configs.ts';
import { assert_round_trip, assert_round_trips_in_every_version, hex } from './test_support.ts';

const { request, response } = INCREMENTAL_ALTER_CONFIGS;

function request_samples(v: number) {
  return [
    {
      resources: [
        {
          resource_type: 2,
          resource_name: 'orders',
          configs: [
            { name: 'retention.ms', config_operation: 0, value: '86400000' },
            { name: 'cleanup.policy', config_operation: 2, value: 'compact' },
            { name: 'max.message.bytes', config_operation: 1, value: null },
          ],
        },
        {
          resource_type: 4,
          resource_name: '1',
          configs: [{ name: 'log.cleaner.threads', config_operation: 0, value: '2' }],
        },
      ],
      validate_only: v === 0,
    },
  ];
}

function response_samples(v: number) {
  return [
    {
      throttle_time_ms: 7 + v,
      responses: [
        { error_code: 0, error_message: null, resource_type: 2, resource_name: 'orders' },
        { error_code: 40, error_message: 'Unknown config log.cleaner.threadz', resource_type: 4, resource_name: '1' },
      ],
    },
  ];
}

test('IncrementalAlterConfigs: version ranges', () => {
  assert.equal(request.valid_versions, '0-1');
  assert.equal(response.valid_versions, '0-1');
  assert.equal(request.flexible_versions, '1+');
  assert.equal(response.flexible_versions, '1+');
});

test('IncrementalAlterConfigs request round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(request, request_samples), [0, 1]);
});

test('IncrementalAlterConfigs response round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(response, response_samples), [0, 1]);
});

test('IncrementalAlterConfigs: hand-computed layouts', () => {
  const value = {
    resources: [{ resource_type: 2, resource_name: 'a', configs: [{ name: 'k', config_operation: 1, value: null }] }],
    validate_only: false,
  };
  assert.deepEqual(
    assert_round_trip(request, 0, value),
    hex('00000001', '02', '0001 61', '00000001', '0001 6b', '01', 'ffff', '00'),
  );
  assert.deepEqual(
    assert_round_trip(request, 1, value),
    hex('02', '02', '02 61', '02', '02 6b', '01', '00', '00', '00', '00', '00'),
  );
  const reply = {
    throttle_time_ms: 0,
    responses: [{ error_code: 40, error_message: 'x', resource_type: 4, resource_name: '1' }],
  };
  assert.deepEqual(
    assert_round_trip(response, 0, reply),
    hex('00000000', '00000001', '0028', '0001 78', '04', '0001 31'),
  );
  assert.deepEqual(
    assert_round_trip(response, 1, reply),
    hex('00000000', '02', '0028', '02 78', '04', '02 31', '00', '00'),
  );
});
