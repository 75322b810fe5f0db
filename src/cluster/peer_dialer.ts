// How this broker opens a connection to another broker: plain TCP or, when the cluster's listeners
// take TLS, TLS with the options `tls` gives at each dial; then, when the cluster's
// listeners require SASL, a login as the inter-broker user (cluster.interBrokerUser) before the
// connection carries anything else. Followers, forwarded produces and remote reads all dial here.
import { Connection, type ConnectionOptions } from '../protocol/kafka/client_connection.ts';
import { SASL_HANDSHAKE } from '../protocol/kafka/messages/17_sasl_handshake.ts';
import { SASL_AUTHENTICATE } from '../protocol/kafka/messages/36_sasl_authenticate.ts';
import { sasl_login, type SaslOptions } from '../protocol/sasl/client_login.ts';

/** The TLS options of the next connection to a peer (read again at each dial: certificates are renewed). */
export type PeerTls = () => import('node:tls').ConnectionOptions;

export type PeerDialer = (host: string, port: number, options: ConnectionOptions) => Promise<Connection>;

/** The SASL versions every Sluice broker answers (no ApiVersions round trip between brokers). */
const PEER_SASL_VERSIONS: ReadonlyMap<number, { min: number; max: number }> = new Map([
  [SASL_HANDSHAKE.api_key, { min: 0, max: 1 }],
  [SASL_AUTHENTICATE.api_key, { min: 0, max: 2 }],
]);

export function peer_dialer(login: SaslOptions | null, tls: PeerTls | null): PeerDialer {
  return async (host, port, options) => {
    const connection = await Connection.connect(host, port, tls ? { ...options, tls: tls() } : options);
    if (login === null) return connection;
    try {
      await sasl_login(connection, PEER_SASL_VERSIONS, login);
    } catch (error) {
      connection.close();
      throw error;
    }
    return connection;
  };
}
