// The users a listener accepts, as an authenticating front end sees them: SCRAM credentials for the
// SCRAM exchanges and a password check for PLAIN. The file-backed store is the broker core's
// (broker/credentials.ts); front ends get it from the composition root through this contract.
import type { ScramCredential, ScramHash } from '../protocol/sasl/scram.ts';

export interface Credentials {
  /** Users known. */
  readonly size: number;
  scram(username: string, hash: ScramHash): ScramCredential | null;
  verify_password(username: string, password: string): Promise<boolean>;
  /** Whether the user exists now (a user removed while the broker runs is gone at once). */
  has(username: string): boolean;
  /** The AMQP virtual hosts served (`/` alone unless the users file names others). */
  readonly vhosts: readonly string[];
  /** Whether the user may open the vhost (false for a vhost not served). */
  admits(username: string, vhost: string): boolean;
  /** Whether the vhost admits every user (`*`), so also a client certificate's subject. */
  admits_everyone(vhost: string): boolean;
}
