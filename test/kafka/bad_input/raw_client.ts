// A raw Kafka client for the bad-input tests: it writes whatever bytes a test gives it (whole frames
// encoded with our codecs, hand-made or cut ones, one byte at a time) and reads the response frames
// back, so each test can see exactly what the broker answered, or that it closed the connection.
import assert from 'node:assert/strict';
import net from 'node:net';
import { Reader, Writer } from '../../../src/protocol/kafka/wire.ts';
import { message_codec, type Value } from '../../../src/protocol/kafka/codec.ts';
import {
  response_header_flexible,
  skip_header_tags,
  write_request_header,
} from '../../../src/protocol/kafka/header.ts';
import type { ApiSpec } from '../../../src/protocol/kafka/schema.ts';

/** Every wait in these tests is bounded by this. */
const WAIT_MS = 5_000;
const CLIENT_ID = 'bad-input-test';

function with_timeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export function frame(body: Buffer): Buffer {
  const size = Buffer.alloc(4);
  size.writeInt32BE(body.length);
  return Buffer.concat([size, body]);
}

export function size_prefix(size: number): Buffer {
  const bytes = Buffer.alloc(4);
  bytes.writeInt32BE(size);
  return bytes;
}

/** A whole request frame (size prefix included) encoded with our codecs. */
export function encode_request(api: ApiSpec, version: number, correlation_id: number, body: Value): Buffer {
  const codec = message_codec(api.request, version);
  const writer = new Writer();
  const header = { api_key: api.api_key, api_version: version, correlation_id, client_id: CLIENT_ID };
  write_request_header(writer, header, codec.flexible);
  codec.encode(writer, body);
  return frame(writer.to_buffer());
}

/** A request header alone (v1 layout, or v2 with an empty tag section), for hand-made bodies. */
export function header_bytes(api_key: number, api_version: number, correlation_id: number, flexible = false): Buffer {
  const writer = new Writer();
  write_request_header(writer, { api_key, api_version, correlation_id, client_id: CLIENT_ID }, flexible);
  return writer.to_buffer();
}

export function decode_response(api: ApiSpec, version: number, response_frame: Buffer, correlation_id: number): Value {
  const codec = message_codec(api.response, version);
  const reader = new Reader(response_frame);
  assert.equal(reader.int32(), correlation_id, `${api.name} v${version}: correlation id`);
  if (response_header_flexible(api.api_key, codec.flexible)) skip_header_tags(reader);
  const body = codec.decode(reader);
  assert.equal(reader.remaining, 0, `${api.name} v${version}: every response byte consumed`);
  return body;
}

export class RawClient {
  private pending = Buffer.alloc(0);
  private readonly frames: Buffer[] = [];
  private wake: (() => void) | null = null;
  private next_correlation = 1;
  bytes_received = 0;
  closed = false;
  private readonly closed_promise: Promise<void>;

  private constructor(private readonly socket: net.Socket) {
    socket.setNoDelay(true);
    socket.on('data', (data: Buffer) => {
      this.bytes_received += data.length;
      this.pending = Buffer.concat([this.pending, data]);
      while (this.pending.length >= 4) {
        const size = this.pending.readInt32BE(0);
        if (this.pending.length < 4 + size) break;
        this.frames.push(this.pending.subarray(4, 4 + size));
        this.pending = this.pending.subarray(4 + size);
      }
      this.notify();
    });
    socket.on('error', () => undefined);
    this.closed_promise = new Promise((resolve) =>
      socket.on('close', () => {
        this.closed = true;
        this.notify();
        resolve();
      }),
    );
  }

  static async connect(address: { host: string; port: number }): Promise<RawClient> {
    const socket = net.connect(address.port, address.host);
    socket.on('error', () => undefined);
    await with_timeout(
      new Promise<void>((resolve, reject) => {
        socket.once('connect', resolve);
        socket.once('error', reject);
      }),
      WAIT_MS,
      'connect',
    );
    return new RawClient(socket);
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  correlation(): number {
    return this.next_correlation++;
  }

  write(bytes: Buffer): Promise<void> {
    return with_timeout(
      new Promise<void>((resolve, reject) => this.socket.write(bytes, (error) => (error ? reject(error) : resolve()))),
      WAIT_MS,
      'a write to complete',
    );
  }

  /** Writes one byte per write call, yielding to the event loop in between so each is read alone. */
  async write_bytewise(bytes: Buffer): Promise<void> {
    for (let i = 0; i < bytes.length; i++) {
      await this.write(bytes.subarray(i, i + 1));
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  end(): void {
    this.socket.end();
  }

  destroy(): void {
    this.socket.destroy();
  }

  /** The next response frame (without its size prefix); fails on close or after WAIT_MS. */
  async next_frame(): Promise<Buffer> {
    const deadline = Date.now() + WAIT_MS;
    for (;;) {
      const frame = this.frames.shift();
      if (frame) return frame;
      if (this.closed) throw new Error('connection closed while waiting for a response');
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no response within ${WAIT_MS} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  /** Waits for the broker to close the connection; fails after WAIT_MS. */
  async wait_closed(): Promise<void> {
    await with_timeout(this.closed_promise, WAIT_MS, 'the broker to close the connection');
  }

  /** Expects the broker to close the connection without answering anything. */
  async expect_closed_without_response(what: string): Promise<void> {
    await this.wait_closed();
    assert.equal(this.bytes_received, 0, `${what}: the broker answered before closing`);
  }

  async call(api: ApiSpec, version: number, body: Value): Promise<Value> {
    const correlation_id = this.correlation();
    await this.write(encode_request(api, version, correlation_id, body));
    return decode_response(api, version, await this.next_frame(), correlation_id);
  }
}
