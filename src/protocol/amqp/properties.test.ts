// Content headers: properties round-trip, amqplib reads ours and we read amqplib's, raw property
// bytes pass through untouched, and malformed headers end in an AmqpError.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { amqplib_defs, seeded_random } from './amqplib_test_support.ts';
import { AmqpError, ReplyCode } from './constants.ts';
import {
  BASIC_PROPERTIES,
  decode_content_header,
  encode_content_header,
  encode_properties,
  type BasicProperties,
} from './properties.ts';

const ALL: BasicProperties = {
  content_type: 'application/json',
  content_encoding: 'gzip',
  headers: { 'x-death': [{ count: 2 ** 40, reason: 'expired' }], CC: ['a', 'b'], flag: true },
  delivery_mode: 2,
  priority: 9,
  correlation_id: 'corr-1',
  reply_to: 'amq.rabbitmq.reply-to',
  expiration: '60000',
  message_id: 'mid ☃',
  timestamp: 1_700_000_000,
  type: 'order.created',
  user_id: 'guest',
  app_id: 'tests',
  cluster_id: 'c1',
};

const camel = (name: string) => name.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());
const snake = (name: string) => name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

function to_amqplib(properties: BasicProperties): Record<string, unknown> {
  return Object.fromEntries(Object.entries(properties).map(([k, v]) => [camel(k), v]));
}

function from_amqplib(fields: Record<string, unknown>): BasicProperties {
  const defined = Object.entries(fields).filter(([, v]) => v !== undefined);
  return Object.fromEntries(defined.map(([k, v]) => [snake(k), v])) as BasicProperties;
}

/** Every subset of the properties, picked by a mask over BASIC_PROPERTIES. */
function subset(mask: number): BasicProperties {
  const picked = BASIC_PROPERTIES.filter((_, i) => (mask & (1 << i)) !== 0).map((p) => p.name);
  return Object.fromEntries(picked.map((name) => [name, ALL[name]])) as BasicProperties;
}

test('properties round-trip, flags in spec order', () => {
  const payload = encode_content_header(60, 12345, ALL);
  const header = decode_content_header(payload);
  assert.equal(header.class_id, 60);
  assert.equal(header.body_size, 12345);
  assert.deepEqual(header.properties, ALL);
  assert.equal(header.properties_raw.readUInt16BE(0), 0xfffc);
  assert.deepEqual(header.properties_raw, encode_properties(ALL));
  const empty = decode_content_header(encode_content_header(60, 0, {}));
  assert.deepEqual(empty.properties, {});
  assert.deepEqual(empty.properties_raw, Buffer.from([0, 0]));
  const persistent = encode_content_header(60, 2 ** 40, { delivery_mode: 2 });
  assert.deepEqual(persistent, Buffer.from('003c0000' + '0000010000000000' + '1000' + '02', 'hex'));
});

test('every subset of the properties goes both ways with amqplib', () => {
  const random = seeded_random(21);
  for (let round = 0; round < 300; round++) {
    const properties = subset(Math.floor(random() * 0x4000));
    const body_size = Math.floor(random() * 2 ** 53);
    const theirs = amqplib_defs.encodeProperties(60, 1, body_size, to_amqplib(properties));
    const payload = theirs.subarray(7, theirs.length - 1);
    const decoded = decode_content_header(payload);
    assert.equal(decoded.body_size, body_size);
    assert.deepEqual(decoded.properties, properties);
    // Their headers use other integer tags than ours, so compare bytes only without headers.
    if (properties.headers === undefined) assert.deepEqual(encode_content_header(60, body_size, properties), payload);
    const ours = encode_content_header(60, body_size, properties);
    assert.deepEqual(from_amqplib(amqplib_defs.decode(60, ours.subarray(12))), properties);
  }
});

test('raw properties are sent exactly as received', () => {
  const received = decode_content_header(amqplib_defs.encodeProperties(60, 1, 5, to_amqplib(ALL)).subarray(7, -1));
  const forwarded = encode_content_header(60, 99, received.properties_raw);
  const again = decode_content_header(forwarded);
  assert.equal(again.body_size, 99);
  assert.deepEqual(again.properties_raw, received.properties_raw);
  assert.deepEqual(again.properties, ALL);
  assert.throws(() => encode_content_header(60, 1, Buffer.alloc(1)), RangeError);
});

function assert_amqp_error(payload: Buffer, code: number, pattern: RegExp): void {
  assert.throws(
    () => decode_content_header(payload),
    (error: unknown) => error instanceof AmqpError && error.code === code && pattern.test(error.message),
    payload.toString('hex'),
  );
}

test('malformed content headers', () => {
  const good = encode_content_header(60, 10, ALL);
  assert_amqp_error(good.subarray(0, 13), ReplyCode.SYNTAX_ERROR, /13 bytes are too few/);
  for (let length = 14; length < good.length; length++) {
    assert_amqp_error(good.subarray(0, length), ReplyCode.SYNTAX_ERROR, /malformed (content header|field table)/);
  }
  assert_amqp_error(Buffer.concat([good, Buffer.from([0])]), ReplyCode.SYNTAX_ERROR, /1 bytes after the last/);
  const other_class = Buffer.from(good);
  other_class.writeUInt16BE(20, 0);
  assert_amqp_error(other_class, ReplyCode.UNEXPECTED_FRAME, /class 20, but only basic/);
  const huge = Buffer.from(good);
  huge.writeUInt32BE(0x00200000, 4);
  assert_amqp_error(huge, ReplyCode.SYNTAX_ERROR, /body size 9007199254741002 is too large/);
  assert_amqp_error(Buffer.from('003c0000000000000000000a0001', 'hex'), ReplyCode.SYNTAX_ERROR, /second word/);
  const bad_headers = encode_content_header(60, 1, { headers: { a: 1 } });
  bad_headers[bad_headers.length - 5] = 0x7a;
  assert_amqp_error(bad_headers, ReplyCode.SYNTAX_ERROR, /^headers property: .*tag 0x7a/);
});

test('fuzz: random property lists never throw anything but AmqpError', () => {
  const random = seeded_random(22);
  for (let i = 0; i < 2000; i++) {
    const payload = Buffer.alloc(14 + Math.floor(random() * 40));
    for (let j = 12; j < payload.length; j++) payload[j] = Math.floor(random() * 256);
    payload.writeUInt16BE(60, 0);
    try {
      decode_content_header(payload);
    } catch (error) {
      if (!(error instanceof AmqpError)) assert.fail(`${String(error)} for ${payload.toString('hex')}`);
    }
  }
});

test('encoding refuses values the wire cannot carry', () => {
  assert.throws(() => encode_properties({ delivery_mode: 256 }), RangeError);
  assert.throws(() => encode_properties({ priority: -1 }), RangeError);
  assert.throws(() => encode_properties({ timestamp: 1.5 }), RangeError);
  assert.throws(() => encode_properties({ message_id: 'm'.repeat(256) }), RangeError);
  assert.throws(() => encode_properties({ expiration: 60000 as unknown as string }), TypeError);
  assert.throws(() => encode_properties({ headers: [] as unknown as BasicProperties['headers'] }), TypeError);
  assert.throws(() => encode_content_header(60, -1, {}), RangeError);
  assert.throws(() => encode_content_header(60, 2 ** 53, {}), RangeError);
  assert.deepEqual(
    encode_properties({ content_type: undefined, priority: null as unknown as number }),
    Buffer.alloc(2),
  );
});
