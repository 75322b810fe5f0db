// Security in the fault lab: every broker on TLS with one CA (the brokers replicate and forward to
// one another over SASL_SSL, the first listener, as user `broker`), users in a file, ACLs checked.
// The other workloads keep to a PLAINTEXT listener as ANONYMOUS (AMQP as guest), super users here,
// so they run as they always have; the security workload logs in on the SASL_SSL one as users with
// only the ACLs it grants them. AMQP is amqps (TLS is on every listener), guest a user of the file.
import fs from 'node:fs';
import path from 'node:path';
import { dev_tls } from '../src/server/dev_tls.ts';

export const PLAIN_PORT = 9092;
export const SECURE_PORT = 9093;
/** The inter-broker user (a super user by that role), and the users the workloads log in as. */
export const LAB_USERS = {
  broker: 'broker-secret',
  admin: 'admin-secret',
  reader: 'reader-secret',
  guest: 'guest',
} as const;

export interface LabSecurity {
  ca: Buffer;
  /** Flags of broker `address` beside the lab's own. */
  flags(address: string): string[];
  /** Settings of the cluster's config file. */
  cluster_settings: { interBrokerUser: string };
}

/** The CA, the brokers' certificate (for every broker's address) and the users file, in `dir`. */
export function lab_security(dir: string, addresses: readonly string[]): LabSecurity {
  const tls = dev_tls(dir, addresses, Date.now());
  const users_file = path.join(dir, 'users.json');
  fs.writeFileSync(users_file, JSON.stringify({ users: LAB_USERS }), { mode: 0o600 });
  return {
    ca: fs.readFileSync(tls.ca_file),
    cluster_settings: { interBrokerUser: 'broker' },
    flags: (address) => [
      ...['--listeners', `SASL_SSL://${address}:${SECURE_PORT},PLAINTEXT://${address}:${PLAIN_PORT}`],
      ...['--tls-cert', tls.cert_file, '--tls-key', tls.key_file, '--tls-ca', tls.ca_file],
      ...['--sasl-users', users_file, '--authorization', '--super-users', 'User:ANONYMOUS,User:guest,User:admin'],
    ],
  };
}
