// One AMQP 0-9-1 connection: the protocol header, the handshake (start, tune, open), heartbeats,
// channel 0's methods, and the channels. A connection exception sends connection.close and ends
// the socket once the client answers (or after CLOSE_OK_WAIT_MS); a channel exception closes only
// its channel (channel.ts). A turn's frames are gathered and leave in one socket write.
import type { ClientConnectionLimits } from '../client_connection_limits.ts';
import type net from 'node:net';
import type { Core, Credentials, Logger } from '../../core/index.ts';
import {
  AmqpError,
  FRAME_BODY,
  FRAME_HEADER,
  FRAME_HEARTBEAT,
  FRAME_METHOD,
  PROTOCOL_HEADER,
  ReplyCode,
  is_hard_error,
} from '../../protocol/amqp/constants.ts';
import { FrameReader, type Frame } from '../../protocol/amqp/frame_reader.ts';
import {
  decode_method,
  type DecodedMethod,
  type MethodArgs,
  type MethodInput,
  type MethodName,
} from '../../protocol/amqp/methods.ts';
import { HEARTBEAT_FRAME, content_frames, method_frame } from '../../protocol/amqp/frame_writer.ts';
import type { BasicProperties } from '../../protocol/amqp/properties.ts';
import { type GuestAccess, check_login, login_of, mechanisms_offered, vhost_refusal } from './authenticate.ts';
import { AmqpChannel } from './channel.ts';
import type { AmqpConnectionInfo, AmqpLimits, ChannelPort, ConnectionPort, RegistryPort } from './ports.ts';
import type { QueueConsumer } from './consumer.ts';

export const AMQP_LIMITS_DEFAULT: AmqpLimits = {
  frame_max_bytes: 131_072,
  channel_max: 2_047,
  heartbeat_s: 60,
  message_bytes_max: 1_000_000,
  unsent_bytes_max: 4 * 1024 * 1024,
};

/** What the handshake may take before the socket is closed. */
const HANDSHAKE_TIMEOUT_MS = 10_000;
const CLOSE_OK_WAIT_MS = 1_000;
/** Bytes of frames gathered before they are sent without waiting for the turn's end. */
const OUTGOING_BYTES_MAX = 1024 * 1024;

export interface AmqpConnectionDeps {
  core: Core;
  /** The client certificate's subject when the TLS listener checked one: EXTERNAL is then offered. */
  certificate: string | null;
  credentials: Credentials | null;
  guest: GuestAccess;
  logger: Logger;
  limits: AmqpLimits;
  registry: RegistryPort;
  /** Raised (a reason) while the data directory's file system is nearly full. */
  disk_alarm: { readonly reason: string | null };
  /** Connections per user, shared with the broker's other listeners. */
  client_limits: ClientConnectionLimits | null;
}

type State = 'header' | 'start_ok' | 'tune_ok' | 'open' | 'running' | 'closing' | 'closed';

export class AmqpConnection implements ConnectionPort {
  readonly id: string;
  private state: State = 'header';
  private readonly reader: FrameReader;
  private readonly channels = new Map<number, AmqpChannel>();
  frame_max_bytes: number;
  private channel_max: number;
  private heartbeat_s = 0;
  private heartbeat_timer: NodeJS.Timeout | null = null;
  private handshake_timer: NodeJS.Timeout | null;
  private last_read_ms = 0;
  private last_write_ms = 0;
  /** Frames written this turn, sent together at its end (or once they reach OUTGOING_BYTES_MAX). */
  private outgoing: Buffer[] = [];
  private outgoing_bytes = 0;
  private flush_scheduled = false;
  username = '';
  password_login = false;
  vhost = '/';
  client_properties: Record<string, unknown> = {};
  readonly opened_ms: number;

  constructor(
    readonly socket: net.Socket,
    readonly deps: AmqpConnectionDeps,
  ) {
    this.opened_ms = deps.core.clock.now_ms();
    this.last_read_ms = this.last_write_ms = deps.core.monotonic_clock.now_ms();
    this.id = `${socket.remoteAddress ?? '?'}:${socket.remotePort ?? 0}`;
    this.frame_max_bytes = deps.limits.frame_max_bytes;
    this.channel_max = deps.limits.channel_max;
    this.reader = new FrameReader(deps.limits.frame_max_bytes);
    this.handshake_timer = setTimeout(() => this.destroy('handshake timed out'), HANDSHAKE_TIMEOUT_MS);
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.on_data(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => this.on_close());
    socket.on('drain', () => this.on_drain());
  }

  get core(): Core {
    return this.deps.core;
  }

  get logger(): Logger {
    return this.deps.logger;
  }

  get limits(): AmqpLimits {
    return this.deps.limits;
  }

  get registry(): RegistryPort {
    return this.deps.registry;
  }

  get remote_address(): string | undefined {
    return this.socket.remoteAddress;
  }

  get channel_count(): number {
    return this.channels.size;
  }

  /** Reasons reading is held for (a channel's queue of methods, the disk alarm). */
  private readonly holds = new Set<string>();
  private has_published = false;
  private blocked = false;
  /** Set while reading is held for a producer byte-rate quota. */
  private quota_hold: NodeJS.Timeout | null = null;

  hold_reading(why: string, on: boolean): void {
    const before = this.holds.size;
    if (on) this.holds.add(why);
    else this.holds.delete(why);
    if (this.holds.size > 0 && before === 0) this.socket.pause();
    if (this.holds.size === 0 && before > 0) {
      this.last_read_ms = this.deps.core.monotonic_clock.now_ms(); // heartbeats were not read meanwhile
      this.socket.resume();
    }
  }

  /**
   * The disk alarm was raised or cleared: a connection that publishes is blocked
   * (connection.blocked when the client takes it, and its socket not read) until it clears, as
   * RabbitMQ blocks publishers on a resource alarm; consumers go on, so acks can free space.
   */
  alarm_changed(): void {
    if (this.deps.disk_alarm.reason !== null) {
      if (this.has_published) this.block();
      return;
    }
    if (!this.blocked) return;
    this.blocked = false;
    if (this.takes_blocked && this.state === 'running') this.send_method(0, 'connection.unblocked', {});
    this.hold_reading('alarm', false);
  }

  published(): void {
    this.has_published = true;
    if (this.deps.disk_alarm.reason !== null) this.block();
  }

  private block(): void {
    if (this.blocked || this.state !== 'running') return;
    this.blocked = true;
    if (this.takes_blocked) this.send_method(0, 'connection.blocked', { reason: this.deps.disk_alarm.reason ?? '' });
    this.hold_reading('alarm', true);
  }

  /**
   * A publisher over its byte rate (the quota of its user and connection name, as a Kafka client's
   * of its user and client id) is not read until it is back within it, as RabbitMQ's flow control
   * holds a fast publisher; it sees its publishes slow down, not an error.
   */
  private count_published(bytes: number): void {
    const client_id =
      typeof this.client_properties['connection_name'] === 'string' ? this.client_properties['connection_name'] : '';
    const throttle_ms = this.deps.core.quotas.record({ user: this.username, client_id }, 'producer_byte_rate', bytes);
    if (throttle_ms <= 0) return;
    // The throttle is the whole debt: frames already read add to it, so the newest says how long to wait.
    if (this.quota_hold !== null) clearTimeout(this.quota_hold);
    else this.hold_reading('quota', true);
    this.quota_hold = setTimeout(() => {
      this.quota_hold = null;
      this.hold_reading('quota', false);
    }, throttle_ms);
    this.quota_hold.unref();
  }

  /** Whether the client announced the connection.blocked capability. */
  private get takes_blocked(): boolean {
    const capabilities = this.client_properties['capabilities'];
    return (
      typeof capabilities === 'object' &&
      capabilities !== null &&
      (capabilities as Record<string, unknown>)['connection.blocked'] === true
    );
  }

  /** Whether the socket has more unsent than deliveries may add to. */
  get congested(): boolean {
    return this.socket.writableLength > this.deps.limits.unsent_bytes_max;
  }

  private on_data(chunk: Buffer): void {
    this.last_read_ms = this.deps.core.monotonic_clock.now_ms();
    try {
      this.reader.push(chunk);
      if (this.state === 'header') {
        const header = this.reader.take_protocol_header();
        if (header === 'incomplete') return;
        if (header === 'wrong') {
          this.write(PROTOCOL_HEADER);
          this.destroy('wrong protocol header', true);
          return;
        }
        this.send_start();
      }
      for (let frame = this.reader.next(); frame && this.state !== 'closed'; frame = this.reader.next())
        this.on_frame(frame);
    } catch (error) {
      this.fail(error);
    }
  }

  /** A connection exception: tells the client and closes; anything else is a bug of ours. */
  fail(error: unknown, class_id = 0, method_id = 0): void {
    if (error instanceof AmqpError) {
      this.close_with(error.code, error.message, error.class_id || class_id, error.method_id || method_id);
      return;
    }
    this.deps.logger.error({ error: String(error), connection: this.id }, 'AMQP connection failed');
    this.close_with(ReplyCode.INTERNAL_ERROR, 'INTERNAL_ERROR', class_id, method_id);
  }

  private on_frame(frame: Frame): void {
    if (frame.type === FRAME_HEARTBEAT) return;
    if (this.state === 'closing') {
      // Only close and close-ok count while closing; everything else is dropped (the spec's rule).
      if (frame.type === FRAME_METHOD && frame.channel === 0) this.on_connection_method(decode_method(frame.payload));
      return;
    }
    if (frame.channel === 0) {
      if (frame.type !== FRAME_METHOD)
        throw new AmqpError(ReplyCode.UNEXPECTED_FRAME, `frame type ${frame.type} on channel 0`);
      this.on_connection_method(decode_method(frame.payload));
      return;
    }
    if (this.state !== 'running') throw new AmqpError(ReplyCode.CHANNEL_ERROR, 'channel frame before connection.open');
    this.on_channel_frame(frame);
  }

  private on_channel_frame(frame: Frame): void {
    let channel = this.channels.get(frame.channel);
    if (frame.type === FRAME_METHOD) {
      const method = decode_method(frame.payload);
      if (!channel) {
        if (method.name === 'channel.close-ok') return; // we closed it; the answer is late
        if (method.name !== 'channel.open')
          throw new AmqpError(
            ReplyCode.CHANNEL_ERROR,
            `expected channel.open on channel ${frame.channel}`,
            method.class_id,
            method.method_id,
          );
        if (frame.channel > this.channel_max)
          throw new AmqpError(
            ReplyCode.CHANNEL_ERROR,
            `channel ${frame.channel} above channel_max ${this.channel_max}`,
          );
        channel = new AmqpChannel(this, frame.channel);
        this.channels.set(frame.channel, channel);
      }
      channel.on_method(method);
    } else if (!channel) {
      throw new AmqpError(ReplyCode.CHANNEL_ERROR, `content on channel ${frame.channel}, which is not open`);
    } else if (frame.type === FRAME_HEADER) {
      channel.on_header(frame.payload);
    } else if (frame.type === FRAME_BODY) {
      channel.on_body(frame.payload);
      if (this.deps.core.quotas.active) this.count_published(frame.payload.length);
    } else {
      throw new AmqpError(ReplyCode.UNEXPECTED_FRAME, `frame type ${frame.type} on channel ${frame.channel}`);
    }
  }

  private on_connection_method(method: DecodedMethod): void {
    switch (method.name) {
      case 'connection.start-ok':
        return this.expect('start_ok', method, () => {
          this.on_start_ok(method.args).catch((error: unknown) => this.fail(error, 10, 11));
        });
      case 'connection.tune-ok':
        return this.expect('tune_ok', method, () => this.on_tune_ok(method.args));
      case 'connection.open':
        return this.expect('open', method, () => this.on_open(method.args));
      case 'connection.close':
        this.send_method(0, 'connection.close-ok', {});
        this.destroy('closed by the client', true);
        return;
      case 'connection.close-ok':
        this.destroy('closed', true);
        return;
      case 'connection.update-secret':
        this.send_method(0, 'connection.update-secret-ok', {});
        return;
      default:
        if (this.state === 'closing') return;
        throw new AmqpError(
          ReplyCode.COMMAND_INVALID,
          `${method.name} is not allowed on channel 0`,
          method.class_id,
          method.method_id,
        );
    }
  }

  private expect(state: State, method: DecodedMethod, run: () => void): void {
    if (this.state === 'closing') return;
    if (this.state !== state)
      throw new AmqpError(
        ReplyCode.COMMAND_INVALID,
        `${method.name} not expected now`,
        method.class_id,
        method.method_id,
      );
    run();
  }

  private send_start(): void {
    this.state = 'start_ok';
    this.send_method(0, 'connection.start', {
      version_major: 0,
      version_minor: 9,
      server_properties: {
        product: 'Sluice',
        version: '0.1.0',
        platform: `Node.js ${process.version}`,
        capabilities: {
          publisher_confirms: true,
          exchange_exchange_bindings: true,
          'basic.nack': true,
          consumer_cancel_notify: true,
          'connection.blocked': true,
          authentication_failure_close: true,
          per_consumer_qos: true,
        },
      },
      mechanisms: Buffer.from(mechanisms_offered(this.deps.certificate)),
      locales: Buffer.from('en_US'),
    });
  }

  private async on_start_ok(args: MethodArgs<'connection.start-ok'>): Promise<void> {
    this.client_properties = args.client_properties;
    const certificate = args.mechanism === 'EXTERNAL' ? this.deps.certificate : null;
    const login = certificate ? { username: certificate, password: '' } : login_of(args.mechanism, args.response);
    const offered = mechanisms_offered(this.deps.certificate);
    const refusal = certificate
      ? null
      : login
        ? await check_login(login, this.deps.credentials, this.remote_address, this.deps.guest)
        : `mechanism ${args.mechanism} refused or its response malformed (offered: ${offered})`;
    if (this.state !== 'start_ok') return;
    const limited = refusal ?? this.deps.client_limits?.admit_user(this.socket, login!.username) ?? null;
    if (limited !== null) {
      this.close_with(ReplyCode.ACCESS_REFUSED, `ACCESS_REFUSED - ${limited}`, 10, 11);
      return;
    }
    this.username = login!.username;
    this.password_login = certificate === null;
    this.state = 'tune_ok';
    this.send_method(0, 'connection.tune', {
      channel_max: this.deps.limits.channel_max,
      frame_max: this.deps.limits.frame_max_bytes,
      heartbeat: this.deps.limits.heartbeat_s,
    });
  }

  private on_tune_ok(args: MethodArgs<'connection.tune-ok'>): void {
    const limits = this.deps.limits;
    if (args.frame_max !== 0 && args.frame_max < 4096)
      throw new AmqpError(ReplyCode.SYNTAX_ERROR, `frame_max ${args.frame_max} below the minimum 4096`, 10, 31);
    if (args.frame_max > limits.frame_max_bytes)
      throw new AmqpError(
        ReplyCode.SYNTAX_ERROR,
        `frame_max ${args.frame_max} above the server's ${limits.frame_max_bytes}`,
        10,
        31,
      );
    this.frame_max_bytes = args.frame_max === 0 ? limits.frame_max_bytes : args.frame_max;
    this.reader.set_frame_max(this.frame_max_bytes);
    this.channel_max = args.channel_max === 0 ? limits.channel_max : Math.min(args.channel_max, limits.channel_max);
    this.heartbeat_s = args.heartbeat;
    this.state = 'open';
  }

  private on_open(args: MethodArgs<'connection.open'>): void {
    const refusal = vhost_refusal(this.deps.credentials, this.username, args.virtual_host, !this.password_login);
    if (refusal) throw new AmqpError(ReplyCode.NOT_ALLOWED, `NOT_ALLOWED - ${refusal}`, 10, 40);
    this.vhost = args.virtual_host;
    this.state = 'running';
    if (this.handshake_timer) clearTimeout(this.handshake_timer);
    this.handshake_timer = null;
    this.send_method(0, 'connection.open-ok', { known_hosts: '' });
    this.start_heartbeats();
    this.deps.registry.opened(this);
  }

  private start_heartbeats(): void {
    if (this.heartbeat_s === 0) return;
    const interval_ms = (this.heartbeat_s * 1000) / 2;
    this.heartbeat_timer = setInterval(() => {
      const now = this.deps.core.monotonic_clock.now_ms();
      if (this.holds.size === 0 && now - this.last_read_ms > this.heartbeat_s * 2000) {
        this.destroy('missed heartbeats');
        return;
      }
      if (now - this.last_write_ms >= interval_ms) this.write(HEARTBEAT_FRAME);
    }, interval_ms);
    this.heartbeat_timer.unref();
  }

  /** Sends connection.close and stops reading anything but its answer. */
  close_with(code: number, text: string, class_id = 0, method_id = 0): void {
    if (this.state === 'closing' || this.state === 'closed') return;
    this.state = 'closing';
    this.send_method(0, 'connection.close', { reply_code: code, reply_text: text.slice(0, 255), class_id, method_id });
    setTimeout(() => this.destroy('close-ok not received'), CLOSE_OK_WAIT_MS).unref();
  }

  /** Channel exceptions close the channel; connection exceptions (hard errors) the connection. */
  channel_failed(channel: ChannelPort, error: AmqpError): void {
    if (is_hard_error(error.code)) this.close_with(error.code, error.message, error.class_id, error.method_id);
    else channel.close_with(error);
  }

  /** The broker ends a consumer (its queue is being deleted). */
  cancel_consumer(consumer: QueueConsumer): void {
    for (const channel of this.channels.values()) channel.cancel_by_broker(consumer);
  }

  channel_closed(channel: ChannelPort): void {
    if (this.channels.get(channel.id) === channel) this.channels.delete(channel.id);
  }

  send_method<N extends MethodName>(channel: number, name: N, args: MethodInput<N>): void {
    this.write(method_frame(channel, name, args));
  }

  /** A content-bearing method, then its header and body frames, one after the other. */
  send_content<N extends MethodName>(
    channel: number,
    name: N,
    args: MethodInput<N>,
    properties: Buffer | BasicProperties,
    body: Buffer,
  ): void {
    let frames: Buffer[];
    try {
      frames = content_frames(channel, 60, body, properties, this.frame_max_bytes);
    } catch (error) {
      if (!(error instanceof RangeError)) throw error;
      // Properties too large for the frame_max this client took (a Kafka record's many headers):
      // the message goes without them rather than never.
      const note = { headers: { 'x-sluice-properties-dropped': error.message } };
      frames = content_frames(channel, 60, body, note, this.frame_max_bytes);
    }
    this.write(method_frame(channel, name, args));
    for (const frame of frames) this.write(frame);
  }

  private write(bytes: Buffer): void {
    if (this.state === 'closed') return;
    this.outgoing.push(bytes);
    this.outgoing_bytes += bytes.length;
    if (this.outgoing_bytes >= OUTGOING_BYTES_MAX) this.flush();
    else if (!this.flush_scheduled) {
      this.flush_scheduled = true;
      process.nextTick(() => this.flush());
    }
  }

  /** What this turn wrote, as one buffer: one socket write, not one per frame. */
  private flush(): void {
    this.flush_scheduled = false;
    if (this.outgoing.length === 0) return;
    const bytes = this.outgoing.length === 1 ? this.outgoing[0]! : Buffer.concat(this.outgoing, this.outgoing_bytes);
    this.outgoing = [];
    this.outgoing_bytes = 0;
    this.last_write_ms = this.deps.core.monotonic_clock.now_ms();
    if (!this.socket.destroyed) this.socket.write(bytes);
  }

  private readonly drain_waiters: Array<() => void> = [];

  /** Resolves once the socket has drained below unsent_bytes_max (or closed). */
  drained(): Promise<void> {
    if (!this.congested || this.state === 'closed') return Promise.resolve();
    return new Promise((resolve) => this.drain_waiters.push(resolve));
  }

  private on_drain(): void {
    for (const wake of this.drain_waiters.splice(0)) wake();
  }

  destroy(why: string, graceful = false): void {
    if (this.state === 'closed') return;
    if (!graceful) this.deps.logger.info({ connection: this.id, why }, 'AMQP connection dropped');
    this.flush();
    if (graceful) this.socket.end();
    else this.socket.destroy();
    this.on_close();
  }

  private on_close(): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    if (this.handshake_timer) clearTimeout(this.handshake_timer);
    if (this.heartbeat_timer) clearInterval(this.heartbeat_timer);
    for (const channel of this.channels.values()) channel.release_all();
    this.channels.clear();
    this.on_drain();
    this.deps.registry.closed(this);
  }

  info(): AmqpConnectionInfo {
    let consumers = 0;
    for (const channel of this.channels.values()) consumers += channel.consumer_count;
    return {
      id: this.id,
      user: this.username,
      vhost: this.vhost,
      channels: this.channels.size,
      consumers,
      opened_ms: this.opened_ms,
      client: this.client_properties,
    };
  }

  /** The user it logged in as was removed: tell the client, then close. */
  user_removed(): void {
    this.close_with(ReplyCode.CONNECTION_FORCED, `CONNECTION_FORCED - user ${this.username} was removed`);
  }

  /** The broker is stopping: tell the client, then close. */
  shutdown(): void {
    this.close_with(ReplyCode.CONNECTION_FORCED, 'CONNECTION_FORCED - broker shutting down');
  }
}
