import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DESCRIBE_CLUSTER } from './60_describe_cluster.ts';
import { assert_round_trips_in_every_version, decode, encode, hex } from './test_support.ts';

const { request, response } = DESCRIBE_CLUSTER;
const BROKERS = 1;
const CONTROLLERS = 2;

function request_samples(v: number) {
  return [
    {
      include_cluster_authorized_operations: true,
      endpoint_type: v >= 1 ? CONTROLLERS : BROKERS,
      include_fenced_brokers: false,
    },
    { include_cluster_authorized_operations: false, endpoint_type: BROKERS, include_fenced_brokers: v >= 2 },
  ];
}

function response_samples(v: number) {
  return [
    {
      throttle_time_ms: 0,
      error_code: 0,
      error_message: null,
      endpoint_type: BROKERS,
      cluster_id: 'q1Sh-9_ISia_zwGINzRvyQ',
      controller_id: 1,
      brokers: [
        { broker_id: 1, host: 'broker-1.internal', port: 9092, rack: 'us-east-1a', is_fenced: false },
        { broker_id: 2, host: 'broker-2.internal', port: 9092, rack: null, is_fenced: v >= 2 },
      ],
      cluster_authorized_operations: 0b0001_1111_1000_0000,
    },
    {
      throttle_time_ms: 30,
      error_code: 31, // CLUSTER_AUTHORIZATION_FAILED
      error_message: 'Cluster authorization failed.',
      endpoint_type: v >= 1 ? CONTROLLERS : BROKERS,
      cluster_id: '',
      controller_id: -1,
      brokers: [],
      cluster_authorized_operations: -2147483648,
    },
  ];
}

test('DescribeCluster: version ranges', () => {
  assert.equal(request.valid_versions, '0-2');
  assert.equal(response.valid_versions, '0-2');
  assert.equal(request.flexible_versions, '0+');
});

test('DescribeCluster request round-trips in every version', () => {
  assert.equal(assert_round_trips_in_every_version(request, request_samples).length, 3);
});

test('DescribeCluster response round-trips in every version', () => {
  assert.equal(assert_round_trips_in_every_version(response, response_samples).length, 3);
});

test('DescribeCluster: hand-computed layouts (every version is flexible)', () => {
  assert.deepEqual(encode(request, 0, { include_cluster_authorized_operations: true }), hex('01', '00'));
  // A missing endpoint type is 1 (brokers); v2 adds include_fenced_brokers.
  assert.deepEqual(encode(request, 1, { include_cluster_authorized_operations: false }), hex('00', '01', '00'));
  assert.deepEqual(
    encode(request, 2, {
      include_cluster_authorized_operations: false,
      endpoint_type: 2,
      include_fenced_brokers: true,
    }),
    hex('00', '02', '01', '00'),
  );
  assert.equal(decode(request, 0, hex('00 00')).endpoint_type, 1);

  const value = {
    throttle_time_ms: 0,
    error_code: 0,
    error_message: null,
    endpoint_type: 1,
    cluster_id: 'c',
    controller_id: 1,
    brokers: [{ broker_id: 1, host: 'h', port: 9092, rack: null, is_fenced: true }],
    cluster_authorized_operations: -2147483648,
  };
  const broker = ['00000001', '02 68', '00002384', '00'];
  // v0: compact null message, compact strings, broker without is_fenced, broker tags, body tags.
  assert.deepEqual(
    encode(response, 0, value),
    hex('00000000', '0000', '00', '02 63', '00000001', '02', ...broker, '00', '80000000', '00'),
  );
  // v2: endpoint type after the error message, is_fenced after the rack.
  assert.deepEqual(
    encode(response, 2, value),
    hex('00000000', '0000', '00', '01', '02 63', '00000001', '02', ...broker, '01', '00', '80000000', '00'),
  );
});
