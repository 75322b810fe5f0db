// A raw protocol connection to a broker, logged in with SASL: for tests that send requests the
// clients do not (or look at the connection itself).
import { Connection, type ConnectionOptions } from '../../src/protocol/kafka/client_connection.ts';
import { sasl_login, type SaslOptions } from '../../src/protocol/sasl/client_login.ts';
import { SASL_HANDSHAKE } from '../../src/protocol/kafka/messages/17_sasl_handshake.ts';
import { SASL_AUTHENTICATE } from '../../src/protocol/kafka/messages/36_sasl_authenticate.ts';

const VERSIONS = new Map([
  [SASL_HANDSHAKE.api_key, { min: 0, max: 1 }],
  [SASL_AUTHENTICATE.api_key, { min: 0, max: 2 }],
]);

export async function sasl_connection(
  bootstrap: string,
  login: SaslOptions,
  client_id?: string,
  tls?: ConnectionOptions['tls'],
): Promise<Connection> {
  const [host, port] = bootstrap.split(':');
  const connection = await Connection.connect(host!, Number(port), { client_id, tls });
  try {
    await sasl_login(connection, VERSIONS, login);
  } catch (error) {
    connection.close();
    throw error;
  }
  return connection;
}
