// One client connection: a small state machine that frames requests, decodes them, runs their
// handlers concurrently and writes responses strictly in request order. Bounded everywhere: frame
// size, requests in flight, request bytes in flight, and response bytes waiting for a slow reader
// (the socket stops being read until they drain). A malformed frame closes only this connection.
// A client over its quota is throttled here too: no request is read until its throttle has passed.
import type net from 'node:net';
import { performance } from 'node:perf_hooks';
import { Reader, Writer, ProtocolDecodeError } from '../../protocol/kafka/wire.ts';
import type { FrameReader } from '../../protocol/kafka/frame_reader.ts';
import { message_codec } from '../../protocol/kafka/codec.ts';
import {
  API_VERSIONS_KEY,
  read_request_header,
  response_header_flexible,
  skip_header_tags,
  write_response_header,
  type RequestHeader,
} from '../../protocol/kafka/header.ts';
import { in_range } from '../../protocol/kafka/schema.ts';
import { ErrorCode } from '../../protocol/kafka/error_codes.ts';
import { stop_on_invariant_failure, type Logger } from '../../core/index.ts';
import { CloseConnection, type KafkaHandler, type RequestContext } from './handler.ts';
import { sasl_step } from './sasl_exchange.ts';
import { type RequestCost, request_cost } from './throttle.ts';

export interface ConnectionLimits {
  /** Largest request frame accepted; a larger size prefix closes the connection. */
  request_bytes_max: number;
  /** Requests decoded and not yet answered; reading pauses at the limit. */
  inflight_requests_max: number;
  /** Bytes of those requests; reading pauses at the limit. */
  inflight_bytes_max: number;
  /** Response bytes queued in the socket before reading pauses (slow reader). */
  unsent_bytes_max: number;
}

export const CONNECTION_LIMITS_DEFAULT: ConnectionLimits = {
  request_bytes_max: 100 * 1024 * 1024,
  inflight_requests_max: 64,
  inflight_bytes_max: 128 * 1024 * 1024,
  unsent_bytes_max: 64 * 1024 * 1024,
};

/** The smallest request: api key, version, correlation id and a null client id (v1 header). */
const REQUEST_BYTES_MIN = 10;
/** After a failed authentication, how long the client has to read the answer before the socket goes. */
const SASL_CLOSE_GRACE_MS = 1000;
/** Largest bare SASL token accepted after a v0 handshake. */
const SASL_TOKEN_BYTES_MAX = 64 * 1024;

type ResponseSpec = KafkaHandler['api']['response'];

/** The name quotas know an unauthenticated client by, as Kafka does. */
const ANONYMOUS_USER = 'ANONYMOUS';

function header_flexible(header: RequestHeader, spec: ResponseSpec): boolean {
  return response_header_flexible(header.api_key, in_range(spec.flexible_versions, header.api_version));
}

interface Pending {
  done: boolean;
  response: Buffer[] | null;
}

type State = 'open' | 'closing' | 'closed';

export class KafkaConnection {
  private state: State = 'open';
  /** Whole frames read and not yet dispatched (at most one read buffer's worth past a pause). */
  private frames: Buffer[] = [];
  private frames_head = 0;
  private readonly pending: Pending[] = [];
  private inflight_bytes = 0;
  private paused = false;
  /** Set while the client serves a quota throttle. */
  private throttled: NodeJS.Timeout | null = null;
  private throttled_until_ms = 0;
  private idle_waiters: Array<() => void> = [];

  constructor(
    private readonly socket: net.Socket,
    reader: FrameReader,
    private readonly handlers: ReadonlyMap<number, KafkaHandler>,
    private readonly context: Omit<RequestContext, 'header' | 'version' | 'client_host'>,
    private readonly limits: ConnectionLimits,
    private readonly logger: Logger,
  ) {
    socket.setNoDelay(true);
    reader.sink = {
      size_problem: (size) => this.size_problem(size),
      frame: (frame) => this.on_frame(frame),
      fail: (reason) => this.fail(reason),
    };
    socket.on('drain', () => this.process());
    socket.on('error', () => undefined);
    socket.on('close', () => {
      this.state = 'closed';
      this.notify_idle();
    });
  }

  get client_host(): string {
    return this.socket.remoteAddress ?? '';
  }

  private on_frame(frame: Buffer): void {
    if (this.state !== 'open') return;
    this.frames.push(frame);
    this.process();
  }

  /** A frame's size is checked as soon as its prefix is read, before any of it is buffered. */
  private size_problem(size: number): string | null {
    const raw_token = this.context.sasl.expects_raw_token;
    const size_min = raw_token ? 0 : REQUEST_BYTES_MIN;
    const size_max = raw_token ? SASL_TOKEN_BYTES_MAX : this.limits.request_bytes_max;
    return size < size_min || size > size_max
      ? `${raw_token ? 'SASL token' : 'request'} size ${size} outside [${size_min}, ${size_max}]`
      : null;
  }

  /**
   * Dispatches read frames while under the limits. One read can hold many requests, so the
   * limits are checked per frame, not only by pausing the socket; what is left waits until a
   * response or a drain makes room (flush and 'drain' call this again).
   */
  private process(): void {
    while (this.state === 'open' && this.frames_head < this.frames.length && !this.saturated()) {
      const frame = this.frames[this.frames_head]!;
      this.frames[this.frames_head++] = undefined as never;
      // Checked again: a SASL v0 handshake dispatched since the size was read changes the bounds.
      const problem = this.size_problem(frame.length);
      if (problem !== null) return this.fail(problem);
      if (this.context.sasl.expects_raw_token) this.raw_sasl_token(frame);
      else this.dispatch(frame);
    }
    if (this.frames_head === this.frames.length) {
      this.frames = [];
      this.frames_head = 0;
    }
    this.update_flow();
  }

  private saturated(): boolean {
    return (
      this.throttled !== null ||
      this.pending.length >= this.limits.inflight_requests_max ||
      this.inflight_bytes >= this.limits.inflight_bytes_max ||
      this.socket.writableLength >= this.limits.unsent_bytes_max
    );
  }

  private dispatch(frame: Buffer): void {
    const reader = new Reader(frame);
    let header: RequestHeader;
    try {
      header = read_request_header(reader);
    } catch (error) {
      this.fail(`unreadable request header: ${String(error)}`);
      return;
    }
    if (!this.context.sasl.allows(header.api_key)) {
      this.fail(`API ${header.api_key} before SASL authentication`);
      return;
    }
    const handler = this.handlers.get(header.api_key);
    const supported =
      handler !== undefined && header.api_version >= handler.min_version && header.api_version <= handler.max_version;
    if (!supported) {
      if (header.api_key === API_VERSIONS_KEY) {
        // Kafka's rule: an unknown ApiVersions version is answered in the v0 layout with error 35
        // and the supported range of ApiVersions itself, so the client can retry lower.
        this.enqueue(frame.length, Promise.resolve(this.unsupported_api_versions(header)));
        return;
      }
      this.fail(`unsupported API ${header.api_key} version ${header.api_version}`);
      return;
    }
    const spec = handler.api;
    // Nothing is measured while no quota is set.
    const cost = this.context.core.quotas.active
      ? request_cost(this.quota_client(header), header.api_key, frame.length)
      : null;
    let body;
    try {
      const request_codec = message_codec(spec.request, header.api_version);
      if (request_codec.flexible) skip_header_tags(reader);
      body = request_codec.decode(reader);
    } catch (error) {
      this.fail(
        `malformed ${spec.name} v${header.api_version} request: ` +
          `${error instanceof ProtocolDecodeError ? error.message : String(error)}`,
      );
      return;
    }
    cost?.lap();
    const ctx: RequestContext = { ...this.context, header, version: header.api_version, client_host: this.client_host };
    const work = Promise.resolve()
      .then(() => (cost ? cost.timed(() => handler.handle(body, ctx)) : handler.handle(body, ctx)))
      .then((response) =>
        cost
          ? this.respond_throttled(header, spec.response, response, cost)
          : this.encode_or_none(header, spec.response, response),
      );
    this.enqueue(frame.length, work);
  }

  private encode_or_none(
    header: RequestHeader,
    spec: ResponseSpec,
    body: Record<string, unknown> | null,
  ): Buffer[] | null {
    return body === null ? null : this.encode(header, spec, body);
  }

  /** Encodes the response with the throttle its cost earns, and holds the connection that long. */
  private respond_throttled(
    header: RequestHeader,
    spec: ResponseSpec,
    body: Record<string, unknown> | null,
    cost: RequestCost,
  ): Buffer[] | null {
    const quotas = this.context.core.quotas;
    let throttle_ms = cost.throttle_before_encoding(quotas);
    let response: Buffer[] | null = null;
    if (body !== null) {
      const told = throttle_ms > 0 ? { ...body, throttle_time_ms: throttle_ms } : body;
      response = cost.timed(() => this.encode(header, spec, told));
      throttle_ms = cost.throttle_after_encoding(quotas, response, header_flexible(header, spec), throttle_ms);
    }
    if (throttle_ms > 0) this.throttle(throttle_ms);
    return response;
  }

  /** Holds the connection for `throttle_ms` from now, unless it is held longer already. */
  private throttle(throttle_ms: number): void {
    const until_ms = performance.now() + throttle_ms;
    if (this.throttled !== null && until_ms <= this.throttled_until_ms) return;
    this.throttled_until_ms = until_ms;
    if (this.throttled !== null) clearTimeout(this.throttled);
    this.throttled = setTimeout(() => {
      this.throttled = null;
      this.process();
    }, throttle_ms);
    this.throttled.unref();
    this.update_flow();
  }

  private quota_client(header: RequestHeader): { user: string; client_id: string } {
    return { user: this.context.sasl.principal ?? ANONYMOUS_USER, client_id: header.client_id ?? '' };
  }

  /** A token of a pre-1.0 (SaslHandshake v0) exchange: answered as a bare size-prefixed token. */
  private raw_sasl_token(token: Buffer): void {
    const peer = { sasl: this.context.sasl, client_host: this.client_host, logger: this.logger };
    const work = sasl_step(peer, token).then((answer) => {
      // v0 has no way to carry an error: the connection just closes, as with Kafka.
      if (answer.error_code !== ErrorCode.NONE)
        throw new CloseConnection(answer.error_message ?? 'SASL authentication failed');
      const size = Buffer.allocUnsafe(4);
      size.writeInt32BE(answer.auth_bytes.length, 0);
      return [size, answer.auth_bytes];
    });
    this.enqueue(token.length, work);
  }

  private unsupported_api_versions(header: RequestHeader): Buffer[] {
    const handler = this.handlers.get(API_VERSIONS_KEY)!;
    const writer = new Writer();
    const set_size = writer.reserve_int32();
    write_response_header(writer, header.correlation_id, false);
    message_codec(handler.api.response, 0).encode(writer, {
      error_code: ErrorCode.UNSUPPORTED_VERSION,
      api_keys: [{ api_key: API_VERSIONS_KEY, min_version: handler.min_version, max_version: handler.max_version }],
    });
    set_size(writer.length - 4);
    return writer.finish();
  }

  private encode(header: RequestHeader, spec: ResponseSpec, body: Record<string, unknown>): Buffer[] {
    const codec = message_codec(spec, header.api_version);
    const writer = new Writer();
    const set_size = writer.reserve_int32();
    write_response_header(writer, header.correlation_id, header_flexible(header, spec));
    codec.encode(writer, body);
    set_size(writer.length - 4);
    return writer.finish();
  }

  private enqueue(request_bytes: number, work: Promise<Buffer[] | null>): void {
    const entry: Pending = { done: false, response: null };
    this.pending.push(entry);
    this.inflight_bytes += request_bytes;
    work.then(
      (response) => {
        entry.done = true;
        entry.response = response;
        this.inflight_bytes -= request_bytes;
        this.flush();
      },
      (error: unknown) => {
        this.inflight_bytes -= request_bytes;
        if (error instanceof CloseConnection) return this.fail(error.reason);
        if (stop_on_invariant_failure(error, this.logger)) return this.fail('invariant broken');
        this.logger.error(
          { error: String(error), stack: error instanceof Error ? error.stack : undefined },
          'request handler failed',
        );
        this.fail('internal error while handling a request');
      },
    );
  }

  /** Writes every finished response at the head of the queue, in request order. */
  private flush(): void {
    if (this.state === 'closed') return;
    let wrote = false;
    while (this.pending.length > 0 && this.pending[0]!.done) {
      const { response } = this.pending.shift()!;
      if (response === null) continue;
      if (!wrote) this.socket.cork();
      wrote = true;
      for (const chunk of response) this.socket.write(chunk);
    }
    if (wrote) this.socket.uncork();
    if (this.context.sasl.close_after_response && this.state === 'open') {
      // A failed authentication: the answer saying why is the last thing this connection sends.
      this.state = 'closing';
      this.logger.warn({ client: this.client_host }, 'closing Kafka connection after a failed SASL exchange');
      this.socket.end();
      setTimeout(() => this.socket.destroy(), SASL_CLOSE_GRACE_MS).unref();
      return;
    }
    this.process();
    this.notify_idle();
  }

  /** Pauses reading while too much is in flight or unsent, resumes when it drains. */
  private update_flow(): void {
    if (this.state === 'closed') return;
    const busy = this.saturated() || this.state === 'closing';
    if (busy && !this.paused) {
      this.socket.pause();
      this.paused = true;
    } else if (!busy && this.paused) {
      this.paused = false;
      this.socket.resume();
    }
  }

  private fail(reason: string): void {
    if (this.state === 'closed') return;
    this.logger.warn({ client: this.client_host, reason }, 'closing Kafka connection');
    this.state = 'closed';
    this.socket.destroy();
    this.notify_idle();
  }

  private notify_idle(): void {
    if (this.pending.length > 0 && this.state !== 'closed') return;
    for (const resolve of this.idle_waiters.splice(0)) resolve();
  }

  /** The user this connection logged in as with SASL, or null (no SASL, or not yet). */
  get sasl_user(): string | null {
    const sasl = this.context.sasl;
    return sasl.enabled && sasl.state === 'authenticated' ? sasl.principal : null;
  }

  /** Closes the connection now, saying why in the log. */
  close(reason: string): void {
    this.fail(reason);
  }

  /** Stops reading new requests, answers those in flight, then closes. */
  async shutdown(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'closing';
    this.update_flow();
    if (this.pending.length > 0) await new Promise<void>((resolve) => this.idle_waiters.push(resolve));
    await new Promise<void>((resolve) => {
      if (this.socket.destroyed) return resolve();
      this.socket.end(() => resolve());
      setTimeout(resolve, 1000).unref();
    });
    this.socket.destroy();
    this.state = 'closed';
  }
}
