// connection.start-ok's login: PLAIN (`\0user\0password`, an authorization id before the first NUL
// ignored) or AMQPLAIN (a field table without its length prefix, LOGIN and PASSWORD), checked
// against the same users as Kafka SASL. Without a users file only guest/guest is let in, and by
// default only from loopback, as RabbitMQ does (`amqp_guest`: loopback, anywhere or off). The users
// file may name vhosts and who each admits; without one, only `/` is served. A client that
// presented a certificate the CA signed (mTLS) may log in with EXTERNAL as its subject.
import type { Credentials } from '../../core/index.ts';
import { decode_table_body } from '../../protocol/amqp/field_table.ts';

export const MECHANISMS = 'PLAIN AMQPLAIN';

/** What connection.start offers: EXTERNAL first when the client presented a certificate the CA signed. */
export function mechanisms_offered(certificate: string | null): string {
  return certificate ? `EXTERNAL ${MECHANISMS}` : MECHANISMS;
}
/** Where guest/guest may log in from when there is no users file. */
export type GuestAccess = 'loopback' | 'anywhere' | 'off';
const GUEST = 'guest';

export interface Login {
  username: string;
  password: string;
}

/** The login the response carries; null when it is malformed or the mechanism is not ours. */
export function login_of(mechanism: string, response: Buffer): Login | null {
  if (mechanism === 'PLAIN') {
    const parts = response.toString('utf8').split('\0');
    if (parts.length !== 3) return null;
    return { username: parts[1]!, password: parts[2]! };
  }
  if (mechanism === 'AMQPLAIN') {
    try {
      const table = decode_table_body(response);
      const text = (value: unknown) => (Buffer.isBuffer(value) ? value.toString('utf8') : value);
      const username = text(table['LOGIN']);
      const password = text(table['PASSWORD']);
      return typeof username === 'string' && typeof password === 'string' ? { username, password } : null;
    } catch {
      return null;
    }
  }
  return null;
}

export function is_loopback(address: string | undefined): boolean {
  return (
    address === '127.0.0.1' || address === '::1' || address === '::ffff:127.0.0.1' || !!address?.startsWith('127.')
  );
}

/** Null when accepted; otherwise why not (for the ACCESS_REFUSED reply). */
export async function check_login(
  login: Login,
  credentials: Credentials | null,
  remote_address: string | undefined,
  guest: GuestAccess = 'loopback',
): Promise<string | null> {
  if (credentials) {
    return (await credentials.verify_password(login.username, login.password))
      ? null
      : `login refused for user '${login.username}'`;
  }
  if (guest === 'off') return `login refused for user '${login.username}': no users file, and guest is off`;
  if (login.username !== GUEST || login.password !== GUEST)
    return `login refused for user '${login.username}': without a users file only guest is let in`;
  if (guest === 'loopback' && !is_loopback(remote_address)) return "user 'guest' can only connect via localhost";
  return null;
}

/** The vhosts served: the users file's, or `/` alone without one. */
export function served_vhosts(credentials: Credentials | null): readonly string[] {
  return credentials?.vhosts ?? ['/'];
}

/**
 * Null when the user may open the vhost; otherwise why not (for the NOT_ALLOWED reply). A client
 * certificate's subject (`by_certificate`, EXTERNAL) is no user of the list: it opens the vhosts
 * that admit every user.
 */
export function vhost_refusal(
  credentials: Credentials | null,
  username: string,
  vhost: string,
  by_certificate = false,
): string | null {
  if (!served_vhosts(credentials).includes(vhost)) return `vhost '${vhost}' not found`;
  if (!credentials) return null;
  const admitted = by_certificate ? credentials.admits_everyone(vhost) : credentials.admits(username, vhost);
  return admitted ? null : `access to vhost '${vhost}' refused for user '${username}'`;
}
