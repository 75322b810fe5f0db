import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SASL_AUTHENTICATE } from './36_sasl_authenticate.ts';
import { assert_round_trip, assert_round_trips_in_every_version, hex } from './test_support.ts';

const { request, response } = SASL_AUTHENTICATE;

// A token large enough to be written by reference rather than copied (see wire.ts).
const LARGE_TOKEN = Buffer.alloc(1500, 0x5a);

function request_samples(_v: number) {
  return [
    { auth_bytes: Buffer.from('\u0000alice\u0000alice-secret', 'utf8') },
    { auth_bytes: Buffer.from('n,,n=alice,r=fyko+d2lbbFgONRv9qkxdawL', 'utf8') },
    { auth_bytes: LARGE_TOKEN },
    { auth_bytes: Buffer.alloc(0) },
  ];
}

function response_samples(v: number) {
  return [
    {
      error_code: 0,
      error_message: null,
      auth_bytes: Buffer.from('v=rmF9pqV8S7suAoZWja4dJRkFsKQ=', 'utf8'),
      session_lifetime_ms: v >= 1 ? 3_600_000 : 0,
    },
    {
      error_code: 58,
      error_message: 'Authentication failed: Invalid username or password',
      auth_bytes: Buffer.alloc(0),
      session_lifetime_ms: 0,
    },
  ];
}

test('SaslAuthenticate: version ranges', () => {
  assert.equal(request.valid_versions, '0-2');
  assert.equal(response.valid_versions, '0-2');
  assert.equal(request.flexible_versions, '2+');
  assert.equal(response.flexible_versions, '2+');
});

test('SaslAuthenticate request round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(request, request_samples), [0, 1, 2]);
});

test('SaslAuthenticate response round-trips in every version', () => {
  assert.deepEqual(assert_round_trips_in_every_version(response, response_samples), [0, 1, 2]);
});

test('SaslAuthenticate: hand-computed layouts', () => {
  const token = { auth_bytes: hex('00610062') };
  assert.deepEqual(assert_round_trip(request, 1, token), hex('00000004', '00610062'));
  assert.deepEqual(assert_round_trip(request, 2, token), hex('05', '00610062', '00'));
  const reply = { error_code: 0, error_message: null, auth_bytes: Buffer.from('ok'), session_lifetime_ms: 3_600_000 };
  assert.deepEqual(assert_round_trip(response, 1, reply), hex('0000', 'ffff', '00000002 6f6b', '00000000 0036ee80'));
  assert.deepEqual(assert_round_trip(response, 2, reply), hex('0000', '00', '03 6f6b', '00000000 0036ee80', '00'));
  // v0 has no session lifetime
  assert.deepEqual(
    assert_round_trip(response, 0, { ...reply, session_lifetime_ms: 0 }),
    hex('0000', 'ffff', '00000002 6f6b'),
  );
});
