// The broker's users: those of the users file (read at start, read-only here) and those managed
// while it runs (AlterUserScramCredentials, `sluice user`), whose SCRAM credentials are kept in the
// metadata store — a file on one node, etcd in a cluster, so every broker knows a user at once.
// Front ends see both through the Credentials contract: SCRAM logins, PLAIN and HTTP Basic
// passwords (checked by deriving the stored key), and whether a user still exists.
import type { Credentials } from '../core/credentials.ts';
import type { MetadataStore, StoredScram, StoredScramUser } from '../core/metadata_store.ts';
import type { ScramUserInfo, UsersApi } from '../core/api.ts';
import { BrokerError } from '../core/errors.ts';
import {
  SCRAM_ITERATIONS_MIN,
  credential_of_salted,
  password_matches,
  type ScramCredential,
  type ScramHash,
} from '../protocol/sasl/scram.ts';
import { USERS_MAX, type CredentialStore } from './credentials.ts';

/** Kafka's bound on iterations (a higher count is a denial of service on every login). */
export const SCRAM_ITERATIONS_MAX = 16_384;
/** A user name's length at most, in UTF-8 bytes. */
export const USER_NAME_BYTES_MAX = 255;
const HASHES: readonly ScramHash[] = ['sha256', 'sha512'];

type Decoded = Map<string, Partial<Record<ScramHash, ScramCredential>>>;

function decode(stored: StoredScram): ScramCredential {
  const bytes = (text: string) => Buffer.from(text, 'base64');
  return {
    salt: bytes(stored.salt),
    iterations: stored.iterations,
    stored_key: bytes(stored.stored_key),
    server_key: bytes(stored.server_key),
  };
}

function encode(credential: ScramCredential): StoredScram {
  return {
    salt: credential.salt.toString('base64'),
    iterations: credential.iterations,
    stored_key: credential.stored_key.toString('base64'),
    server_key: credential.server_key.toString('base64'),
  };
}

export class Users implements Credentials, UsersApi {
  private decoded: Decoded = new Map();
  private decoded_from: ReadonlyMap<string, StoredScramUser> | null = null;

  constructor(
    private readonly file: CredentialStore | null,
    private readonly store: MetadataStore,
  ) {}

  /** The managed users, decoded once per change of the store's map. */
  private managed(): Decoded {
    const current = this.store.scram_users();
    if (current !== this.decoded_from) {
      const decoded: Decoded = new Map();
      for (const [name, user] of current) {
        const credentials: Partial<Record<ScramHash, ScramCredential>> = {};
        for (const hash of HASHES) if (user[hash]) credentials[hash] = decode(user[hash]);
        decoded.set(name, credentials);
      }
      this.decoded = decoded;
      this.decoded_from = current;
    }
    return this.decoded;
  }

  get size(): number {
    const file = this.file?.names() ?? [];
    return file.length + [...this.managed().keys()].filter((name) => !this.file?.has(name)).length;
  }

  get vhosts(): readonly string[] {
    return this.file?.vhosts ?? ['/'];
  }

  scram(username: string, hash: ScramHash): ScramCredential | null {
    return this.file?.scram(username, hash) ?? this.managed().get(username)?.[hash] ?? null;
  }

  has(username: string): boolean {
    return (this.file?.has(username) ?? false) || this.managed().has(username);
  }

  async verify_password(username: string, password: string): Promise<boolean> {
    if (this.file?.has(username)) return this.file.verify_password(username, password);
    const credentials = this.managed().get(username);
    const hash = credentials?.sha256 ? 'sha256' : 'sha512';
    const credential = credentials?.[hash];
    return credential ? password_matches(credential, password, hash) : false;
  }

  admits_everyone(vhost: string): boolean {
    return this.file ? this.file.admits_everyone(vhost) : vhost === '/';
  }

  admits(username: string, vhost: string): boolean {
    if (this.file?.has(username)) return this.file.admits(username, vhost);
    if (!this.managed().has(username)) return false;
    return this.admits_everyone(vhost);
  }

  // ---------------------------------------------------------------- UsersApi

  describe(names: readonly string[] | null): ScramUserInfo[] {
    const wanted = names ?? [...new Set([...(this.file?.names() ?? []), ...this.managed().keys()])].sort();
    return wanted.map((name) => {
      if (this.file?.has(name)) return { name, from_file: true, mechanisms: this.file.mechanisms(name) };
      const credentials = this.managed().get(name);
      if (!credentials) return { name, from_file: false, mechanisms: null };
      const mechanisms = HASHES.filter((hash) => credentials[hash]).map((hash) => ({
        hash,
        iterations: credentials[hash]!.iterations,
      }));
      return { name, from_file: false, mechanisms };
    });
  }

  async set_scram(name: string, hash: ScramHash, salt: Buffer, iterations: number, salted: Buffer): Promise<void> {
    this.check_managed(name);
    if (iterations < SCRAM_ITERATIONS_MIN || iterations > SCRAM_ITERATIONS_MAX)
      throw new BrokerError(
        'unacceptable_credential',
        `iterations ${iterations}: from ${SCRAM_ITERATIONS_MIN} to ${SCRAM_ITERATIONS_MAX}`,
      );
    if (salt.length === 0) throw new BrokerError('unacceptable_credential', 'the salt is empty');
    const credential = credential_of_salted(salted, salt, iterations, hash);
    if (!credential) throw new BrokerError('unacceptable_credential', `the salted password is not a ${hash} key`);
    if (!this.managed().has(name) && this.managed().size >= USERS_MAX)
      throw new BrokerError('policy_violation', `at most ${USERS_MAX} managed users`);
    await this.store.set_scram(name, hash, encode(credential));
  }

  async remove_scram(name: string, hash: ScramHash): Promise<void> {
    this.check_managed(name);
    if (!this.managed().get(name)?.[hash])
      throw new BrokerError('resource_not_found', `user ${name} has no ${hash} credential`);
    await this.store.set_scram(name, hash, null);
  }

  private check_managed(name: string): void {
    if (name === '' || Buffer.byteLength(name) > USER_NAME_BYTES_MAX)
      throw new BrokerError('unacceptable_credential', `a user name is 1 to ${USER_NAME_BYTES_MAX} bytes`);
    if (this.file?.has(name))
      throw new BrokerError('invalid_request', `user ${name} comes from the users file: change it there`);
  }
}
