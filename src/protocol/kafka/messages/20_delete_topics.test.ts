import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DELETE_TOPICS } from './20_delete_topics.ts';
import { ZERO_UUID, assert_round_trip, assert_round_trips_in_every_version, hex, uuid } from './test_support.ts';

const { request, response } = DELETE_TOPICS;
const ORDERS_ID = uuid('0f8e2d4c6a1b4c3d9e5f7a8b9c0d1e2f');
const GHOST_ID = uuid('c3a1e5f7092b4d6e8f1a3b5c7d9e0f12');

function request_samples(v: number) {
  if (v >= 6) {
    return [
      {
        topics: [
          { name: 'orders', topic_id: ZERO_UUID },
          { name: null, topic_id: GHOST_ID },
        ],
        topic_names: [],
        timeout_ms: 30000,
      },
    ];
  }
  return [{ topics: [], topic_names: ['orders', 'audit'], timeout_ms: 30000 }];
}

function response_samples(v: number) {
  return [
    {
      throttle_time_ms: v >= 1 ? 5 : 0,
      responses: [
        { name: 'orders', topic_id: v >= 6 ? ORDERS_ID : ZERO_UUID, error_code: 0, error_message: null },
        {
          name: v >= 6 ? null : 'ghost',
          topic_id: v >= 6 ? GHOST_ID : ZERO_UUID,
          error_code: v >= 6 ? 100 : 3,
          error_message: v >= 5 ? 'This server does not host this topic ID.' : null,
        },
      ],
    },
  ];
}

test('DeleteTopics: version ranges', () => {
  assert.equal(request.valid_versions, '0-6');
  assert.equal(response.valid_versions, '0-6');
  assert.equal(request.flexible_versions, '4+');
  assert.equal(response.flexible_versions, '4+');
});

test('DeleteTopics request round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(request, request_samples), [0, 1, 2, 3, 4, 5, 6]);
});

test('DeleteTopics response round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(response, response_samples), [0, 1, 2, 3, 4, 5, 6]);
});

test('DeleteTopics: hand-computed layouts', () => {
  // v1: plain list of names, then the timeout
  assert.deepEqual(
    assert_round_trip(request, 1, { topics: [], topic_names: ['a', 'b'], timeout_ms: 1000 }),
    hex('00000002', '0001 61', '0001 62', '000003e8'),
  );
  // v6: compact list of (nullable name, uuid) structs
  assert.deepEqual(
    assert_round_trip(request, 6, { topics: [{ name: null, topic_id: GHOST_ID }], topic_names: [], timeout_ms: 1000 }),
    hex('02', '00', 'c3a1e5f7092b4d6e8f1a3b5c7d9e0f12', '00', '000003e8', '00'),
  );
  // response v0: no throttle time
  assert.deepEqual(
    assert_round_trip(response, 0, {
      throttle_time_ms: 0,
      responses: [{ name: 'a', topic_id: ZERO_UUID, error_code: 3, error_message: null }],
    }),
    hex('00000001', '0001 61', '0003'),
  );
  // response v5: compact, with the nullable error message
  assert.deepEqual(
    assert_round_trip(response, 5, {
      throttle_time_ms: 0,
      responses: [{ name: 'a', topic_id: ZERO_UUID, error_code: 0, error_message: null }],
    }),
    hex('00000000', '02', '02 61', '0000', '00', '00', '00'),
  );
});
