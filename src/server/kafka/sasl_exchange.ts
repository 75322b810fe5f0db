// One step of a SASL exchange (PLAIN, SCRAM-SHA-256/512) against the listener's credentials,
// whether it came in a SaslAuthenticate request (17_sasl_handshake.ts, 36_sasl_authenticate.ts)
// or, after a v0 handshake (Kafka before 1.0), as a raw size-prefixed token the connection hands
// over. A failure is logged with who tried, and the connection closes after the answer.
import { ErrorCode } from '../../protocol/kafka/error_codes.ts';
import { parse_plain } from '../../protocol/sasl/plain.ts';
import { ScramError } from '../../protocol/sasl/scram.ts';
import type { Logger } from '../../core/index.ts';
import type { SaslSession } from './sasl_session.ts';

const EMPTY = Buffer.alloc(0);

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
  peer.logger.warn(
    { client: peer.client_host, mechanism: peer.sasl.mechanism, user, reason: error_message },
    'SASL authentication failed',
  );
  return { error_code, error_message, auth_bytes: EMPTY };
}

function succeeded(peer: Peer, user: string, auth_bytes: Buffer): SaslAnswer {
  const refusal = peer.sasl.admit_user(user);
  if (refusal !== null)
    return failed(peer, ErrorCode.SASL_AUTHENTICATION_FAILED, `Connection refused: ${refusal}`, user);
  peer.sasl.state = 'authenticated';
  peer.sasl.principal = user;
  return { error_code: ErrorCode.NONE, error_message: null, auth_bytes };
}

/** One step of the exchange, whether it came in a SaslAuthenticate request or as a raw token. */
export async function sasl_step(peer: Peer, bytes: Buffer): Promise<SaslAnswer> {
  const session = peer.sasl;
  if (session.state !== 'authenticate')
    return failed(
      peer,
      ErrorCode.ILLEGAL_SASL_STATE,
      `SaslAuthenticate in state ${session.state}; send SaslHandshake first`,
    );
  if (session.mechanism === 'PLAIN') {
    const credentials = parse_plain(bytes);
    if (typeof credentials === 'string')
      return failed(peer, ErrorCode.SASL_AUTHENTICATION_FAILED, `Authentication failed: ${credentials}`);
    if (!(await session.credentials!.verify_password(credentials.username, credentials.password))) {
      return failed(
        peer,
        ErrorCode.SASL_AUTHENTICATION_FAILED,
        'Authentication failed: invalid credentials with SASL mechanism PLAIN',
        credentials.username,
      );
    }
    return succeeded(peer, credentials.username, EMPTY);
  }
  const scram = session.scram!;
  try {
    const answer = scram.step(bytes);
    return scram.done
      ? succeeded(peer, scram.username!, answer)
      : { error_code: ErrorCode.NONE, error_message: null, auth_bytes: answer };
  } catch (error) {
    if (!(error instanceof ScramError)) throw error;
    const reason =
      error.message === 'authentication failed'
        ? `invalid credentials with SASL mechanism ${session.mechanism}`
        : error.message;
    return failed(peer, ErrorCode.SASL_AUTHENTICATION_FAILED, `Authentication failed: ${reason}`);
  }
}
