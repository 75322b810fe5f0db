// The frame writer and the constants: frames byte for byte as amqplib writes them, bodies split
// at frame_max, the heartbeat, and which reply codes close the whole connection.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { amqplib_defs, amqplib_id } from './amqplib_test_support.ts';
import {
  AmqpError,
  FRAME_BODY,
  FRAME_HEADER,
  PROTOCOL_HEADER,
  ReplyCode,
  is_hard_error,
  reply_code_name,
} from './constants.ts';
import { FrameReader } from './frame_reader.ts';
import { HEARTBEAT_FRAME, content_frames, frame, method_frame } from './frame_writer.ts';
import { decode_method } from './methods.ts';
import { decode_content_header, encode_properties } from './properties.ts';

test('method frames are byte for byte what amqplib writes', () => {
  const cases: Array<[Buffer, Buffer]> = [
    [
      method_frame(7, 'basic.deliver', {
        consumer_tag: 'amq.ctag-1',
        delivery_tag: 42,
        redelivered: true,
        exchange: 'amq.direct',
        routing_key: 'rk',
      }),
      amqplib_defs.encodeMethod(amqplib_id(60, 60), 7, {
        consumerTag: 'amq.ctag-1',
        deliveryTag: 42,
        redelivered: true,
        exchange: 'amq.direct',
        routingKey: 'rk',
      }),
    ],
    [
      method_frame(0, 'connection.tune', { channel_max: 2047, frame_max: 131072, heartbeat: 60 }),
      amqplib_defs.encodeMethod(amqplib_id(10, 30), 0, { channelMax: 2047, frameMax: 131072, heartbeat: 60 }),
    ],
    [
      method_frame(65535, 'channel.close', { reply_code: 404, reply_text: 'NOT_FOUND', class_id: 50, method_id: 10 }),
      amqplib_defs.encodeMethod(amqplib_id(20, 40), 65535, {
        replyCode: 404,
        replyText: 'NOT_FOUND',
        classId: 50,
        methodId: 10,
      }),
    ],
    [method_frame(3, 'basic.recover-ok', {}), amqplib_defs.encodeMethod(amqplib_id(60, 111), 3, {})],
  ];
  for (const [ours, theirs] of cases) assert.deepEqual(ours, theirs);
});

test('content frames: header, then bodies of at most frame_max - 8 bytes', () => {
  const body = Buffer.alloc(10_000);
  for (let i = 0; i < body.length; i++) body[i] = i & 0xff;
  const properties = { content_type: 'text/plain', delivery_mode: 2, timestamp: 1_700_000_000 };
  const frames = content_frames(5, 60, body, properties, 4096);
  assert.deepEqual(
    frames.map((f) => [f[0], f.readUInt16BE(1), f.length]),
    [
      [FRAME_HEADER, 5, frames[0]!.length],
      [FRAME_BODY, 5, 4096],
      [FRAME_BODY, 5, 4096],
      [FRAME_BODY, 5, 10_000 - 2 * 4088 + 8],
    ],
  );
  const theirs = amqplib_defs.encodeProperties(60, 5, body.length, {
    contentType: 'text/plain',
    deliveryMode: 2,
    timestamp: 1_700_000_000,
  });
  assert.deepEqual(frames[0], theirs);
  const reader = new FrameReader(4096, { protocol_header: false });
  reader.push(Buffer.concat(frames));
  const header = decode_content_header(reader.next()!.payload);
  assert.equal(header.body_size, body.length);
  const parts = [reader.next()!, reader.next()!, reader.next()!].map((f) => f.payload);
  assert.deepEqual(Buffer.concat(parts), body);
  assert.equal(reader.next(), null);
});

test('an empty body has no body frame; raw properties go out as given', () => {
  const raw = encode_properties({ headers: { 'x-first-death-reason': 'expired' }, priority: 3 });
  const frames = content_frames(1, 60, Buffer.alloc(0), raw, 131072);
  assert.equal(frames.length, 1);
  const header = decode_content_header(frames[0]!.subarray(7, -1));
  assert.equal(header.body_size, 0);
  assert.deepEqual(header.properties_raw, raw);
  assert.deepEqual(header.properties, { headers: { 'x-first-death-reason': 'expired' }, priority: 3 });
  const exact = content_frames(1, 60, Buffer.alloc(4088), {}, 4096);
  assert.equal(exact.length, 2);
});

test('content frames refuse a frame_max they cannot honour', () => {
  assert.throws(() => content_frames(1, 60, Buffer.alloc(1), {}, 8), RangeError);
  const big_headers = { headers: { big: 'x'.repeat(5000) } };
  assert.throws(() => content_frames(1, 60, Buffer.alloc(1), big_headers, 4096), /exceeds frame_max 4096/);
});

test('heartbeat and raw frames', () => {
  assert.deepEqual(HEARTBEAT_FRAME, Buffer.from([8, 0, 0, 0, 0, 0, 0, 0xce]));
  assert.deepEqual(frame(FRAME_BODY, 258, Buffer.from('hi')), Buffer.from('030102000000026869ce', 'hex'));
  const method = method_frame(1, 'basic.qos', { prefetch_count: 10 });
  assert.deepEqual(decode_method(method.subarray(7, -1)).args, { prefetch_size: 0, prefetch_count: 10, global: false });
});

test('constants: the protocol header, reply codes, connection against channel exceptions', () => {
  assert.deepEqual(PROTOCOL_HEADER, Buffer.from('AMQP\x00\x00\x09\x01', 'latin1'));
  const hard = Object.values(ReplyCode).filter(is_hard_error);
  assert.deepEqual(hard, [320, 402, 501, 502, 503, 504, 505, 506, 530, 540, 541]);
  for (const code of [200, 311, 312, 313, 403, 404, 405, 406]) assert.equal(is_hard_error(code), false);
  assert.equal(reply_code_name(404), 'NOT_FOUND');
  assert.equal(reply_code_name(999), 'REPLY_999');
  const error = new AmqpError(ReplyCode.NOT_FOUND, "no queue 'q'", 50, 10);
  assert.ok(error instanceof Error);
  assert.deepEqual(
    [error.code, error.message, error.class_id, error.method_id, error.name],
    [404, "no queue 'q'", 50, 10, 'AmqpError'],
  );
  assert.deepEqual([new AmqpError(501, 'bad').class_id, new AmqpError(501, 'bad').method_id], [0, 0]);
});
