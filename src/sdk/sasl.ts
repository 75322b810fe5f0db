// SASL for SDK connections: the login itself is shared with the broker
// (protocol/sasl/client_login.ts); here its failures become AuthenticationError.
import type { Connection } from '../protocol/kafka/client_connection.ts';
import { sasl_login, SaslLoginError, type SaslOptions } from '../protocol/sasl/client_login.ts';
import { AuthenticationError } from './errors.ts';

export { check_sasl_options, type SaslOptions } from '../protocol/sasl/client_login.ts';

export async function authenticate(
  connection: Connection,
  versions: ReadonlyMap<number, { min: number; max: number }>,
  sasl: SaslOptions,
): Promise<void> {
  try {
    await sasl_login(connection, versions, sasl);
  } catch (error) {
    if (error instanceof SaslLoginError) throw new AuthenticationError(error.message, error.code);
    throw error;
  }
}
