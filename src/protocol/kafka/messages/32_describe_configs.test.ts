import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DESCRIBE_CONFIGS } from './32_describe_configs.ts';
import { assert_round_trip, assert_round_trips_in_every_version, hex } from './test_support.ts';

const { request, response } = DESCRIBE_CONFIGS;

function request_samples(v: number) {
  return [
    {
      resources: [
        { resource_type: 2, resource_name: 'orders', configuration_keys: ['retention.ms', 'cleanup.policy'] },
        { resource_type: 4, resource_name: '1', configuration_keys: null },
      ],
      include_synonyms: v >= 1,
      include_documentation: v >= 3,
    },
  ];
}

function response_samples(v: number) {
  return [
    {
      throttle_time_ms: 3,
      results: [
        {
          error_code: 0,
          error_message: null,
          resource_type: 2,
          resource_name: 'orders',
          configs: [
            {
              name: 'retention.ms',
              value: '604800000',
              read_only: false,
              is_default: false,
              config_source: v >= 1 ? 1 : -1,
              is_sensitive: false,
              synonyms:
                v >= 1
                  ? [
                      { name: 'retention.ms', value: '604800000', source: 1 },
                      { name: 'log.retention.ms', value: null, source: 5 },
                    ]
                  : [],
              config_type: v >= 3 ? 5 : 0,
              documentation: v >= 3 ? 'How long a log is kept before old segments are discarded.' : null,
            },
            {
              name: 'sasl.jaas.config',
              value: null,
              read_only: true,
              is_default: v === 0,
              config_source: v >= 1 ? 5 : -1,
              is_sensitive: true,
              synonyms: [],
              config_type: v >= 3 ? 9 : 0,
              documentation: null,
            },
          ],
        },
        {
          error_code: 29,
          error_message: 'Authorization failed.',
          resource_type: 2,
          resource_name: 'secret-topic',
          configs: [],
        },
      ],
    },
  ];
}

test('DescribeConfigs: version ranges', () => {
  assert.equal(request.valid_versions, '0-4');
  assert.equal(response.valid_versions, '0-4');
  assert.equal(request.flexible_versions, '4+');
  assert.equal(response.flexible_versions, '4+');
});

test('DescribeConfigs request round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(request, request_samples), [0, 1, 2, 3, 4]);
});

test('DescribeConfigs response round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(response, response_samples), [0, 1, 2, 3, 4]);
});

/** A response with one successful result, for topic 'a', holding `config`. */
function response_with(config: Record<string, unknown>) {
  return {
    throttle_time_ms: 0,
    results: [{ error_code: 0, error_message: null, resource_type: 2, resource_name: 'a', configs: [config] }],
  };
}

test('DescribeConfigs: hand-computed layouts', () => {
  // request v0: null key list = -1 count, no flags
  assert.deepEqual(
    assert_round_trip(request, 0, {
      resources: [{ resource_type: 2, resource_name: 'a', configuration_keys: null }],
      include_synonyms: false,
      include_documentation: false,
    }),
    hex('00000001', '02', '0001 61', 'ffffffff'),
  );
  // request v4: compact, both flags
  assert.deepEqual(
    assert_round_trip(request, 4, {
      resources: [{ resource_type: 2, resource_name: 'a', configuration_keys: ['k'] }],
      include_synonyms: true,
      include_documentation: false,
    }),
    hex('02', '02', '02 61', '02 02 6b', '00', '01', '00', '00'),
  );
  // response v0: is_default sits between read_only and is_sensitive; no source, synonyms or type
  assert.deepEqual(
    assert_round_trip(
      response,
      0,
      response_with({
        name: 'k',
        value: 'v',
        read_only: false,
        is_default: true,
        config_source: -1,
        is_sensitive: false,
        synonyms: [],
        config_type: 0,
        documentation: null,
      }),
    ),
    hex('00000000', '00000001', '0000', 'ffff', '02', '0001 61', '00000001', '0001 6b', '0001 76', '00', '01', '00'),
  );
  // response v4: config_source after read_only, synonyms, type and documentation; tags closing each struct
  assert.deepEqual(
    assert_round_trip(
      response,
      4,
      response_with({
        name: 'k',
        value: null,
        read_only: false,
        is_default: false,
        config_source: 1,
        is_sensitive: false,
        synonyms: [{ name: 'k', value: 'v', source: 1 }],
        config_type: 2,
        documentation: null,
      }),
    ),
    hex(
      '00000000',
      '02',
      '0000',
      '00',
      '02',
      '02 61',
      '02',
      '02 6b',
      '00',
      '00',
      '01',
      '00',
      '02',
      '02 6b 02 76 01 00',
      '02',
      '00',
      '00',
      '00',
      '00',
    ),
  );
});
