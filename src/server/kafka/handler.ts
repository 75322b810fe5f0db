// What a Kafka API handler is: the API it serves, the versions it supports (the only source of the
// ranges ApiVersions advertises), and a function from a decoded request to a response body.
import type { ApiSpec } from '../../protocol/kafka/schema.ts';
import type { Value } from '../../protocol/kafka/codec.ts';
import type { RequestHeader } from '../../protocol/kafka/header.ts';
import type { Broker } from '../../broker/broker.ts';
import type { SaslSession } from './sasl_session.ts';
import type { ShareSessions } from './share_sessions.ts';

export interface ListenerInfo {
  /** Host and port that Metadata and FindCoordinator tell clients to connect to. */
  advertised_host: string;
  advertised_port: number;
}

export interface RequestContext {
  broker: Broker;
  listener: ListenerInfo;
  header: RequestHeader;
  version: number;
  client_host: string;
  /** The connection's authentication state (shared by its requests). */
  sasl: SaslSession;
  /** The listener's share sessions (KIP-932), shared by every connection. */
  share_sessions: ShareSessions;
  /** Set when the server starts shutting down; long polls listen to answer early. */
  closing: ShutdownSignal;
}

export interface KafkaHandler {
  api: ApiSpec;
  min_version: number;
  max_version: number;
  /** The response body, or null for a request that gets no response (Produce with acks=0). */
  handle(request: Value, ctx: RequestContext): Promise<Value | null> | Value | null;
}

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
