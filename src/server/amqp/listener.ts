// The AMQP 0-9-1 listener: accepts connections and hands each to an AmqpConnection over the same
// core as the Kafka listener. close() tells every client the broker is going (CONNECTION_FORCED),
// then closes what is left.
import type { ClientConnectionLimits } from '../client_connection_limits.ts';
import net from 'node:net';
import type { Core, Credentials, Logger } from '../../core/index.ts';
import { AMQP_LIMITS_DEFAULT, AmqpConnection } from './connection.ts';
import type { AmqpConnectionInfo, AmqpLimits } from './ports.ts';
import { ConnectionRegistry } from './registry.ts';
import { type GuestAccess, served_vhosts } from './authenticate.ts';
import { DiskAlarm } from './disk_alarm.ts';
import { listen_on } from '../listen.ts';
import { listening_server, type TlsFiles } from '../tls_files.ts';

export interface AmqpListenerOptions {
  host: string;
  port: number;
  limits?: Partial<AmqpLimits>;
  /** Connections accepted at once; more are refused until some close. */
  connections_max?: number;
  /** Connections per address and per user, shared with the broker's other listeners. */
  connection_limits?: ClientConnectionLimits | null;
  /** Users allowed in (PLAIN, AMQPLAIN); null: guest/guest, from where `guest` says. */
  credentials?: Credentials | null;
  /** Where guest may log in from without a users file (default loopback). */
  guest?: GuestAccess;
  /** Below this much free disk, publishing connections are blocked (0: never). */
  disk_free_min_bytes?: number;
  /** When set, connections are TLS (amqps) with this certificate and key (reloaded when the files change). */
  tls?: TlsFiles | null;
  logger: Logger;
}

const SHUTDOWN_WAIT_MS = 1_000;
/** How often connections are checked for users removed meanwhile (the bound on how long one lingers). */
const USER_SWEEP_INTERVAL_MS = 1_000;

export class AmqpListener {
  private readonly server: net.Server;
  private readonly sockets = new Set<net.Socket>();
  readonly registry: ConnectionRegistry;
  private readonly limits: AmqpLimits;
  private readonly disk_alarm: DiskAlarm;
  private readonly stop_watching: () => void;
  private sweep: NodeJS.Timeout | null = null;
  /** The vhosts served: the users file's, or `/`. */
  readonly vhosts: readonly string[];

  constructor(
    private readonly core: Core,
    private readonly options: AmqpListenerOptions,
  ) {
    this.vhosts = served_vhosts(options.credentials ?? null);
    this.registry = new ConnectionRegistry(core, this.vhosts);
    this.limits = { ...AMQP_LIMITS_DEFAULT, ...options.limits };
    const listening = listening_server(options.tls ?? null, options.logger, (socket, client) =>
      this.accept(socket, client),
    );
    this.server = listening.server;
    this.stop_watching = listening.stop_watching;
    this.server.maxConnections = options.connections_max ?? 10_000;
    this.disk_alarm = new DiskAlarm(core, options.disk_free_min_bytes ?? 0, () => {
      for (const connection of this.registry.connections) connection.alarm_changed();
    });
  }

  /** `certificate`: the client certificate's subject (mTLS), which may log in with EXTERNAL. */
  private accept(socket: net.Socket, certificate: string | null): void {
    const refusal = this.options.connection_limits?.admit_address(socket) ?? null;
    if (refusal !== null) {
      this.options.logger.warn({ client: socket.remoteAddress, reason: refusal }, 'refused an AMQP connection');
      socket.destroy();
      return;
    }
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    new AmqpConnection(socket, {
      certificate,
      core: this.core,
      credentials: this.options.credentials ?? null,
      guest: this.options.guest ?? 'loopback',
      logger: this.options.logger,
      limits: this.limits,
      registry: this.registry,
      disk_alarm: this.disk_alarm,
      client_limits: this.options.connection_limits ?? null,
    });
  }

  /** A user removed while the broker runs loses its open connections within one sweep. */
  private close_removed_users(credentials: Credentials): void {
    for (const connection of this.registry.connections)
      if (connection.password_login && !credentials.has(connection.username)) connection.user_removed();
  }

  async listen(): Promise<{ host: string; port: number }> {
    await listen_on(this.server, this.options.port, this.options.host);
    const credentials = this.options.credentials ?? null;
    if (credentials) {
      this.sweep = setInterval(() => this.close_removed_users(credentials), USER_SWEEP_INTERVAL_MS);
      this.sweep.unref();
    }
    this.registry.expiry.start();
    this.disk_alarm.start();
    return this.address;
  }

  get address(): { host: string; port: number } {
    const address = this.server.address() as net.AddressInfo;
    return { host: this.options.host, port: address.port };
  }

  get connection_count(): number {
    return this.registry.connections.size;
  }

  /** The open connections, for the admin API and metrics. */
  connections(): AmqpConnectionInfo[] {
    return [...this.registry.connections].map((c) => c.info());
  }

  async close(): Promise<void> {
    this.stop_watching();
    if (this.sweep) clearInterval(this.sweep);
    this.registry.expiry.stop();
    this.disk_alarm.stop();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const connection of this.registry.connections) connection.shutdown();
    const deadline = setTimeout(() => this.sockets.forEach((s) => s.destroy()), SHUTDOWN_WAIT_MS);
    await closed;
    clearTimeout(deadline);
  }
}
