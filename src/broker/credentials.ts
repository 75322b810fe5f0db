// The users a broker accepts, kept as SCRAM credentials (salted, iterated keys) for both hashes:
// SCRAM exchanges use them directly, and a PLAIN password is checked by deriving the same key.
// Passwords are read once at start and not kept. Protocol-neutral: any front end can use it.
import fs from 'node:fs';
import { password_matches, scram_credential, type ScramCredential, type ScramHash } from '../protocol/sasl/scram.ts';

/** Users a credentials file may hold; a bound on start-up key derivation. */
export const USERS_MAX = 10_000;

/** The users and passwords of a file of the form {"users": {"alice": "password", ...}}. */
export function read_users_file(path: string): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`SASL users file ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const users = (parsed as { users?: unknown } | null)?.users;
  if (typeof users !== 'object' || users === null || Array.isArray(users))
    throw new Error(`SASL users file ${path}: expected {"users": {"name": "password", ...}}`);
  return users as Record<string, string>;
}

export class CredentialStore {
  private constructor(private readonly users: ReadonlyMap<string, Record<ScramHash, ScramCredential>>) {}

  /** Derives credentials for every user (about 5 ms of CPU per user, off the event loop). */
  static async from_passwords(passwords: Readonly<Record<string, string>>): Promise<CredentialStore> {
    const entries = Object.entries(passwords);
    if (entries.length > USERS_MAX) throw new Error(`at most ${USERS_MAX} users, got ${entries.length}`);
    const users = new Map<string, Record<ScramHash, ScramCredential>>();
    for (const [name, password] of entries) {
      if (name === '' || typeof password !== 'string' || password === '')
        throw new Error(`user ${JSON.stringify(name)}: a non-empty name and password are required`);
      users.set(name, {
        sha256: await scram_credential(password, 'sha256'),
        sha512: await scram_credential(password, 'sha512'),
      });
    }
    return new CredentialStore(users);
  }

  /**
   * Reads a JSON file of the form {"users": {"alice": "password", ...}}. The file holds passwords:
   * keep it readable by the broker's user only.
   */
  static async from_file(path: string): Promise<CredentialStore> {
    return CredentialStore.from_passwords(read_users_file(path));
  }

  get size(): number {
    return this.users.size;
  }

  scram(username: string, hash: ScramHash): ScramCredential | null {
    return this.users.get(username)?.[hash] ?? null;
  }

  async verify_password(username: string, password: string): Promise<boolean> {
    const credential = this.users.get(username)?.sha256;
    if (!credential) return false;
    return password_matches(credential, password, 'sha256');
  }
}
