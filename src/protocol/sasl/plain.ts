// SASL PLAIN (RFC 4616): one message, "authzid NUL authcid NUL passwd". Kafka ignores the
// authorization identity unless it equals the user; so does Sluice.

/** Longest PLAIN message accepted (each field is at most 255 octets by the RFC). */
export const PLAIN_MESSAGE_BYTES_MAX = 3 * 255 + 2;

export interface PlainCredentials {
  username: string;
  password: string;
}

export function encode_plain({ username, password }: PlainCredentials): Buffer {
  return Buffer.from(`\0${username}\0${password}`);
}

/** The user and password of a PLAIN message, or an error message saying what is wrong with it. */
export function parse_plain(message: Buffer): PlainCredentials | string {
  if (message.length > PLAIN_MESSAGE_BYTES_MAX) return 'PLAIN message too long';
  const parts = message.toString('utf8').split('\0');
  if (parts.length !== 3) return 'PLAIN message must be authzid NUL user NUL password';
  const [authzid, username, password] = parts as [string, string, string];
  if (username === '' || password === '') return 'PLAIN message with an empty user or password';
  if (authzid !== '' && authzid !== username) return 'PLAIN authorization identity must be empty or the user';
  return { username, password };
}
