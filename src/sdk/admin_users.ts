// Admin: SCRAM users managed while the broker runs (DescribeUserScramCredentials,
// AlterUserScramCredentials). The password is salted here, so only a salt, an iteration count and
// the salted password cross the wire; the broker keeps derived keys, never the password.
import crypto from 'node:crypto';
import { ALTER_SCRAM_CREDENTIALS } from '../protocol/kafka/messages/51_alter_user_scram_credentials.ts';
import { DESCRIBE_SCRAM_CREDENTIALS } from '../protocol/kafka/messages/50_describe_user_scram_credentials.ts';
import { SCRAM_ITERATIONS_MIN, salted_password, type ScramHash } from '../protocol/sasl/scram.ts';
import { check_code } from './errors.ts';
import { invalid, type AdminRequests } from './admin_requests.ts';

export type ScramMechanismName = 'scram-sha-256' | 'scram-sha-512';

export interface UserScramCredentials {
  user: string;
  mechanisms: Array<{ mechanism: ScramMechanismName; iterations: number }>;
}

const MECHANISMS: Readonly<Record<ScramMechanismName, { code: number; hash: ScramHash }>> = {
  'scram-sha-256': { code: 1, hash: 'sha256' },
  'scram-sha-512': { code: 2, hash: 'sha512' },
};
const NAME_OF = new Map(Object.entries(MECHANISMS).map(([name, m]) => [m.code, name as ScramMechanismName]));
const SALT_BYTES = 32;

function mechanism_of(name: string | undefined, operation: string): { code: number; hash: ScramHash } {
  const found = MECHANISMS[(name ?? 'scram-sha-256') as ScramMechanismName];
  if (!found) throw invalid(`${operation}: mechanism ${JSON.stringify(name)} is not scram-sha-256 or scram-sha-512`);
  return found;
}

async function alter(admin: AdminRequests, operation: string, body: Parameters<typeof send_alter>[1]): Promise<void> {
  const { response } = await send_alter(admin, body);
  for (const result of response.results)
    check_code(result.error_code, `${operation} ${result.user}`, result.error_message);
}

function send_alter(
  admin: AdminRequests,
  body: {
    deletions: Array<{ name: string; mechanism: number }>;
    upsertions: Array<{ name: string; mechanism: number; iterations: number; salt: Buffer; salted_password: Buffer }>;
  },
) {
  return admin.cluster.with_retry('AlterUserScramCredentials', async () =>
    (await admin.cluster.any()).send(ALTER_SCRAM_CREDENTIALS, 0, 0, body),
  );
}

/** Adds a user, or sets its password, for one SCRAM mechanism (default scram-sha-256). */
export async function upsert_user(
  admin: AdminRequests,
  options: { user: string; password: string; mechanism?: ScramMechanismName; iterations?: number },
): Promise<void> {
  if (typeof options?.user !== 'string' || options.user === '')
    throw invalid('upsertUserScramCredential: user is required');
  if (typeof options.password !== 'string' || options.password === '')
    throw invalid('upsertUserScramCredential: password is required');
  const { code, hash } = mechanism_of(options.mechanism, 'upsertUserScramCredential');
  const iterations = options.iterations ?? SCRAM_ITERATIONS_MIN;
  const salt = crypto.randomBytes(SALT_BYTES);
  const salted = await salted_password(options.password, salt, iterations, hash);
  await alter(admin, 'upsertUserScramCredential', {
    deletions: [],
    upsertions: [{ name: options.user, mechanism: code, iterations, salt, salted_password: salted }],
  });
}

/** Removes a user's credential for one mechanism; with none left, the user is gone. */
export async function delete_user(
  admin: AdminRequests,
  options: { user: string; mechanism?: ScramMechanismName },
): Promise<void> {
  const { code } = mechanism_of(options?.mechanism, 'deleteUserScramCredential');
  await alter(admin, 'deleteUserScramCredential', {
    deletions: [{ name: options.user, mechanism: code }],
    upsertions: [],
  });
}

/** The users named (absent: every user) with their mechanisms and iteration counts. */
export async function describe_users(admin: AdminRequests, users?: string[]): Promise<UserScramCredentials[]> {
  const { response } = await admin.cluster.with_retry('DescribeUserScramCredentials', async () =>
    (await admin.cluster.any()).send(DESCRIBE_SCRAM_CREDENTIALS, 0, 0, {
      users: users ? users.map((name) => ({ name })) : null,
    }),
  );
  check_code(response.error_code, 'describeUserScramCredentials', response.error_message);
  return response.results.map((result) => {
    check_code(result.error_code, `describeUserScramCredentials ${result.user}`, result.error_message);
    return {
      user: result.user,
      mechanisms: result.credential_infos.map((info) => ({
        mechanism: NAME_OF.get(info.mechanism) ?? 'scram-sha-256',
        iterations: info.iterations,
      })),
    };
  });
}
