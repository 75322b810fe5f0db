// The frame reader: any split of the stream gives the same frames, whole frames are not copied,
// memory stays bounded, the protocol header is judged byte by byte, and malformed frames fail.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { amqplib_defs, amqplib_id, seeded_random } from './amqplib_test_support.ts';
import { AmqpError, FRAME_BODY, FRAME_HEARTBEAT, FRAME_METHOD, PROTOCOL_HEADER, ReplyCode } from './constants.ts';
import { FrameReader, type Frame } from './frame_reader.ts';
import { HEARTBEAT_FRAME, content_frames, frame, method_frame } from './frame_writer.ts';

const FRAME_MAX = 4096;

/** A stream exercising every frame type and size class, with its frames. */
function sample_stream(): { bytes: Buffer; frames: Frame[] } {
  const body = Buffer.alloc(9000, 7);
  const pieces = [
    method_frame(0, 'connection.start-ok', {
      client_properties: { product: 'test' },
      mechanism: 'PLAIN',
      response: '\0guest\0guest',
      locale: 'en_US',
    }),
    HEARTBEAT_FRAME,
    method_frame(1, 'basic.publish', { exchange: 'ex', routing_key: 'rk' }),
    ...content_frames(1, 60, body, { delivery_mode: 2, headers: { a: 'b' } }, FRAME_MAX),
    amqplib_defs.encodeMethod(amqplib_id(60, 80), 65535, { deliveryTag: 3, multiple: true }),
    method_frame(2, 'basic.publish', { routing_key: 'empty' }),
    ...content_frames(2, 60, Buffer.alloc(0), {}, FRAME_MAX),
    frame(FRAME_BODY, 3, Buffer.alloc(FRAME_MAX - 8, 1)),
    HEARTBEAT_FRAME,
  ];
  const frames = pieces.map((piece) => ({
    type: piece[0]!,
    channel: piece.readUInt16BE(1),
    payload: piece.subarray(7, piece.length - 1),
  }));
  return { bytes: Buffer.concat(pieces), frames };
}

/** Pushes each chunk and drains the reader after each, as a socket's data handler does. */
function read_all(reader: FrameReader, chunks: Buffer[], check?: (reader: FrameReader) => void): Frame[] {
  const frames: Frame[] = [];
  for (const chunk of chunks) {
    reader.push(chunk);
    for (let f = reader.next(); f !== null; f = reader.next()) frames.push(f);
    check?.(reader);
  }
  return frames;
}

function assert_same_frames(actual: Frame[], expected: Frame[], label: string): void {
  assert.equal(actual.length, expected.length, label);
  for (const [i, f] of actual.entries()) {
    const e = expected[i]!;
    assert.ok(f.type === e.type && f.channel === e.channel && f.payload.equals(e.payload), `${label}: frame ${i}`);
  }
}

test('a stream split at every byte position gives the same frames', () => {
  const { bytes, frames } = sample_stream();
  assert.equal(frames.length, 12);
  for (let cut = 0; cut <= bytes.length; cut++) {
    const reader = new FrameReader(FRAME_MAX, { protocol_header: false });
    const read = read_all(reader, [bytes.subarray(0, cut), bytes.subarray(cut)]);
    assert_same_frames(read, frames, `cut at ${cut}`);
  }
});

test('byte by byte and random chunks: same frames, at most one frame and one chunk held', () => {
  const { bytes, frames } = sample_stream();
  const random = seeded_random(31);
  for (const chunk_max of [1, 3, 8, 100, 5000, bytes.length]) {
    const chunks: Buffer[] = [];
    for (let at = 0; at < bytes.length;) {
      const size = chunk_max === 1 ? 1 : 1 + Math.floor(random() * chunk_max);
      chunks.push(bytes.subarray(at, at + size));
      at += size;
    }
    const reader = new FrameReader(FRAME_MAX, { protocol_header: false });
    const read = read_all(reader, chunks, (r) => assert.ok(r.buffered_bytes < FRAME_MAX, `${r.buffered_bytes} held`));
    assert_same_frames(read, frames, `chunks up to ${chunk_max}`);
    assert.equal(reader.buffered_bytes, 0);
  }
});

test('a frame whole in one chunk is a view into it, a split one is assembled', () => {
  const chunk = Buffer.concat([method_frame(1, 'basic.ack', { delivery_tag: 1 }), HEARTBEAT_FRAME]);
  const reader = new FrameReader(FRAME_MAX, { protocol_header: false });
  const [ack, heartbeat] = read_all(reader, [chunk]);
  assert.ok(ack!.payload.buffer === chunk.buffer && ack!.payload.byteOffset === chunk.byteOffset + 7, 'a view');
  assert.deepEqual([heartbeat!.type, heartbeat!.channel, heartbeat!.payload.length], [FRAME_HEARTBEAT, 0, 0]);
  const copy = Buffer.from(chunk);
  const [split] = read_all(reader, [copy.subarray(0, 10), copy.subarray(10)]);
  const before = Buffer.from(split!.payload);
  copy.fill(0);
  assert.ok(split!.payload.equals(before), 'assembled into its own buffer');
  assert.equal(split!.type, FRAME_METHOD);
});

test('the protocol header: ok in pieces, frames may follow in the same chunk', () => {
  const reader = new FrameReader(FRAME_MAX);
  assert.throws(() => reader.next(), /before take_protocol_header/);
  assert.equal(reader.take_protocol_header(), 'incomplete');
  reader.push(PROTOCOL_HEADER.subarray(0, 3));
  assert.equal(reader.take_protocol_header(), 'incomplete');
  reader.push(Buffer.concat([PROTOCOL_HEADER.subarray(3), HEARTBEAT_FRAME, HEARTBEAT_FRAME.subarray(0, 4)]));
  assert.equal(reader.take_protocol_header(), 'ok');
  assert.equal(reader.take_protocol_header(), 'ok');
  assert.equal(reader.next()?.type, FRAME_HEARTBEAT);
  assert.equal(reader.next(), null);
  reader.push(HEARTBEAT_FRAME.subarray(4));
  assert.equal(reader.next()?.type, FRAME_HEARTBEAT);
  assert.deepEqual(reader.protocol_header_received, PROTOCOL_HEADER);
});

test('a wrong protocol header is reported at its first wrong byte', () => {
  const http = new FrameReader(FRAME_MAX);
  http.push(Buffer.from('GET / HTTP/1.1\r\n'));
  assert.equal(http.take_protocol_header(), 'wrong');
  assert.equal(http.take_protocol_header(), 'wrong');
  assert.deepEqual(http.protocol_header_received, Buffer.from('G'));
  assert.throws(() => http.next(), /before take_protocol_header/);
  const old_version = new FrameReader(FRAME_MAX);
  old_version.push(Buffer.from([0x41, 0x4d, 0x51, 0x50, 0, 0, 9]));
  assert.equal(old_version.take_protocol_header(), 'incomplete');
  old_version.push(Buffer.from([0]));
  assert.equal(old_version.take_protocol_header(), 'wrong');
  const amqp_1_0 = new FrameReader(FRAME_MAX);
  amqp_1_0.push(Buffer.from([0x41, 0x4d, 0x51, 0x50, 3, 1, 0, 0]));
  assert.equal(amqp_1_0.take_protocol_header(), 'wrong');
  assert.deepEqual(amqp_1_0.protocol_header_received, Buffer.from([0x41, 0x4d, 0x51, 0x50, 3]));
});

function assert_frame_error(chunks: Buffer[], pattern: RegExp, frame_max = 131072): void {
  for (const split of [false, true]) {
    const reader = new FrameReader(frame_max, { protocol_header: false });
    const pieces = split ? chunks.flatMap((c) => [...c].map((byte) => Buffer.from([byte]))) : chunks;
    const failure = (error: unknown) =>
      error instanceof AmqpError && error.code === ReplyCode.FRAME_ERROR && pattern.test(error.message);
    assert.throws(() => read_all(reader, pieces), failure, `split ${split}`);
    assert.throws(() => reader.next(), failure, 'the failure sticks');
  }
}

function prefix(type: number, channel: number, size: number): Buffer {
  const bytes = Buffer.from([type, 0, 0, 0, 0, 0, 0]);
  bytes.writeUInt16BE(channel, 1);
  bytes.writeUInt32BE(size, 3);
  return bytes;
}

test('oversize frames fail as soon as their size is known', () => {
  assert_frame_error([prefix(FRAME_BODY, 1, 199992)], /^frame of 200000 bytes exceeds frame_max 131072$/);
  assert_frame_error([prefix(FRAME_METHOD, 1, 0xffffffff)], /exceeds frame_max/);
  const exactly = frame(FRAME_BODY, 1, Buffer.alloc(4088));
  assert.equal(read_all(new FrameReader(4096, { protocol_header: false }), [exactly]).length, 1);
  assert_frame_error([frame(FRAME_BODY, 1, Buffer.alloc(4089))], /frame of 4097 bytes exceeds frame_max 4096/, 4096);
  const reader = new FrameReader(131072, { protocol_header: false });
  reader.set_frame_max(4096);
  reader.push(frame(FRAME_BODY, 1, Buffer.alloc(5000)));
  assert.throws(() => reader.next(), /exceeds frame_max 4096/);
  assert.throws(() => new FrameReader(0), RangeError);
  assert.throws(() => reader.set_frame_max(7.5), RangeError);
});

test('a wrong frame-end octet or an unknown frame type is a FRAME_ERROR', () => {
  const bad_end = method_frame(1, 'basic.ack', { delivery_tag: 1 });
  bad_end[bad_end.length - 1] = 0xcd;
  assert_frame_error([bad_end], /frame end octet is 0xcd, not 0xce/);
  assert_frame_error([HEARTBEAT_FRAME, Buffer.from('GET / HTTP/1.1')], /unknown frame type 71/);
  assert_frame_error([frame(9, 0, Buffer.alloc(0))], /unknown frame type 9/);
  assert_frame_error([frame(0, 0, Buffer.alloc(0))], /unknown frame type 0/);
});
