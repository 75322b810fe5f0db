import { test } from 'node:test';
import assert from 'node:assert/strict';
import { message_codec } from './codec.ts';
import { Reader, Writer } from './wire.ts';
import { API_VERSIONS } from './messages/18_api_versions.ts';

function round_trip(spec: typeof API_VERSIONS.response, version: number, value: Record<string, unknown>) {
  const codec = message_codec(spec, version);
  const writer = new Writer();
  codec.encode(writer, value);
  const bytes = writer.to_buffer();
  const reader = new Reader(bytes);
  const decoded = codec.decode(reader);
  assert.equal(reader.remaining, 0, 'every byte consumed');
  return { bytes, decoded };
}

test('ApiVersions response: non-flexible and flexible layouts', () => {
  const value = { error_code: 0, api_keys: [{ api_key: 18, min_version: 0, max_version: 4 }], throttle_time_ms: 7 };
  const v0 = round_trip(API_VERSIONS.response, 0, value);
  assert.deepEqual(v0.bytes, Buffer.from('0000' + '00000001' + '0012' + '0000' + '0004', 'hex'));
  const v3 = round_trip(API_VERSIONS.response, 3, value);
  // error, compact array (1+1), entry + its empty tags, throttle, empty top-level tags
  assert.deepEqual(v3.bytes, Buffer.from('0000' + '02' + '0012000000040' + '0' + '00000007' + '00', 'hex'));
  assert.equal(v3.decoded.finalized_features_epoch, -1);
  const tagged = round_trip(API_VERSIONS.response, 3, { ...value, finalized_features_epoch: 5 });
  assert.equal(tagged.decoded.finalized_features_epoch, 5);
});

test('decoding refuses lengths beyond the frame instead of allocating', () => {
  const codec = message_codec(API_VERSIONS.response, 0);
  const hostile = Buffer.from('0000' + '7fffffff', 'hex');
  assert.throws(() => codec.decode(new Reader(hostile)), /exceeds/);
});
