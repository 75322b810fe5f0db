import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { once } from 'node:events';
import { DIRECT_READ_BYTES_MIN, FrameReader, type FrameSink } from './frame_reader.ts';

function framed(body: Buffer): Buffer {
  const prefix = Buffer.alloc(4);
  prefix.writeInt32BE(body.length, 0);
  return Buffer.concat([prefix, body]);
}

function body_of(size: number, seed: number): Buffer {
  const body = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i++) body[i] = (i * 31 + seed) & 0xff;
  return body;
}

function collecting(size_max = 1 << 30): FrameSink & { frames: Buffer[]; failure: string | null } {
  const sink = {
    frames: [] as Buffer[],
    failure: null as string | null,
    size_problem: (size: number) => (size > size_max ? `size ${size} over ${size_max}` : null),
    frame: (frame: Buffer) => void sink.frames.push(frame),
    fail: (reason: string) => void (sink.failure = reason),
  };
  return sink;
}

const SIZES = [0, 1, 10, 4096, DIRECT_READ_BYTES_MIN - 1, DIRECT_READ_BYTES_MIN + 1, 200_000, 3, 1_500_000, 70_000];

test('pushed chunks of any split, size prefixes included, come out as the frames that went in', () => {
  const bodies = SIZES.map((size, i) => body_of(size, i));
  const stream = Buffer.concat(bodies.map(framed));
  for (const chunk_bytes of [1, 3, 4, 5, 1000, 65_536, stream.length]) {
    const reader = new FrameReader(1024);
    const sink = collecting();
    reader.sink = sink;
    for (let at = 0; at < stream.length; at += chunk_bytes) reader.push(stream.subarray(at, at + chunk_bytes));
    assert.equal(sink.frames.length, bodies.length, `chunks of ${chunk_bytes}`);
    for (const [i, frame] of sink.frames.entries())
      assert.ok(frame.equals(bodies[i]!), `frame ${i}, chunks of ${chunk_bytes}`);
  }
});

test('socket reads land in the reused buffer or straight in a large frame; every frame arrives intact', async () => {
  const bodies = SIZES.map((size, i) => body_of(size, i + 7));
  const server = net.createServer((socket) => {
    // Written in uneven pieces so reads end mid-prefix and mid-frame.
    const stream = Buffer.concat(bodies.map(framed));
    let at = 0;
    let step = 1;
    while (at < stream.length) {
      socket.write(stream.subarray(at, at + step));
      at += step;
      step = (step * 7 + 3) % 90_000 || 1;
    }
    socket.end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const reader = new FrameReader();
  const sink = collecting();
  reader.sink = sink;
  const buffers_used = new Set<ArrayBufferLike>();
  const socket = net.connect({
    host: '127.0.0.1',
    port: (server.address() as net.AddressInfo).port,
    onread: {
      buffer: () => {
        const next = reader.buffer();
        buffers_used.add(next.buffer);
        return next;
      },
      callback: reader.on_read,
    },
  });
  await once(socket, 'close');
  server.close();
  assert.equal(sink.failure, null);
  assert.equal(sink.frames.length, bodies.length);
  for (const [i, frame] of sink.frames.entries())
    assert.ok(frame.equals(bodies[i]!), `frame ${i} (${bodies[i]!.length} bytes)`);
  const large = sink.frames.filter((frame) => frame.length >= 200_000);
  assert.ok(
    large.some((frame) => buffers_used.has(frame.buffer)),
    'a large frame was read into directly',
  );
});

test('a refused size stops the reader and delivers nothing after it', () => {
  const reader = new FrameReader(1024);
  const sink = collecting(100);
  reader.sink = sink;
  reader.push(Buffer.concat([framed(body_of(10, 1)), framed(body_of(500, 2)), framed(body_of(10, 3))]));
  assert.equal(sink.frames.length, 1);
  assert.match(sink.failure ?? '', /size 500 over 100/);
});
