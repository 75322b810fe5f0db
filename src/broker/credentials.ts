// The users a broker accepts, kept as SCRAM credentials (salted, iterated keys) for both hashes:
// SCRAM exchanges use them directly, and a PLAIN password is checked by deriving the same key.
// Passwords are read once at start and not kept. Protocol-neutral: any front end can use it.
import fs from 'node:fs';
import type { Credentials } from '../core/credentials.ts';
import { password_matches, scram_credential, type ScramCredential, type ScramHash } from '../protocol/sasl/scram.ts';

/** Users a credentials file may hold; a bound on start-up key derivation. */
export const USERS_MAX = 10_000;

/** Vhosts a users file may name; a bound on what each connection's open checks. */
export const VHOSTS_MAX = 1_000;
/** In a vhost's list of users: every user of the file. */
export const EVERY_USER = '*';

/** A users file: passwords, and optionally the AMQP virtual hosts with the users each admits. */
export interface UsersFile {
  users: Record<string, string>;
  /** vhost -> users allowed in (or `*`); absent: the one vhost `/`, open to every user. */
  vhosts?: Record<string, string[]>;
}

/** The users and passwords of a file of the form {"users": {"alice": "password", ...}}. */
export function read_users_file(path: string): Record<string, string> {
  return parse_users_file(path).users;
}

/** The whole file: {"users": {...}, "vhosts": {"/": ["alice"], "orders": ["*"]}}. */
export function parse_users_file(path: string): UsersFile {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`SASL users file ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const { users, vhosts } = (parsed ?? {}) as { users?: unknown; vhosts?: unknown };
  if (!is_object(users)) throw new Error(`SASL users file ${path}: expected {"users": {"name": "password", ...}}`);
  if (vhosts === undefined) return { users: users as Record<string, string> };
  const problem = vhosts_problem(vhosts, users);
  if (problem) throw new Error(`SASL users file ${path}: ${problem}`);
  return { users: users as Record<string, string>, vhosts: vhosts as Record<string, string[]> };
}

function is_object(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function vhosts_problem(vhosts: unknown, users: Readonly<Record<string, unknown>>): string | null {
  if (!is_object(vhosts)) return '"vhosts": expected {"vhost": ["user", ...], ...}';
  const names = Object.keys(vhosts);
  if (names.length === 0) return '"vhosts" names no vhost';
  if (names.length > VHOSTS_MAX) return `at most ${VHOSTS_MAX} vhosts, got ${names.length}`;
  for (const [vhost, admitted] of Object.entries(vhosts)) {
    if (vhost === '' || Buffer.byteLength(vhost) > 255) return `vhost ${JSON.stringify(vhost)}: 1 to 255 bytes`;
    if (!Array.isArray(admitted) || !admitted.every((u) => typeof u === 'string'))
      return `vhost '${vhost}': expected a list of user names`;
    const unknown = admitted.find((u) => u !== EVERY_USER && !Object.hasOwn(users, u));
    if (unknown !== undefined) return `vhost '${vhost}' admits '${unknown}', who is not in "users"`;
  }
  return null;
}

export class CredentialStore implements Credentials {
  readonly vhosts: readonly string[];

  private constructor(
    private readonly users: ReadonlyMap<string, Record<ScramHash, ScramCredential>>,
    private readonly admitted: ReadonlyMap<string, ReadonlySet<string>>,
  ) {
    this.vhosts = [...admitted.keys()];
  }

  /**
   * Derives credentials for every user (about 5 ms of CPU per user, off the event loop). Without
   * `vhosts`, the one vhost `/` admits every user.
   */
  static async from_passwords(
    passwords: Readonly<Record<string, string>>,
    vhosts: Readonly<Record<string, readonly string[]>> = { '/': [EVERY_USER] },
  ): Promise<CredentialStore> {
    const problem = vhosts_problem(vhosts, passwords);
    if (problem) throw new Error(problem);
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
    const admitted = new Map(Object.entries(vhosts).map(([vhost, names]) => [vhost, new Set(names)]));
    return new CredentialStore(users, admitted);
  }

  /**
   * Reads a JSON file of the form {"users": {"alice": "password", ...}}. The file holds passwords:
   * keep it readable by the broker's user only.
   */
  static async from_file(path: string): Promise<CredentialStore> {
    const file = parse_users_file(path);
    return CredentialStore.from_passwords(file.users, file.vhosts);
  }

  get size(): number {
    return this.users.size;
  }

  scram(username: string, hash: ScramHash): ScramCredential | null {
    return this.users.get(username)?.[hash] ?? null;
  }

  has(username: string): boolean {
    return this.users.has(username);
  }

  /** Whether the vhost admits every user (`*`), so users managed while the broker runs too. */
  admits_everyone(vhost: string): boolean {
    return this.admitted.get(vhost)?.has(EVERY_USER) ?? false;
  }

  /** The SCRAM mechanisms of a file user, with their iteration counts. */
  mechanisms(username: string): Array<{ hash: ScramHash; iterations: number }> {
    const credentials = this.users.get(username);
    if (!credentials) return [];
    return (['sha256', 'sha512'] as const).map((hash) => ({ hash, iterations: credentials[hash].iterations }));
  }

  /** The users of the file. */
  names(): string[] {
    return [...this.users.keys()];
  }

  admits(username: string, vhost: string): boolean {
    const names = this.admitted.get(vhost);
    return !!names && this.users.has(username) && (names.has(EVERY_USER) || names.has(username));
  }

  async verify_password(username: string, password: string): Promise<boolean> {
    const credential = this.users.get(username)?.sha256;
    if (!credential) return false;
    return password_matches(credential, password, 'sha256');
  }
}
