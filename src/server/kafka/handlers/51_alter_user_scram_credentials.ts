// AlterUserScramCredentials 0: managed users' SCRAM credentials removed or set from a password the
// client salted (so the password never crosses the wire); ALTER on the cluster. Kept in the
// cluster's metadata, so every broker takes the new login at once; a user with no credential left
// is gone, and its open connections are closed (KafkaListener's sweep). One result per user: a
// user named in two changes is DUPLICATE_RESOURCE, an unknown mechanism UNSUPPORTED_SASL_MECHANISM.
import { ALTER_SCRAM_CREDENTIALS } from '../../../protocol/kafka/messages/51_alter_user_scram_credentials.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import { kafka_handler, type RequestContext } from '../handler.ts';
import { allowed_on_cluster, audit, refusal } from '../authorize.ts';
import { error_fields } from '../error_map.ts';

/** Kafka's ScramMechanism numbers. */
export const MECHANISM_CODES = { sha256: 1, sha512: 2 } as const;
const HASH_OF = new Map<number, 'sha256' | 'sha512'>([
  [1, 'sha256'],
  [2, 'sha512'],
]);

export const alter_user_scram_credentials_handler = kafka_handler(
  ALTER_SCRAM_CREDENTIALS,
  { min: 0, max: 0, notes: 'users managed while the broker runs; users of the users file are read-only' },
  async (request, ctx) => {
    const changes = [
      ...request.deletions.map((d) => ({ name: d.name, mechanism: d.mechanism, upsert: null })),
      ...request.upsertions.map((u) => ({ name: u.name, mechanism: u.mechanism, upsert: u })),
    ];
    const users = [...new Set(changes.map((c) => c.name))];
    if (!allowed_on_cluster(ctx, 'alter'))
      return { throttle_time_ms: 0, results: users.map((user) => ({ user, ...refusal(ctx, 'alter', 'cluster', '') })) };
    const results = [];
    for (const user of users)
      results.push({
        user,
        ...(await outcome(
          ctx,
          changes.filter((c) => c.name === user),
        )),
      });
    return { throttle_time_ms: 0, results };
  },
);

type Change = {
  name: string;
  mechanism: number;
  upsert: { iterations: number; salt: Buffer; salted_password: Buffer } | null;
};

type Outcome = { error_code: number; error_message: string | null };

/** One user's change made, or why not. */
async function outcome(ctx: RequestContext, mine: Change[]): Promise<Outcome> {
  const change = mine[0]!;
  if (mine.length > 1)
    return {
      error_code: ErrorCode.DUPLICATE_RESOURCE,
      error_message: `${change.name} is named in ${mine.length} changes`,
    };
  const hash = HASH_OF.get(change.mechanism);
  if (!hash)
    return {
      error_code: ErrorCode.UNSUPPORTED_SASL_MECHANISM,
      error_message: `unknown SCRAM mechanism ${change.mechanism}`,
    };
  try {
    if (change.upsert) {
      const { salt, iterations, salted_password } = change.upsert;
      await ctx.core.users.set_scram(change.name, hash, Buffer.from(salt), iterations, Buffer.from(salted_password));
    } else await ctx.core.users.remove_scram(change.name, hash);
  } catch (error) {
    return error_fields(error);
  }
  audit(ctx, change.upsert ? 'set user credential' : 'remove user credential', { user: change.name, mechanism: hash });
  return { error_code: ErrorCode.NONE, error_message: null };
}
