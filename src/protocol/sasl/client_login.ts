// The client side of SASL on a Kafka connection: SaslHandshake v1, then SaslAuthenticate exchanges
// for PLAIN or SCRAM-SHA-256/512 (the same SCRAM code the broker uses). Runs before the connection
// is used for anything else. Shared by the SDK and by brokers logging in to each other.
import { ErrorCode } from '../kafka/error_codes.ts';
import { SASL_HANDSHAKE } from '../kafka/messages/17_sasl_handshake.ts';
import { SASL_AUTHENTICATE } from '../kafka/messages/36_sasl_authenticate.ts';
import { encode_plain } from './plain.ts';
import { SCRAM_MECHANISMS, ScramClient, ScramError } from './scram.ts';
import type { Connection } from '../kafka/client_connection.ts';

/** A login the broker refused, or that could not be attempted; `code` is the Kafka error code when one was given. */
export class SaslLoginError extends Error {
  constructor(
    message: string,
    readonly code: number | null = null,
  ) {
    super(message);
    this.name = 'SaslLoginError';
  }
}

/** kafkajs's shape: `sasl: { mechanism: 'scram-sha-256', username, password }`. */
export interface SaslOptions {
  mechanism: 'plain' | 'scram-sha-256' | 'scram-sha-512';
  username: string;
  password: string;
}

const MECHANISMS: Record<SaslOptions['mechanism'], string> = {
  plain: 'PLAIN',
  'scram-sha-256': 'SCRAM-SHA-256',
  'scram-sha-512': 'SCRAM-SHA-512',
};

export function check_sasl_options(sasl: SaslOptions): void {
  if (!(sasl.mechanism in MECHANISMS))
    throw new TypeError(
      `sasl.mechanism: one of ${Object.keys(MECHANISMS).join(', ')}, not ${JSON.stringify(sasl.mechanism)}`,
    );
  if (typeof sasl.username !== 'string' || sasl.username === '')
    throw new TypeError('sasl.username: a non-empty string');
  if (typeof sasl.password !== 'string' || sasl.password === '')
    throw new TypeError('sasl.password: a non-empty string');
}

export async function sasl_login(
  connection: Connection,
  versions: ReadonlyMap<number, { min: number; max: number }>,
  sasl: SaslOptions,
): Promise<void> {
  const mechanism = MECHANISMS[sasl.mechanism];
  const handshake_range = versions.get(SASL_HANDSHAKE.api_key);
  const authenticate_range = versions.get(SASL_AUTHENTICATE.api_key);
  if (!handshake_range || handshake_range.max < 1 || !authenticate_range)
    throw new SaslLoginError('the broker does not offer SASL authentication (SaslHandshake v1 and SaslAuthenticate)');
  const handshake = await connection.call(SASL_HANDSHAKE, 1, { mechanism });
  const offered = (handshake.mechanisms as string[]).join(', ');
  if ((handshake.error_code as number) === ErrorCode.ILLEGAL_SASL_STATE && offered === '')
    throw new SaslLoginError("the broker's listener does not use SASL");
  if ((handshake.error_code as number) !== ErrorCode.NONE)
    throw new SaslLoginError(
      `SASL mechanism ${mechanism} refused (the broker offers: ${offered || 'none'})`,
      handshake.error_code as number,
    );
  const version = Math.min(2, authenticate_range.max);
  const step = async (auth_bytes: Buffer): Promise<Buffer> => {
    const response = await connection.call(SASL_AUTHENTICATE, version, { auth_bytes });
    const code = response.error_code as number;
    if (code !== ErrorCode.NONE)
      throw new SaslLoginError(
        `SASL ${mechanism} login as ${sasl.username} failed: ` +
          `${(response.error_message as string | null) ?? `error ${code}`}`,
        code,
      );
    return response.auth_bytes as Buffer;
  };
  const hash = SCRAM_MECHANISMS[mechanism];
  if (!hash) {
    await step(encode_plain(sasl));
    return;
  }
  const client = new ScramClient(hash, sasl.username, sasl.password);
  try {
    const server_first = await step(client.first());
    client.verify(await step(await client.final(server_first)));
  } catch (error) {
    if (error instanceof ScramError) throw new SaslLoginError(`SASL ${mechanism}: ${error.message}`);
    throw error;
  }
}
