// A connection's SASL state. On a listener with SASL enabled a connection may send only
// ApiVersions, SaslHandshake and SaslAuthenticate until it has authenticated; a failed exchange is
// answered and then the connection is closed, as Kafka does.
import type { Credentials } from '../../core/index.ts';
import { SCRAM_MECHANISMS, type ScramServer } from '../../protocol/sasl/scram.ts';

export const SASL_MECHANISMS: readonly string[] = ['PLAIN', ...Object.keys(SCRAM_MECHANISMS)];

/** API keys a connection may use before it has authenticated. */
const BEFORE_AUTHENTICATION = new Set([17, 18, 36]);

export type SaslState = 'handshake' | 'authenticate' | 'authenticated' | 'failed';

export class SaslSession {
  state: SaslState = 'handshake';
  mechanism: string | null = null;
  scram: ScramServer | null = null;
  /** After a v0 handshake the exchange's tokens arrive as bare frames, not as requests. */
  raw_tokens = false;
  /** The authenticated user: the SASL login, else the client certificate's subject. */
  principal: string | null;
  /** Set by a handler whose response must be the connection's last. */
  close_after_response = false;
  /** Counts the connection against a user who logs in: why not, when the user is at its limit. */
  admit_user: (user: string) => string | null = () => null;

  /** `credentials` null: this listener does not use SASL. `certificate`: the client's subject (mTLS). */
  constructor(
    readonly credentials: Credentials | null,
    certificate: string | null = null,
  ) {
    this.principal = certificate;
  }

  get enabled(): boolean {
    return this.credentials !== null;
  }

  /** True while the next frame is a bare token of a v0 exchange. */
  get expects_raw_token(): boolean {
    return this.raw_tokens && this.state === 'authenticate';
  }

  allows(api_key: number): boolean {
    return this.credentials === null || this.state === 'authenticated' || BEFORE_AUTHENTICATION.has(api_key);
  }
}
