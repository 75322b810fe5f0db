// SCRAM (RFC 5802, RFC 7677) as Kafka uses it for SCRAM-SHA-256 and SCRAM-SHA-512: no channel
// binding ("n,,"), usernames escaped, nonces in printable ASCII. Both sides live here so the broker
// and the SDK share one implementation of the message formats and the key derivation.
import crypto from 'node:crypto';

export type ScramHash = 'sha256' | 'sha512';

export const SCRAM_MECHANISMS: Readonly<Record<string, ScramHash>> = {
  'SCRAM-SHA-256': 'sha256',
  'SCRAM-SHA-512': 'sha512',
};

/** Kafka's minimum for SCRAM credentials (and its default). */
export const SCRAM_ITERATIONS_MIN = 4096;
const KEY_BYTES: Record<ScramHash, number> = { sha256: 32, sha512: 64 };
const NONCE_BYTES = 24;
/** The GS2 header without channel binding, and its base64 form in client-final's "c=". */
const GS2_HEADER = 'n,,';

export interface ScramCredential {
  salt: Buffer;
  iterations: number;
  stored_key: Buffer;
  server_key: Buffer;
}

export class ScramError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ScramError';
  }
}

export function salted_password(password: string, salt: Buffer, iterations: number, hash: ScramHash): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    crypto.pbkdf2(password.normalize('NFKC'), salt, iterations, KEY_BYTES[hash], hash, (error, key) =>
      error ? reject(error) : resolve(key),
    ),
  );
}

const hmac = (hash: ScramHash, key: Buffer, text: string) => crypto.createHmac(hash, key).update(text).digest();
const digest = (hash: ScramHash, data: Buffer) => crypto.createHash(hash).update(data).digest();

function xor(a: Buffer, b: Buffer): Buffer {
  const out = Buffer.allocUnsafe(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! ^ b[i]!;
  return out;
}

/** Client and server keys from a salted password. */
function keys(hash: ScramHash, salted: Buffer): { client_key: Buffer; stored_key: Buffer; server_key: Buffer } {
  const client_key = hmac(hash, salted, 'Client Key');
  return { client_key, stored_key: digest(hash, client_key), server_key: hmac(hash, salted, 'Server Key') };
}

/** What the broker keeps for a user: never the password itself. */
export async function scram_credential(
  password: string,
  hash: ScramHash,
  iterations = SCRAM_ITERATIONS_MIN,
  salt = crypto.randomBytes(KEY_BYTES[hash]),
): Promise<ScramCredential> {
  const { stored_key, server_key } = keys(hash, await salted_password(password, salt, iterations, hash));
  return { salt, iterations, stored_key, server_key };
}

/**
 * The credential of a password a client salted itself (AlterUserScramCredentials), or null when
 * the salted password is not one of the hash's length.
 */
export function credential_of_salted(
  salted: Buffer,
  salt: Buffer,
  iterations: number,
  hash: ScramHash,
): ScramCredential | null {
  if (salted.length !== KEY_BYTES[hash]) return null;
  const { stored_key, server_key } = keys(hash, salted);
  return { salt, iterations, stored_key, server_key };
}

/** True when `password` derives `credential` (compared in constant time). */
export async function password_matches(
  credential: ScramCredential,
  password: string,
  hash: ScramHash,
): Promise<boolean> {
  const { stored_key } = keys(hash, await salted_password(password, credential.salt, credential.iterations, hash));
  return (
    stored_key.length === credential.stored_key.length && crypto.timingSafeEqual(stored_key, credential.stored_key)
  );
}

export function escape_username(name: string): string {
  return name.replace(/=/g, '=3D').replace(/,/g, '=2C');
}

export function unescape_username(name: string): string {
  if (/=(?!2C|3D)/.test(name)) throw new ScramError('malformed username escape');
  return name.replace(/=2C/g, ',').replace(/=3D/g, '=');
}

/** "a=1,b=2" into a map; a value may itself contain '='. */
export function parse_attributes(text: string): Map<string, string> {
  const attributes = new Map<string, string>();
  for (const part of text.split(',')) {
    const at = part.indexOf('=');
    if (at !== 1) throw new ScramError(`malformed attribute ${JSON.stringify(part.slice(0, 16))}`);
    attributes.set(part[0]!, part.slice(2));
  }
  return attributes;
}

function required(attributes: Map<string, string>, name: string): string {
  const value = attributes.get(name);
  if (value === undefined || value === '') throw new ScramError(`missing attribute ${name}`);
  return value;
}

function nonce(): string {
  return crypto.randomBytes(NONCE_BYTES).toString('base64');
}

/** The client side: first(), then final(server_first), then verify(server_final). */
export class ScramClient {
  private client_first_bare = '';
  private server_signature: Buffer | null = null;

  constructor(
    private readonly hash: ScramHash,
    private readonly username: string,
    private readonly password: string,
    /** Fixed only by tests that replay published exchanges. */
    private readonly client_nonce = nonce(),
  ) {}

  first(): Buffer {
    this.client_first_bare = `n=${escape_username(this.username)},r=${this.client_nonce}`;
    return Buffer.from(GS2_HEADER + this.client_first_bare);
  }

  async final(server_first: Buffer): Promise<Buffer> {
    const text = server_first.toString();
    const attributes = parse_attributes(text);
    if (attributes.has('e')) throw new ScramError(`server error: ${attributes.get('e')}`);
    const combined_nonce = required(attributes, 'r');
    if (!combined_nonce.startsWith(this.client_nonce) || combined_nonce.length === this.client_nonce.length)
      throw new ScramError('server nonce does not extend the client nonce');
    const salt = Buffer.from(required(attributes, 's'), 'base64');
    const iterations = Number(required(attributes, 'i'));
    if (!Number.isInteger(iterations) || iterations < SCRAM_ITERATIONS_MIN)
      throw new ScramError(`iteration count ${attributes.get('i')} below ${SCRAM_ITERATIONS_MIN}`);
    const without_proof = `c=${Buffer.from(GS2_HEADER).toString('base64')},r=${combined_nonce}`;
    const auth_message = `${this.client_first_bare},${text},${without_proof}`;
    const { client_key, stored_key, server_key } = keys(
      this.hash,
      await salted_password(this.password, salt, iterations, this.hash),
    );
    const proof = xor(client_key, hmac(this.hash, stored_key, auth_message));
    this.server_signature = hmac(this.hash, server_key, auth_message);
    return Buffer.from(`${without_proof},p=${proof.toString('base64')}`);
  }

  /** Throws unless the server proved that it knows the credential. */
  verify(server_final: Buffer): void {
    const attributes = parse_attributes(server_final.toString());
    if (attributes.has('e')) throw new ScramError(`server error: ${attributes.get('e')}`);
    const signature = Buffer.from(required(attributes, 'v'), 'base64');
    if (
      !this.server_signature ||
      signature.length !== this.server_signature.length ||
      !crypto.timingSafeEqual(signature, this.server_signature)
    ) {
      throw new ScramError('server signature does not match');
    }
  }
}

/**
 * The server side of one exchange: step(client_first) answers server-first, step(client_final)
 * answers server-final and sets `username`. Any failure throws ScramError; an unknown user fails
 * at the proof, like a wrong password, so the exchange does not reveal which users exist.
 */
export class ScramServer {
  private stage: 'first' | 'final' | 'done' = 'first';
  private credential: ScramCredential | null = null;
  private client_first_bare = '';
  private server_first = '';
  private combined_nonce = '';
  private client_nonce = '';
  private claimed_user = '';
  username: string | null = null;

  constructor(
    private readonly hash: ScramHash,
    private readonly lookup: (username: string) => ScramCredential | null,
  ) {}

  get done(): boolean {
    return this.stage === 'done';
  }

  step(message: Buffer): Buffer {
    const text = message.toString();
    const stage = this.stage;
    if (stage === 'done') throw new ScramError('exchange already complete');
    try {
      return stage === 'first' ? this.first(text) : this.final(text);
    } catch (error) {
      this.stage = 'done'; // one failure ends the exchange
      throw error;
    }
  }

  private first(text: string): Buffer {
    if (!text.startsWith(GS2_HEADER))
      throw new ScramError('channel binding and authorization identities are not supported');
    this.client_first_bare = text.slice(GS2_HEADER.length);
    const attributes = parse_attributes(this.client_first_bare);
    if (attributes.has('m')) throw new ScramError('mandatory extensions are not supported');
    this.claimed_user = unescape_username(required(attributes, 'n'));
    const client_nonce = required(attributes, 'r');
    this.client_nonce = client_nonce;
    this.credential = this.lookup(this.claimed_user);
    // An unknown user still gets a well-formed challenge (a salt that is stable per name).
    const salt =
      this.credential?.salt ?? crypto.createHash(this.hash).update(`sluice-unknown-user:${this.claimed_user}`).digest();
    const iterations = this.credential?.iterations ?? SCRAM_ITERATIONS_MIN;
    this.combined_nonce = client_nonce + nonce();
    this.server_first = `r=${this.combined_nonce},s=${salt.toString('base64')},i=${iterations}`;
    this.stage = 'final';
    return Buffer.from(this.server_first);
  }

  private final(text: string): Buffer {
    const at = text.lastIndexOf(',p=');
    if (at < 0) throw new ScramError('client-final without a proof');
    const without_proof = text.slice(0, at);
    const attributes = parse_attributes(text);
    if (required(attributes, 'c') !== Buffer.from(GS2_HEADER).toString('base64'))
      throw new ScramError('channel binding mismatch');
    // librdkafka (through 2.x) sends its own nonce again in front of the combined one; Kafka
    // accepts any nonce ending with the combined one. Accepted here: exactly those two forms.
    const final_nonce = required(attributes, 'r');
    if (final_nonce !== this.combined_nonce && final_nonce !== this.client_nonce + this.combined_nonce)
      throw new ScramError('nonce mismatch');
    const proof = Buffer.from(required(attributes, 'p'), 'base64');
    this.stage = 'done';
    const credential = this.credential;
    if (!credential || proof.length !== credential.stored_key.length) throw new ScramError('authentication failed');
    const auth_message = `${this.client_first_bare},${this.server_first},${without_proof}`;
    const client_key = xor(proof, hmac(this.hash, credential.stored_key, auth_message));
    if (!crypto.timingSafeEqual(digest(this.hash, client_key), credential.stored_key))
      throw new ScramError('authentication failed');
    this.username = this.claimed_user;
    return Buffer.from(`v=${hmac(this.hash, credential.server_key, auth_message).toString('base64')}`);
  }
}
