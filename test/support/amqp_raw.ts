// A bare AMQP 0-9-1 client for tests that send what real clients never would: frames written by
// hand (our own codec), bytes split anywhere, and the server's answers read frame by frame.
import net from 'node:net';
import { FrameReader, type Frame } from '../../src/protocol/amqp/frame_reader.ts';
import {
  decode_method,
  type DecodedMethod,
  type MethodInput,
  type MethodName,
} from '../../src/protocol/amqp/methods.ts';
import { method_frame } from '../../src/protocol/amqp/frame_writer.ts';
import { PROTOCOL_HEADER, FRAME_METHOD } from '../../src/protocol/amqp/constants.ts';

const WAIT_MS = 10_000;

export class RawAmqp {
  private readonly reader = new FrameReader(1 << 20, { protocol_header: false });
  private readonly frames: Frame[] = [];
  private waiter: (() => void) | null = null;
  closed = false;
  /** Bytes received before any frame (a protocol header the server sent back). */
  raw = Buffer.alloc(0);

  private constructor(readonly socket: net.Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.raw = Buffer.concat([this.raw, chunk]);
      if (this.raw.subarray(0, 4).toString() === 'AMQP') return; // the server's own header, then close
      this.reader.push(chunk);
      for (let f = this.reader.next(); f; f = this.reader.next()) this.frames.push(f);
      this.waiter?.();
    });
    socket.on('close', () => {
      this.closed = true;
      this.waiter?.();
    });
    socket.on('error', () => undefined);
  }

  static async connect(address: string): Promise<RawAmqp> {
    const [host, port] = address.split(':') as [string, string];
    const socket = net.connect(Number(port), host);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    return new RawAmqp(socket);
  }

  /** Header, start-ok (PLAIN guest), tune-ok, open; then channel 1 opened. */
  static async open(address: string, frame_max = 131_072): Promise<RawAmqp> {
    const c = await RawAmqp.handshake(address, { frame_max });
    await c.expect('connection.open-ok');
    c.send(1, 'channel.open', {});
    await c.expect('channel.open-ok');
    return c;
  }

  /** Logs in and sends connection.open; the caller expects open-ok or a close. */
  static async handshake(
    address: string,
    { username = 'guest', password = 'guest', vhost = '/', frame_max = 131_072 } = {},
  ): Promise<RawAmqp> {
    const c = await RawAmqp.connect(address);
    c.write(PROTOCOL_HEADER);
    await c.expect('connection.start');
    c.send(0, 'connection.start-ok', {
      client_properties: {},
      mechanism: 'PLAIN',
      response: Buffer.from(`\0${username}\0${password}`),
      locale: 'en_US',
    });
    await c.expect('connection.tune');
    c.send(0, 'connection.tune-ok', { channel_max: 0, frame_max, heartbeat: 0 });
    c.send(0, 'connection.open', { virtual_host: vhost });
    return c;
  }

  write(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  send<N extends MethodName>(channel: number, name: N, args: MethodInput<N>): void {
    this.write(method_frame(channel, name, args));
  }

  /** The next frame, or null once the socket closed with nothing more. */
  async next_frame(): Promise<Frame | null> {
    const deadline = Date.now() + WAIT_MS;
    while (this.frames.length === 0) {
      if (this.closed) return null;
      if (Date.now() > deadline) throw new Error('no frame from the server');
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
        setTimeout(resolve, 100);
      });
      this.waiter = null;
    }
    return this.frames.shift()!;
  }

  /** The next method frame (content and heartbeats skipped); fails if it is not `name`. */
  async expect<N extends MethodName>(name: N): Promise<Extract<DecodedMethod, { name: N }>> {
    const method = await this.next_method();
    if (!method) throw new Error(`expected ${name}, the connection closed`);
    if (method.name !== name) throw new Error(`expected ${name}, got ${method.name} ${JSON.stringify(method.args)}`);
    return method as Extract<DecodedMethod, { name: N }>;
  }

  async next_method(): Promise<DecodedMethod | null> {
    for (;;) {
      const frame = await this.next_frame();
      if (!frame) return null;
      if (frame.type === FRAME_METHOD) return decode_method(frame.payload);
    }
  }

  /** Resolves once the server closed the socket. */
  async until_closed(): Promise<void> {
    const deadline = Date.now() + WAIT_MS;
    while (!this.closed) {
      if (Date.now() > deadline) throw new Error('the server did not close the connection');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  close(): void {
    this.socket.destroy();
  }
}
