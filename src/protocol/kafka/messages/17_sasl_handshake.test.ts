import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SASL_HANDSHAKE } from './17_sasl_handshake.ts';
import { message_codec } from '../codec.ts';
import { assert_round_trip, assert_round_trips_in_every_version, hex } from './test_support.ts';

const { request, response } = SASL_HANDSHAKE;

test('SaslHandshake: version ranges (no flexible version exists)', () => {
  assert.equal(request.valid_versions, '0-1');
  assert.equal(response.valid_versions, '0-1');
  assert.equal(request.flexible_versions, 'none');
  assert.equal(response.flexible_versions, 'none');
  for (const v of [0, 1]) {
    assert.equal(message_codec(request, v).flexible, false);
    assert.equal(message_codec(response, v).flexible, false);
  }
});

test('SaslHandshake request round-trips in every version', () => {
  const samples = () => [{ mechanism: 'SCRAM-SHA-256' }, { mechanism: 'PLAIN' }];
  assert.deepEqual(assert_round_trips_in_every_version(request, samples), [0, 1]);
});

test('SaslHandshake response round-trips in every version', () => {
  const samples = () => [
    { error_code: 0, mechanisms: ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'] },
    { error_code: 33, mechanisms: ['SCRAM-SHA-512'] },
  ];
  assert.deepEqual(assert_round_trips_in_every_version(response, samples), [0, 1]);
});

test('SaslHandshake: hand-computed layouts (both versions are non-flexible)', () => {
  assert.deepEqual(assert_round_trip(request, 1, { mechanism: 'PLAIN' }), hex('0005', '504c41494e'));
  assert.deepEqual(assert_round_trip(request, 0, { mechanism: 'PLAIN' }), hex('0005', '504c41494e'));
  assert.deepEqual(
    assert_round_trip(response, 0, { error_code: 0, mechanisms: ['PLAIN'] }),
    hex('0000', '00000001', '0005 504c41494e'),
  );
});
