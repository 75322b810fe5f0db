// A client's TCP connection to a Kafka-protocol broker: requests pipelined up to a bound, responses
// matched in order by correlation id and decoded with the shared protocol codecs. Every wait is
// bounded (connect, each request). The SDK, the benchmark clients and follower replicas build on it.
import net from 'node:net';
import tls from 'node:tls';
import { performance } from 'node:perf_hooks';
import { message_codec, type MessageCodec, type Value } from './codec.ts';
import { response_header_flexible, skip_header_tags, write_request_header } from './header.ts';
import type { AnyMessage, ApiSpec, RequestIn, ResponseOf } from './schema.ts';
import { Reader, Writer } from './wire.ts';
import { FrameReader } from './frame_reader.ts';

const CONNECT_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 30_000;
/** Largest response frame accepted. */
const FRAME_BYTES_MAX = 256 * 1024 * 1024;

/**
 * A request body encoded once, sendable many times (only the header changes per request). `A`
 * names the API, so the response is typed.
 */
export interface PreparedRequest<A extends ApiSpec = ApiSpec> {
  api: A;
  version: number;
  request_flexible: boolean;
  response_codec: MessageCodec;
  chunks: Buffer[];
  length: number;
}

export function prepare<A extends ApiSpec>(api: A, version: number, body: RequestIn<A>): PreparedRequest<A> {
  const codec = message_codec(api.request, version);
  const writer = new Writer();
  codec.encode(writer, body as Value);
  const length = writer.length;
  // Small chunks are slices of the writer's 8 KiB scratch buffer: copied so a request kept for
  // reuse holds only its own bytes (large byte fields stay references to the caller's buffers).
  const chunks = writer.finish().map((chunk) => (chunk.length < 1024 ? Buffer.from(chunk) : chunk));
  return {
    api,
    version,
    request_flexible: codec.flexible,
    response_codec: message_codec(api.response, version),
    chunks,
    length,
  };
}

interface Pending {
  correlation_id: number;
  request: PreparedRequest;
  sent_at: number;
  resolve: (body: Value) => void;
  reject: (error: Error) => void;
}

export interface ConnectionOptions {
  client_id?: string;
  /** Requests outstanding at once; request() waits for a slot beyond this. */
  max_in_flight?: number;
  request_timeout_ms?: number;
  /** Connect over TLS with these options (certificate authorities, client certificate, ...). */
  tls?: tls.ConnectionOptions | null;
}

/** One TCP connection: pipelined requests, responses matched in order by correlation id. */
export class Connection {
  readonly max_in_flight: number;
  private readonly request_timeout_ms: number;
  private readonly client_id: string;
  private readonly header_templates = new Map<number, Buffer>();
  private readonly pending: Pending[] = [];
  private readonly slot_waiters: Array<() => void> = [];
  private next_correlation = 1;
  private failure: Error | null = null;
  private readonly watchdog: NodeJS.Timeout;

  private constructor(
    private readonly socket: net.Socket,
    options: ConnectionOptions,
    reader: FrameReader,
  ) {
    this.max_in_flight = options.max_in_flight ?? 16;
    this.request_timeout_ms = options.request_timeout_ms ?? REQUEST_TIMEOUT_MS;
    this.client_id = options.client_id ?? 'sluice';
    socket.setNoDelay(true);
    reader.sink = {
      size_problem: (size) => (size < 4 || size > FRAME_BYTES_MAX ? `response frame size ${size} out of range` : null),
      frame: (frame) => this.on_frame(frame),
      fail: (reason) => this.fail(new Error(reason)),
    };
    if (options.tls) socket.on('data', (data: Buffer) => reader.push(data));
    socket.on('error', (error) => this.fail(error));
    socket.on('close', () => this.fail(new Error('connection closed')));
    this.watchdog = setInterval(() => {
      const oldest = this.pending[0];
      if (oldest && performance.now() - oldest.sent_at > this.request_timeout_ms) {
        this.fail(new Error(`no response to ${oldest.request.api.name} within ${this.request_timeout_ms} ms`));
      }
    }, 1000);
    this.watchdog.unref();
  }

  static connect(host: string, port: number, options: ConnectionOptions = {}): Promise<Connection> {
    return new Promise((resolve, reject) => {
      // With TLS the connection is usable after the handshake, not after the TCP connect.
      const reader = new FrameReader();
      const socket = options.tls
        ? tls.connect({ host, port, ...(net.isIP(host) ? {} : { servername: host }), ...options.tls })
        : net.connect({ host, port, onread: { buffer: reader.buffer, callback: reader.on_read } });
      const ready_event = options.tls ? 'secureConnect' : 'connect';
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new Error(`connect to ${host}:${port} timed out after ${CONNECT_TIMEOUT_MS} ms`));
      }, CONNECT_TIMEOUT_MS);
      socket.once('error', (error) => {
        clearTimeout(timer);
        reject(error);
      });
      socket.once(ready_event, () => {
        clearTimeout(timer);
        socket.removeAllListeners('error');
        resolve(new Connection(socket, options, reader));
      });
    });
  }

  /** True once the connection failed or was closed; it cannot be used again. */
  get is_closed(): boolean {
    return this.failure !== null;
  }

  get in_flight(): number {
    return this.pending.length;
  }

  /** Sends a request (waiting for a free slot first) and resolves with the decoded response body. */
  async request<A extends ApiSpec>(request: PreparedRequest<A>): Promise<ResponseOf<A>> {
    while (this.pending.length >= this.max_in_flight && this.failure === null) {
      await new Promise<void>((resolve) => this.slot_waiters.push(resolve));
    }
    if (this.failure) throw this.failure;
    const prefix = this.prefix_for(request);
    const correlation_id = prefix.readInt32BE(8);
    return new Promise<ResponseOf<A>>((resolve, reject) => {
      // The decoder built from A's declaration returns exactly ResponseOf<A>.
      this.pending.push({
        correlation_id,
        request,
        sent_at: performance.now(),
        resolve: resolve as (body: Value) => void,
        reject,
      });
      this.socket.cork();
      this.socket.write(prefix);
      for (const chunk of request.chunks) this.socket.write(chunk);
      this.socket.uncork();
    });
  }

  /**
   * Sends a request the broker will not answer (Produce with acks 0) and resolves once the socket
   * has taken its bytes. It takes no slot: nothing will come back to free one.
   */
  send_only(request: PreparedRequest): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    const prefix = this.prefix_for(request);
    return new Promise<void>((resolve, reject) => {
      this.socket.cork();
      this.socket.write(prefix);
      for (let i = 0; i < request.chunks.length; i++) {
        const last = i === request.chunks.length - 1;
        this.socket.write(request.chunks[i]!, last ? (error) => (error ? reject(error) : resolve()) : undefined);
      }
      this.socket.uncork();
    });
  }

  /** The size prefix and header of the next request (a new correlation id each time). */
  private prefix_for(request: PreparedRequest): Buffer {
    const correlation_id = this.next_correlation;
    this.next_correlation = (this.next_correlation % 0x7fffffff) + 1;
    // The header (size prefix included) is encoded once per API and version; each request copies
    // it and fills in its size and correlation id.
    const template = this.header_template(request);
    const prefix = Buffer.allocUnsafe(template.length);
    template.copy(prefix);
    prefix.writeInt32BE(template.length - 4 + request.length, 0);
    prefix.writeInt32BE(correlation_id, 8);
    return prefix;
  }

  private header_template(request: PreparedRequest): Buffer {
    const key = request.api.api_key * 1000 + request.version;
    let template = this.header_templates.get(key);
    if (!template) {
      const writer = new Writer();
      writer.int32(0);
      write_request_header(
        writer,
        { api_key: request.api.api_key, api_version: request.version, correlation_id: 0, client_id: this.client_id },
        request.request_flexible,
      );
      template = writer.to_buffer();
      this.header_templates.set(key, template);
    }
    return template;
  }

  /** One-off request: encodes `body` and sends it. */
  call<A extends ApiSpec>(api: A, version: number, body: RequestIn<A>): Promise<ResponseOf<A>> {
    return this.request(prepare(api, version, body));
  }

  /** A request whose body is not checked against the API's types (tests that send odd values). */
  call_untyped(api: ApiSpec, version: number, body: AnyMessage): Promise<AnyMessage> {
    return this.request(prepare(api, version, body));
  }

  close(): void {
    clearInterval(this.watchdog);
    if (!this.failure) this.failure = new Error('connection closed by the client');
    this.socket.destroy();
    this.reject_all(this.failure);
  }

  private fail(error: Error): void {
    clearInterval(this.watchdog);
    if (this.failure) return;
    this.failure = error;
    this.socket.destroy();
    this.reject_all(error);
  }

  private reject_all(error: Error): void {
    for (const pending of this.pending.splice(0)) pending.reject(error);
    for (const wake of this.slot_waiters.splice(0)) wake();
  }

  private on_frame(frame: Buffer): void {
    const pending = this.pending.shift();
    const correlation_id = frame.readInt32BE(0);
    if (!pending || pending.correlation_id !== correlation_id) {
      if (pending) this.pending.unshift(pending);
      return this.fail(
        new Error(`response with correlation id ${correlation_id}, expected ${pending?.correlation_id ?? 'none'}`),
      );
    }
    let body: Value;
    try {
      const reader = new Reader(frame, 4);
      if (response_header_flexible(pending.request.api.api_key, pending.request.response_codec.flexible))
        skip_header_tags(reader);
      body = pending.request.response_codec.decode(reader);
    } catch (error) {
      pending.reject(error as Error);
      return this.fail(error as Error);
    }
    this.slot_waiters.shift()?.();
    pending.resolve(body);
  }
}
