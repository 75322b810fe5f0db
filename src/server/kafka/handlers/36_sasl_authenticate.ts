// SaslAuthenticate 0-2: one step of the exchange the handshake began. Re-authentication (KIP-368)
// is not offered: session_lifetime_ms is 0.
import { SASL_AUTHENTICATE } from '../../../protocol/kafka/messages/36_sasl_authenticate.ts';
import { kafka_handler } from '../handler.ts';
import { sasl_step } from '../sasl_exchange.ts';

export const sasl_authenticate_handler = kafka_handler(
  SASL_AUTHENTICATE,
  { min: 0, max: 2, notes: 'no re-authentication (session lifetime 0)' },
  async (request, ctx) => {
    const answer = await sasl_step(
      { sasl: ctx.sasl, client_host: ctx.client_host, logger: ctx.core.logger },
      request.auth_bytes,
    );
    return { ...answer, session_lifetime_ms: 0 };
  },
);
