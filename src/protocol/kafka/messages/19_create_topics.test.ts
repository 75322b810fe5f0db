import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CREATE_TOPICS } from './19_create_topics.ts';
import {
  ZERO_UUID,
  assert_round_trip,
  assert_round_trips_in_every_version,
  decode,
  encode,
  hex,
  uuid,
} from './test_support.ts';

const { request, response } = CREATE_TOPICS;
const ORDERS_ID = uuid('7b1e4c2a9f3d4e8b8a6c0d2f4e6a8c1b');

function request_samples(v: number) {
  return [
    {
      topics: [
        {
          name: 'orders',
          num_partitions: 3,
          replication_factor: 2,
          assignments: [],
          configs: [
            { name: 'retention.ms', value: '604800000' },
            { name: 'cleanup.policy', value: null },
          ],
        },
        {
          name: 'audit',
          num_partitions: -1,
          replication_factor: -1,
          assignments: [
            { partition_index: 0, broker_ids: [1, 2] },
            { partition_index: 1, broker_ids: [2, 3] },
          ],
          configs: [],
        },
      ],
      timeout_ms: 30000,
      validate_only: v >= 1,
    },
  ];
}

function response_samples(v: number) {
  return [
    {
      throttle_time_ms: v >= 2 ? 15 : 0,
      topics: [
        {
          name: 'orders',
          topic_id: v >= 7 ? ORDERS_ID : ZERO_UUID,
          error_code: 0,
          error_message: null,
          topic_config_error_code: 0,
          num_partitions: v >= 5 ? 3 : -1,
          replication_factor: v >= 5 ? 2 : -1,
          configs:
            v >= 5
              ? [
                  { name: 'retention.ms', value: '604800000', read_only: false, config_source: 1, is_sensitive: false },
                  { name: 'sasl.jaas.config', value: null, read_only: true, config_source: 5, is_sensitive: true },
                ]
              : [],
        },
        {
          name: 'audit',
          topic_id: ZERO_UUID,
          error_code: 36,
          error_message: v >= 1 ? "Topic 'audit' already exists." : null,
          // tagged: only carried in flexible versions
          topic_config_error_code: v >= 5 ? 29 : 0,
          num_partitions: -1,
          replication_factor: -1,
          configs: v >= 5 ? null : [],
        },
      ],
    },
  ];
}

test('CreateTopics: version ranges', () => {
  assert.equal(request.valid_versions, '0-7');
  assert.equal(response.valid_versions, '0-7');
  assert.equal(request.flexible_versions, '5+');
  assert.equal(response.flexible_versions, '5+');
});

test('CreateTopics request round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(request, request_samples), [0, 1, 2, 3, 4, 5, 6, 7]);
});

test('CreateTopics response round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(response, response_samples), [0, 1, 2, 3, 4, 5, 6, 7]);
});

test('CreateTopics: hand-computed layouts', () => {
  const value = {
    topics: [
      { name: 'a', num_partitions: 1, replication_factor: 1, assignments: [], configs: [{ name: 'k', value: null }] },
    ],
    timeout_ms: 1000,
    validate_only: true,
  };
  // v3: int32 array counts, int16 string lengths, null string = -1
  assert.deepEqual(
    assert_round_trip(request, 3, value),
    hex('00000001', '0001 61', '00000001', '0001', '00000000', '00000001 0001 6b ffff', '000003e8', '01'),
  );
  // v5: compact counts (n+1), null string = 0, a tag section closing every struct
  assert.deepEqual(
    assert_round_trip(request, 5, value),
    hex('02', '02 61', '00000001', '0001', '01', '02 02 6b 00 00', '00', '000003e8', '01', '00'),
  );
  // v0 has no validate_only; a missing timeout_ms takes its default of 60000
  assert.deepEqual(encode(request, 0, { topics: [] }), hex('00000000', '0000ea60'));

  // response v1: no throttle time yet, error message present
  assert.deepEqual(
    encode(response, 1, { topics: [{ name: 'a', error_code: 36, error_message: 'x' }] }),
    hex('00000001', '0001 61', '0024', '0001 78'),
  );
  // response v5: tagged topic_config_error_code (tag 0, 2 bytes) after the regular fields
  const v5 = {
    throttle_time_ms: 0,
    topics: [
      {
        name: 'a',
        error_code: 0,
        error_message: null,
        topic_config_error_code: 29,
        num_partitions: 1,
        replication_factor: 1,
        configs: null,
      },
    ],
  };
  const bytes = encode(response, 5, v5);
  assert.deepEqual(
    bytes,
    hex('00000000', '02', '02 61', '0000', '00', '00000001', '0001', '00', '01 00 02 001d', '00'),
  );
  const decoded = decode(response, 5, bytes);
  assert.equal((decoded.topics as Array<Record<string, unknown>>)[0]!.topic_config_error_code, 29);
});
