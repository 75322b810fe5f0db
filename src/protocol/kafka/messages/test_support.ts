// Helpers shared by the message spec tests: round trips through the compiled codecs and hex
// literals for the hand-computed layouts.
import assert from 'node:assert/strict';
import { message_codec, type Value } from '../codec.ts';
import { type MessageSpec, version_bounds } from '../schema.ts';
import { Reader, Writer } from '../wire.ts';

export const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';

/** A UUID in our value form (base64url of the 16 bytes) from 32 hex digits. */
export function uuid(hex_digits: string): string {
  const bytes = Buffer.from(hex_digits.replace(/-/g, ''), 'hex');
  assert.equal(bytes.length, 16);
  return bytes.toString('base64url');
}

/** Bytes from hex digits; spaces and line breaks are ignored so layouts can be written field by field. */
export function hex(...parts: string[]): Buffer {
  return Buffer.from(parts.join('').replace(/\s+/g, ''), 'hex');
}

export function versions_of(spec: MessageSpec): number[] {
  const { min, max } = version_bounds(spec);
  const versions: number[] = [];
  for (let v = min; v <= max; v++) versions.push(v);
  return versions;
}

export function encode(spec: MessageSpec, version: number, value: Value): Buffer {
  const writer = new Writer();
  message_codec(spec, version).encode(writer, value);
  return writer.to_buffer();
}

export function decode(spec: MessageSpec, version: number, bytes: Buffer): Value {
  const reader = new Reader(bytes);
  const value = message_codec(spec, version).decode(reader);
  assert.equal(reader.remaining, 0, `${spec.name} v${version}: every byte consumed`);
  return value;
}

/** Encodes, decodes (consuming every byte) and expects the same value back; returns the bytes. */
export function assert_round_trip(spec: MessageSpec, version: number, value: Value): Buffer {
  const bytes = encode(spec, version, value);
  const decoded = decode(spec, version, bytes);
  assert.deepStrictEqual(decoded, value, `${spec.name} v${version}: decoded value differs`);
  assert.deepStrictEqual(encode(spec, version, decoded), bytes, `${spec.name} v${version}: re-encoding differs`);
  return bytes;
}

/** Round-trips the samples of every version in the spec's valid range; returns the versions covered. */
export function assert_round_trips_in_every_version(
  spec: MessageSpec,
  samples: (version: number) => Value[],
): number[] {
  const versions = versions_of(spec);
  for (const version of versions) {
    const values = samples(version);
    assert.ok(values.length > 0, `${spec.name} v${version}: no sample`);
    for (const value of values) assert_round_trip(spec, version, value);
  }
  return versions;
}
