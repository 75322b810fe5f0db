// DescribeUserScramCredentials 0: each user's SCRAM mechanisms and iteration counts (users of the
// users file and those managed while the broker runs; never a salt or key); DESCRIBE on the
// cluster. A user named twice is DUPLICATE_RESOURCE, an unknown one RESOURCE_NOT_FOUND.
import { DESCRIBE_SCRAM_CREDENTIALS } from '../../../protocol/kafka/messages/50_describe_user_scram_credentials.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import { kafka_handler } from '../handler.ts';
import { allowed_on_cluster, refusal } from '../authorize.ts';
import { MECHANISM_CODES } from './51_alter_user_scram_credentials.ts';

type Info = { mechanism: number; iterations: number };

export const describe_user_scram_credentials_handler = kafka_handler(
  DESCRIBE_SCRAM_CREDENTIALS,
  { min: 0, max: 0, notes: 'the users file and the users managed while the broker runs' },
  (request, ctx) => {
    const base = { throttle_time_ms: 0, error_code: 0, error_message: null };
    if (!allowed_on_cluster(ctx, 'describe'))
      return { ...base, ...refusal(ctx, 'describe', 'cluster', ''), results: [] };
    const names = request.users?.map((u) => u.name) ?? null;
    const twice = new Set(names?.filter((name, i) => names.indexOf(name) !== i));
    const known = ctx.core.users.describe(names === null ? null : names.filter((name) => !twice.has(name)));
    type Result = { user: string; error_code: number; error_message: string | null; credential_infos: Info[] };
    const results: Result[] = known.map((user) =>
      user.mechanisms === null
        ? {
            user: user.name,
            error_code: ErrorCode.RESOURCE_NOT_FOUND,
            error_message: `no user ${user.name}`,
            credential_infos: [],
          }
        : {
            user: user.name,
            error_code: 0,
            error_message: null,
            credential_infos: user.mechanisms.map((m) => ({
              mechanism: MECHANISM_CODES[m.hash],
              iterations: m.iterations,
            })),
          },
    );
    for (const name of twice)
      results.push({
        user: name,
        error_code: ErrorCode.DUPLICATE_RESOURCE,
        error_message: `${name} is named twice`,
        credential_infos: [],
      });
    return { ...base, results };
  },
);
