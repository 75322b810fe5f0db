// What a Kafka API handler is: the API it serves, the versions it supports (the only source of the
// ranges ApiVersions advertises and of docs/kafka-compatibility.md's table), and a function from a
// decoded request to a response body, both typed by the API's declaration.
import type { ApiSpec, RequestOf, ResponseIn } from '../../protocol/kafka/schema.ts';
import { version_bounds } from '../../protocol/kafka/schema.ts';
import type { RequestHeader } from '../../protocol/kafka/header.ts';
import type { Core } from '../../core/index.ts';
import type { SaslSession } from './sasl_session.ts';
import type { ShareSessions } from './share_sessions.ts';
import type { FetchSessions } from './fetch_sessions.ts';

export interface ListenerInfo {
  /** The listener's name (its security protocol): clients are told other brokers' addresses on it. */
  name: string;
  /** Host and port that Metadata and FindCoordinator tell clients to connect to. */
  advertised_host: string;
  advertised_port: number;
}

export interface RequestContext {
  core: Core;
  listener: ListenerInfo;
  header: RequestHeader;
  version: number;
  client_host: string;
  /** The connection's authentication state (shared by its requests). */
  sasl: SaslSession;
  /** The listener's share sessions (KIP-932), shared by every connection. */
  share_sessions: ShareSessions;
  /** The listener's fetch sessions (KIP-227), shared by every connection. */
  fetch_sessions: FetchSessions;
  /** Set when the server starts shutting down; long polls listen to answer early. */
  closing: ShutdownSignal;
}

export interface KafkaHandler<A extends ApiSpec = ApiSpec> {
  api: A;
  min_version: number;
  max_version: number;
  /** What clients should know of how it is served (docs/kafka-compatibility.md lists these). */
  notes: string;
  /** The response body, or null for a request that gets no response (Produce with acks=0). */
  handle(request: RequestOf<A>, ctx: RequestContext): Promise<ResponseIn<A> | null> | ResponseIn<A> | null;
}

/** The versions a handler serves (within what its declaration knows) and what to say of them. */
export interface Served {
  min: number;
  max: number;
  notes: string;
}

/**
 * A handler serving versions `served.min`..`served.max` of `api`. Stored in the handler table as a
 * KafkaHandler of any API; the connection decodes each request with the handler's own API, so the
 * request it is handed is exactly RequestOf<A>.
 */
export function kafka_handler<A extends ApiSpec>(
  api: A,
  served: Served,
  handle: (request: RequestOf<A>, ctx: RequestContext) => Promise<ResponseIn<A> | null> | ResponseIn<A> | null,
): KafkaHandler {
  const request = version_bounds(api.request);
  const response = version_bounds(api.response);
  const min_version = Math.max(served.min, request.min, response.min);
  const max_version = Math.min(served.max, request.max, response.max);
  return { api, min_version, max_version, notes: served.notes, handle } as KafkaHandler;
}

/** Kafka's "not asked for": authorized operations are computed only when a request asks for them. */
export const NO_AUTHORIZED_OPERATIONS = -2147483648;

/** Thrown by a handler to end the connection instead of answering (Kafka's behaviour for some errors). */
export class CloseConnection extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'CloseConnection';
  }
}

/**
 * Shutdown as a flag plus removable listeners. (A promise would keep every long poll's callback
 * alive until shutdown: one leaked closure per fetch.)
 */
export class ShutdownSignal {
  private readonly listeners = new Set<() => void>();
  raised = false;

  /** Calls `listener` once on shutdown; returns a function that removes it. */
  on_raise(listener: () => void): () => void {
    if (this.raised) {
      listener();
      return () => undefined;
    }
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  raise(): void {
    if (this.raised) return;
    this.raised = true;
    for (const listener of this.listeners) listener();
    this.listeners.clear();
  }
}
