// SaslHandshake 0-1: the client names its mechanism (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512). After a
// v1 handshake the exchange travels in SaslAuthenticate requests; after v0 (Kafka before 1.0) as
// raw size-prefixed tokens, which the connection hands to sasl_step (sasl_exchange.ts).
import { SASL_HANDSHAKE } from '../../../protocol/kafka/messages/17_sasl_handshake.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import { SCRAM_MECHANISMS, ScramServer } from '../../../protocol/sasl/scram.ts';
import { kafka_handler } from '../handler.ts';
import { SASL_MECHANISMS } from '../sasl_session.ts';

export const sasl_handshake_handler = kafka_handler(
  SASL_HANDSHAKE,
  { min: 0, max: 1, notes: 'PLAIN, SCRAM-SHA-256, SCRAM-SHA-512; after v0 the tokens travel as bare frames' },
  (request, ctx) => {
    const session = ctx.sasl;
    const { mechanism } = request;
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
);
