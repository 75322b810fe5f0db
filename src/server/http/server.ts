// The HTTP listener: the JSON admin API under /api/v1 (docs/admin-api.md), Prometheus metrics at
// /metrics, /healthz and /readyz, and everything else (GET) handed to the web console. Node's
// http module, no framework. Bounded: request bodies (BODY_BYTES_MAX), open connections, listing
// pages (request_params.ts), message pages (messages.ts).
import { add_amqp_routes, type AmqpSource } from './api_amqp.ts';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import {
  stop_on_invariant_failure,
  type Core,
  type Credentials,
  type Logger,
  type Requester,
} from '../../core/index.ts';
import { audit, authorize_route, http_requester, OPEN_PATHS } from './http_auth.ts';
import { HttpError, error_body, http_error_of } from './http_errors.ts';
import { type ApiContext, Router } from './router.ts';
import { BrokerMetrics } from './metrics.ts';
import { readiness } from './health.ts';
import { request_url } from './request_params.ts';
import { add_cluster_routes } from './api_cluster.ts';
import { add_security_routes } from './api_security.ts';
import { BasicLogins } from './basic_logins.ts';
import { add_topic_routes } from './api_topics.ts';
import { add_group_routes } from './api_groups.ts';
import { add_queue_routes } from './api_queues.ts';
import { add_dead_letter_routes } from './api_dead_letters.ts';
import { listen_on } from '../listen.ts';
import { reload_on_change, TLS_HANDSHAKE_TIMEOUT_MS, tls_server_options, type TlsFiles } from '../tls_files.ts';

/** Largest request body accepted (the API's bodies are small JSON objects). */
export const BODY_BYTES_MAX = 1024 * 1024;
/** Connections held open at once; more wait in the kernel's backlog. */
export const HTTP_CONNECTIONS_MAX = 256;
/** A request must arrive whole within this long. */
const REQUEST_TIMEOUT_MS = 30_000;
const API_PREFIX = '/api/';

/** Serves a GET outside /api, /metrics and the health checks (the web console plugs in here). */
export type ConsoleHandler = (request: IncomingMessage, response: ServerResponse) => Promise<void> | void;

export interface HttpListenerOptions {
  host: string;
  port: number;
  core: Core;
  /** The Kafka listener's address and connection count, for the cluster view and metrics. */
  /** The first Kafka listener's address and name, and the Kafka connections open on all of them. */
  kafka: { readonly address: { host: string; port: number }; readonly name: string; readonly connection_count: number };
  /** The AMQP listener's connections, when it runs. */
  amqp?: AmqpSource | null;
  logger: Logger;
  console_handler?: ConsoleHandler | null;
  /** When set, the listener takes HTTPS only with this certificate and key (reloaded when the files change). */
  tls?: TlsFiles | null;
  /** When set, every request but the health checks logs in with HTTP Basic as one of these users. */
  credentials?: Credentials | null;
}

/** Every route of the admin API. */
export function api_router(amqp: AmqpSource | null): Router {
  const router = new Router();
  add_cluster_routes(router);
  add_topic_routes(router);
  add_group_routes(router);
  add_queue_routes(router);
  add_dead_letter_routes(router);
  add_amqp_routes(router, amqp);
  add_security_routes(router);
  return router;
}

export class HttpListener {
  private readonly server: http.Server;
  private readonly router: Router;
  private readonly metrics: BrokerMetrics;
  private readonly ctx: ApiContext;
  /** HTTP Basic logins, checked against the listener's users (none: no login asked). */
  private readonly logins: BasicLogins | null;
  private shutting_down = false;
  private stop_watching = () => {};

  constructor(private readonly options: HttpListenerOptions) {
    this.logins = options.credentials ? new BasicLogins(options.credentials) : null;
    const { core, kafka } = options;
    this.ctx = {
      core,
      kafka_address: () => kafka.address,
      kafka_listener_name: () => kafka.name,
      connections: () => kafka.connection_count,
    };
    const amqp = options.amqp ?? null;
    this.metrics = new BrokerMetrics({ core, connections: () => kafka.connection_count, amqp });
    this.router = api_router(amqp);
    const serve = (request: IncomingMessage, response: ServerResponse) => void this.serve(request, response);
    const tls = options.tls ?? null;
    if (tls) {
      // Client certificates are the Kafka and AMQP listeners' business; the admin API's login is its own.
      const files = { cert_file: tls.cert_file, key_file: tls.key_file };
      const server = https.createServer(
        {
          ...tls_server_options(files),
          handshakeTimeout: TLS_HANDSHAKE_TIMEOUT_MS,
          requestTimeout: REQUEST_TIMEOUT_MS,
        },
        serve,
      );
      this.stop_watching = reload_on_change(server, files, options.logger);
      this.server = server;
    } else {
      this.server = http.createServer({ requestTimeout: REQUEST_TIMEOUT_MS }, serve);
    }
    this.server.maxConnections = HTTP_CONNECTIONS_MAX;
  }

  async listen(): Promise<{ host: string; port: number }> {
    await listen_on(this.server, this.options.port, this.options.host);
    this.metrics.attach();
    return this.address;
  }

  get address(): { host: string; port: number } {
    const address = this.server.address() as net.AddressInfo;
    return { host: this.options.host, port: address.port };
  }

  /** From now on /readyz answers 503 and the API refuses work; metrics and health still answer. */
  begin_shutdown(): void {
    this.shutting_down = true;
  }

  async close(): Promise<void> {
    this.shutting_down = true;
    this.stop_watching();
    this.metrics.detach();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private async serve(request: IncomingMessage, response: ServerResponse): Promise<void> {
    try {
      const url = request_url(request.url ?? '/');
      const method = request.method ?? 'GET';
      const path = url.pathname;
      const who = OPEN_PATHS.has(path) ? null : await http_requester(request, this.logins);
      if (path === '/metrics') return await this.only_get(method, () => this.send_metrics(response));
      if (path === '/healthz') return await this.only_get(method, () => send_json(response, 200, { status: 'ok' }));
      if (path === '/readyz') return await this.only_get(method, () => this.send_readiness(response));
      if (path.startsWith(API_PREFIX) || path === '/api')
        return await this.serve_api(request, response, who!, path, url.searchParams);
      if ((method === 'GET' || method === 'HEAD') && this.options.console_handler)
        return await this.options.console_handler(request, response);
      throw new HttpError(404, 'not_found', `nothing at ${path}`);
    } catch (error) {
      if (stop_on_invariant_failure(error, this.options.logger)) return void response.destroy();
      const failure = http_error_of(error);
      if (failure.status >= 500 && !(error instanceof HttpError))
        this.options.logger.error(
          { error: String(error), stack: error instanceof Error ? error.stack : undefined, url: request.url },
          'admin API request failed',
        );
      if (response.headersSent) {
        response.destroy();
        return;
      }
      // A body left unread would be taken as the next request on a kept-alive connection.
      if (!request.complete) response.setHeader('connection', 'close');
      for (const [name, value] of Object.entries(failure.headers)) response.setHeader(name, value);
      send_json(response, failure.status, error_body(failure));
    }
  }

  private async only_get(method: string, send: () => void | Promise<void>): Promise<void> {
    if (method !== 'GET' && method !== 'HEAD')
      throw new HttpError(405, 'method_not_allowed', `${method} is not allowed here; use GET`, null, {
        allow: 'GET, HEAD',
      });
    await send();
  }

  private async send_metrics(response: ServerResponse): Promise<void> {
    const text = await this.metrics.text();
    response.writeHead(200, { 'content-type': this.metrics.content_type, 'cache-control': 'no-store' });
    response.end(text);
  }

  private send_readiness(response: ServerResponse): void {
    const state = readiness(this.options.core, this.shutting_down);
    send_json(
      response,
      state.ready ? 200 : 503,
      state.ready ? { status: 'ready' } : { status: 'not_ready', reasons: state.reasons },
    );
  }

  private async serve_api(
    request: IncomingMessage,
    response: ServerResponse,
    who: Requester,
    path: string,
    query: URLSearchParams,
  ): Promise<void> {
    const method = request.method ?? 'GET';
    // Answered, failed or refused, a change is audited with the status it ended with.
    response.once('finish', () => audit(this.options.logger, who, method, path, response.statusCode));
    const found = this.router.find(method === 'HEAD' ? 'GET' : method, path);
    if (!found) throw new HttpError(404, 'not_found', `no API at ${method} ${path}`);
    if ('allowed' in found)
      throw new HttpError(
        405,
        'method_not_allowed',
        `${method} is not allowed on ${path}; use ${found.allowed.join(' or ')}`,
        null,
        { allow: found.allowed.join(', ') },
      );
    authorize_route(this.options.core, who, found.route, found.params);
    if (this.shutting_down) throw new HttpError(503, 'shutting_down', 'the broker is shutting down');
    const reply = await found.handler({ params: found.params, query, body: () => read_json_body(request) }, this.ctx);
    if (reply.status === 204 || reply.body === undefined) {
      response.writeHead(reply.status, { 'cache-control': 'no-store' });
      response.end();
      return;
    }
    send_json(response, reply.status, reply.body);
  }
}

function send_json(response: ServerResponse, status: number, body: unknown): void {
  const bytes = Buffer.from(JSON.stringify(body));
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': bytes.length,
    'cache-control': 'no-store',
  });
  response.end(response.req.method === 'HEAD' ? undefined : bytes);
}

/** The JSON body, at most BODY_BYTES_MAX bytes; undefined when there is none. */
async function read_json_body(request: IncomingMessage): Promise<unknown> {
  const declared = Number(request.headers['content-length'] ?? 0);
  if (declared > BODY_BYTES_MAX)
    throw new HttpError(413, 'body_too_large', `the body may be at most ${BODY_BYTES_MAX} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > BODY_BYTES_MAX)
      throw new HttpError(413, 'body_too_large', `the body may be at most ${BODY_BYTES_MAX} bytes`);
    chunks.push(chunk);
  }
  if (size === 0) return undefined;
  const type = String(request.headers['content-type'] ?? '');
  if (!/^application\/json\b/i.test(type))
    throw new HttpError(
      415,
      'unsupported_media_type',
      `send the body as JSON (content-type: application/json), not ${JSON.stringify(type || 'none')}`,
    );
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch (error) {
    throw new HttpError(
      400,
      'invalid_body',
      `the body is not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
