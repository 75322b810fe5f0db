// SaslHandshake 0-1 and SaslAuthenticate 0-2: PLAIN and SCRAM-SHA-256/512 against the broker's
// credential store. After a v1 handshake the exchange travels in SaslAuthenticate requests; after
// a v0 handshake (Kafka before 1.0) as raw size-prefixed tokens, which the connection hands to
// sasl_step. Re-authentication (KIP-368) is not offered: session_lifetime_ms is 0.
import { SASL_HANDSHAKE } from '../../../protocol/kafka/messages/17_sasl_handshake.ts';
import { SASL_AUTHENTICATE } from '../../../protocol/kafka/messages/36_sasl_authenticate.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import { parse_plain } from '../../../protocol/sasl/plain.ts';
import { SCRAM_MECHANISMS, ScramError, ScramServer } from '../../../protocol/sasl/scram.ts';
import type { Logger } from '../../../storage/index.ts';
import type { KafkaHandler } from '../handler.ts';
import { SASL_MECHANISMS, type SaslSession } from '../sasl_session.ts';
import { versions } from './util.ts';

const EMPTY = Buffer.alloc(0);

export const sasl_handshake_handler: KafkaHandler = {
  api: SASL_HANDSHAKE,
  ...versions(SASL_HANDSHAKE, 0, 1),
  handle(request, ctx) {
    const session = ctx.sasl;
    const mechanism = request.mechanism as string;
    if (!session.enabled || session.state !== 'handshake') {
      session.close_after_response = session.enabled;
      return { error_code: ErrorCode.ILLEGAL_SASL_STATE, mechanisms: session.enabled ? SASL_MECHANISMS : [] };
    }
    if (!SASL_MECHANISMS.includes(mechanism)) {
      session.close_after_response = true;
      return { error_code: ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms: SASL_MECHANISMS };
    }
    session.mechanism = mechanism;
    session.state = 'authenticate';
    session.raw_tokens = ctx.version === 0;
    const hash = SCRAM_MECHANISMS[mechanism];
    if (hash) session.scram = new ScramServer(hash, (user) => session.credentials!.scram(user, hash));
    return { error_code: ErrorCode.NONE, mechanisms: SASL_MECHANISMS };
  },
};

/** Who is logging in, for the log lines of an exchange. */
interface Peer {
  sasl: SaslSession;
  client_host: string;
  logger: Logger;
}

export interface SaslAnswer {
  error_code: number;
  error_message: string | null;
  auth_bytes: Buffer;
}

function failed(peer: Peer, error_code: number, error_message: string, user?: string): SaslAnswer {
  peer.sasl.state = 'failed';
  peer.sasl.close_after_response = true;
  peer.logger.warn({ client: peer.client_host, mechanism: peer.sasl.mechanism, user, reason: error_message }, 'SASL authentication failed');
  return { error_code, error_message, auth_bytes: EMPTY };
}

function succeeded(peer: Peer, user: string, auth_bytes: Buffer): SaslAnswer {
  peer.sasl.state = 'authenticated';
  peer.sasl.principal = user;
  return { error_code: ErrorCode.NONE, error_message: null, auth_bytes };
}

/** One step of the exchange, whether it came in a SaslAuthenticate request or as a raw token. */
export async function sasl_step(peer: Peer, bytes: Buffer): Promise<SaslAnswer> {
  const session = peer.sasl;
  if (session.state !== 'authenticate') return failed(peer, ErrorCode.ILLEGAL_SASL_STATE, `SaslAuthenticate in state ${session.state}; send SaslHandshake first`);
  if (session.mechanism === 'PLAIN') {
    const credentials = parse_plain(bytes);
    if (typeof credentials === 'string') return failed(peer, ErrorCode.SASL_AUTHENTICATION_FAILED, `Authentication failed: ${credentials}`);
    if (!(await session.credentials!.verify_password(credentials.username, credentials.password))) {
      return failed(peer, ErrorCode.SASL_AUTHENTICATION_FAILED, 'Authentication failed: invalid credentials with SASL mechanism PLAIN', credentials.username);
    }
    return succeeded(peer, credentials.username, EMPTY);
  }
  const scram = session.scram!;
  try {
    const answer = scram.step(bytes);
    return scram.done ? succeeded(peer, scram.username!, answer) : { error_code: ErrorCode.NONE, error_message: null, auth_bytes: answer };
  } catch (error) {
    if (!(error instanceof ScramError)) throw error;
    const reason = error.message === 'authentication failed' ? `invalid credentials with SASL mechanism ${session.mechanism}` : error.message;
    return failed(peer, ErrorCode.SASL_AUTHENTICATION_FAILED, `Authentication failed: ${reason}`);
  }
}

export const sasl_authenticate_handler: KafkaHandler = {
  api: SASL_AUTHENTICATE,
  ...versions(SASL_AUTHENTICATE, 0, 2),
  async handle(request, ctx) {
    const answer = await sasl_step({ sasl: ctx.sasl, client_host: ctx.client_host, logger: ctx.broker.logger }, (request.auth_bytes as Buffer | null) ?? EMPTY);
    return { ...answer, session_lifetime_ms: 0 };
  },
};
