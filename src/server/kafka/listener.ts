// The Kafka listener: accepts connections and hands each to a KafkaConnection. close() stops
// accepting, lets every connection answer what it has in flight, and then closes them. With the
// broker's certificate and key it takes TLS (1.2+) only.
import net from 'node:net';
import tls from 'node:tls';
import type { Core, Credentials, Logger } from '../../core/index.ts';
import { CONNECTION_LIMITS_DEFAULT, type ConnectionLimits, KafkaConnection } from './connection.ts';
import { FrameReader } from '../../protocol/kafka/frame_reader.ts';
import { data_socket, reading_socket } from './reading_socket.ts';
import { type KafkaHandler, type ListenerInfo, ShutdownSignal } from './handler.ts';
import { handler_table } from './handlers/index.ts';
import { instrument_handlers } from './instrument.ts';
import { SaslSession } from './sasl_session.ts';
import { ShareSessions } from './share_sessions.ts';
import { FetchSessions } from './fetch_sessions.ts';
import { listen_on } from '../listen.ts';
import { listening_server, type TlsFiles } from '../tls_files.ts';
import type { ClientConnectionLimits } from '../client_connection_limits.ts';

/** How often connections are checked for users removed meanwhile (the bound on how long one lingers). */
export const USER_SWEEP_INTERVAL_MS = 1_000;

export interface KafkaListenerOptions {
  /** Its name, shared by the same listener of every broker of a cluster (default PLAINTEXT). */
  name?: string;
  host: string;
  port: number;
  advertised_host?: string;
  advertised_port?: number;
  limits?: Partial<ConnectionLimits>;
  /** Connections accepted at once; more are refused until some close. */
  connections_max?: number;
  /** When set, every connection must authenticate with SASL (PLAIN or SCRAM) against these users. */
  credentials?: Credentials | null;
  /** When set, connections are TLS with this certificate and key (reloaded when the files change). */
  tls?: TlsFiles | null;
  /** Connections per address and per user, shared with the broker's other listeners. */
  connection_limits?: ClientConnectionLimits | null;
  logger: Logger;
}

export class KafkaListener {
  private readonly server: net.Server;
  private readonly connections = new Set<KafkaConnection>();
  private readonly handlers: ReadonlyMap<number, KafkaHandler> = instrument_handlers(handler_table());
  private readonly info: ListenerInfo;
  private readonly closing = new ShutdownSignal();
  private readonly share_sessions = new ShareSessions();
  private readonly fetch_sessions = new FetchSessions();
  private readonly stop_watching: () => void;
  private sweep: NodeJS.Timeout | null = null;

  constructor(
    private readonly core: Core,
    private readonly options: KafkaListenerOptions,
  ) {
    this.info = { name: options.name ?? 'PLAINTEXT', advertised_host: '127.0.0.1', advertised_port: 0 };
    // Plain TCP is paused on connect so nothing is read before reading_socket hands the reads to a FrameReader.
    const accept = (socket: net.Socket, client: string | null) => this.accept(socket, client);
    const listening = listening_server(options.tls ?? null, options.logger, accept, { pauseOnConnect: true });
    this.server = listening.server;
    this.stop_watching = listening.stop_watching;
    this.server.maxConnections = options.connections_max ?? 10_000;
    const credentials = options.credentials ?? null;
    if (credentials) {
      this.sweep = setInterval(() => this.close_removed_users(credentials), USER_SWEEP_INTERVAL_MS);
      this.sweep.unref();
    }
  }

  /** A user removed while the broker runs loses its open connections within one sweep. */
  private close_removed_users(credentials: Credentials): void {
    for (const connection of this.connections) {
      const user = connection.sasl_user;
      if (user !== null && !credentials.has(user)) connection.close(`user ${user} was removed`);
    }
  }

  private accept(accepted: net.Socket, client: string | null): void {
    const reader = new FrameReader();
    // A TLS socket's reads come decrypted through its 'data' events.
    const socket =
      accepted instanceof tls.TLSSocket ? data_socket(accepted, reader) : reading_socket(accepted, this.server, reader);
    // Counted on the socket in use: the accepted one may have been let go for it (reading_socket).
    const limits = this.options.connection_limits ?? null;
    const refusal = limits && (limits.admit_address(socket) ?? (client ? limits.admit_user(socket, client) : null));
    if (refusal) {
      this.options.logger.warn({ client: socket.remoteAddress, reason: refusal }, 'refused a Kafka connection');
      socket.destroy();
      return;
    }
    const sasl = new SaslSession(this.options.credentials ?? null, client);
    if (limits) sasl.admit_user = (user) => limits.admit_user(socket, user);
    const connection = new KafkaConnection(
      socket,
      reader,
      this.handlers,
      {
        core: this.core,
        listener: this.info,
        closing: this.closing,
        sasl,
        share_sessions: this.share_sessions,
        fetch_sessions: this.fetch_sessions,
      },
      { ...CONNECTION_LIMITS_DEFAULT, ...this.options.limits },
      this.options.logger,
    );
    this.connections.add(connection);
    socket.on('close', () => this.connections.delete(connection));
  }

  async listen(): Promise<{ host: string; port: number }> {
    await listen_on(this.server, this.options.port, this.options.host);
    const address = this.server.address() as net.AddressInfo;
    this.info.advertised_host = this.options.advertised_host ?? this.options.host;
    this.info.advertised_port = this.options.advertised_port ?? address.port;
    return { host: this.options.host, port: address.port };
  }

  /** Where the listener actually accepts connections (may differ from the advertised address). */
  get bound_address(): { host: string; port: number } {
    const address = this.server.address() as net.AddressInfo;
    return { host: address.address, port: address.port };
  }

  get name(): string {
    return this.info.name;
  }

  /** Client connections open now. */
  get connection_count(): number {
    return this.connections.size;
  }

  get address(): { host: string; port: number } {
    return { host: this.info.advertised_host, port: this.info.advertised_port };
  }

  async close(): Promise<void> {
    this.stop_watching();
    if (this.sweep) clearInterval(this.sweep);
    this.closing.raise();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    await Promise.all([...this.connections].map((connection) => connection.shutdown()));
    await closed;
  }
}
