// HTTP Basic logins as the listener checks them. A password check is a PBKDF2 derivation (tens of
// milliseconds for SCRAM's iterations), and a browser sends the login with every request — the
// console polls every second — so a login checked once is trusted for a few seconds (keyed by an
// HMAC of the header under a key made at start, never the password itself), as long as its user
// exists. And an address that fails too many logins in a row is told to wait, so passwords cannot
// be tried at the rate of the listener.
import crypto from 'node:crypto';
import type { Credentials } from '../../core/index.ts';

/** How long a checked login is trusted: a changed password's old value works this long at most. */
export const LOGIN_TRUSTED_MS = 10_000;
/** Logins trusted at once; past it the oldest go. */
export const LOGINS_TRUSTED_MAX = 1_000;
/** Failed logins an address may make within LOGIN_FAILURE_WINDOW_MS before it must wait. */
export const LOGIN_FAILURES_MAX = 10;
export const LOGIN_FAILURE_WINDOW_MS = 60_000;
/** Addresses whose failures are counted at once; past it the counts start again. */
const FAILING_ADDRESSES_MAX = 10_000;

export type LoginResult = { user: string } | { refused: 'invalid' } | { refused: 'wait'; retry_after_s: number };

export class BasicLogins {
  private readonly key = crypto.randomBytes(32);
  private readonly trusted = new Map<string, { user: string; until_ms: number }>();
  private readonly failures = new Map<string, { count: number; since_ms: number }>();

  constructor(
    private readonly credentials: Credentials,
    private readonly now_ms: () => number = () => performance.now(),
  ) {}

  /** The user an Authorization header logs in as, checked against the credentials (or trusted). */
  async check(header: string, address: string): Promise<LoginResult> {
    const now = this.now_ms();
    const failed = this.failures.get(address);
    if (failed && now - failed.since_ms < LOGIN_FAILURE_WINDOW_MS && failed.count >= LOGIN_FAILURES_MAX)
      return { refused: 'wait', retry_after_s: Math.ceil((failed.since_ms + LOGIN_FAILURE_WINDOW_MS - now) / 1000) };
    const digest = crypto.createHmac('sha256', this.key).update(header).digest('base64');
    const known = this.trusted.get(digest);
    if (known && known.until_ms > now && this.credentials.has(known.user)) return { user: known.user };
    this.trusted.delete(digest);
    const user = await this.verify(header);
    if (user === null) {
      // No login at all is a browser's first request, answered with the challenge: not a try.
      if (header !== '') this.count_failure(address, now);
      return { refused: 'invalid' };
    }
    this.failures.delete(address);
    if (this.trusted.size >= LOGINS_TRUSTED_MAX) this.trusted.delete(this.trusted.keys().next().value!);
    this.trusted.set(digest, { user, until_ms: now + LOGIN_TRUSTED_MS });
    return { user };
  }

  private async verify(header: string): Promise<string | null> {
    const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
    const decoded = match ? Buffer.from(match[1]!, 'base64').toString('utf8') : '';
    const colon = decoded.indexOf(':');
    const user = colon > 0 ? decoded.slice(0, colon) : '';
    if (!user) return null;
    return (await this.credentials.verify_password(user, decoded.slice(colon + 1))) ? user : null;
  }

  private count_failure(address: string, now: number): void {
    const failed = this.failures.get(address);
    if (failed && now - failed.since_ms < LOGIN_FAILURE_WINDOW_MS) failed.count++;
    else {
      if (this.failures.size >= FAILING_ADDRESSES_MAX) this.failures.clear();
      this.failures.set(address, { count: 1, since_ms: now });
    }
  }
}
