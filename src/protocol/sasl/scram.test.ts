import test from 'node:test';
import assert from 'node:assert/strict';
import {
  ScramClient,
  ScramError,
  ScramServer,
  escape_username,
  parse_attributes,
  password_matches,
  scram_credential,
  unescape_username,
  type ScramCredential,
} from './scram.ts';
import { encode_plain, parse_plain } from './plain.ts';

// The SCRAM-SHA-256 exchange published in RFC 7677, section 3.
const RFC7677 = {
  client_nonce: 'rOprNGfwEbeRWgbNEkqO',
  client_first: 'n,,n=user,r=rOprNGfwEbeRWgbNEkqO',
  server_first: 'r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096',
  client_final:
    'c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=',
  server_final: 'v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=',
};

test('the client reproduces the RFC 7677 exchange', async () => {
  const client = new ScramClient('sha256', 'user', 'pencil', RFC7677.client_nonce);
  assert.equal(client.first().toString(), RFC7677.client_first);
  assert.equal((await client.final(Buffer.from(RFC7677.server_first))).toString(), RFC7677.client_final);
  client.verify(Buffer.from(RFC7677.server_final));
  assert.throws(() => client.verify(Buffer.from('v=AAAA')), ScramError);
});

async function exchange(
  hash: 'sha256' | 'sha512',
  users: Map<string, ScramCredential>,
  user: string,
  password: string,
) {
  const client = new ScramClient(hash, user, password);
  const server = new ScramServer(hash, (name) => users.get(name) ?? null);
  const server_first = server.step(client.first());
  const server_final = server.step(await client.final(server_first));
  client.verify(server_final);
  return server.username;
}

for (const hash of ['sha256', 'sha512'] as const) {
  test(`${hash}: server and client agree; wrong passwords and unknown users fail alike`, async () => {
    const users = new Map([['alice,=x', await scram_credential('s3cret', hash)]]);
    assert.equal(await exchange(hash, users, 'alice,=x', 's3cret'), 'alice,=x');
    await assert.rejects(exchange(hash, users, 'alice,=x', 'wrong'), /authentication failed/);
    await assert.rejects(exchange(hash, users, 'bob', 's3cret'), /authentication failed/);
    assert.equal(await password_matches(users.get('alice,=x')!, 's3cret', hash), true);
    assert.equal(await password_matches(users.get('alice,=x')!, 's3cret ', hash), false);
  });
}

test('the server refuses malformed and out-of-order messages', async () => {
  const users = new Map([['u', await scram_credential('p', 'sha256')]]);
  const fresh = () => new ScramServer('sha256', (name) => users.get(name) ?? null);
  assert.throws(() => fresh().step(Buffer.from('p=tls-unique,,n=u,r=abc')), ScramError);
  assert.throws(() => fresh().step(Buffer.from('n,,n=u')), /missing attribute r/);
  assert.throws(() => fresh().step(Buffer.from('n,,garbage')), ScramError);
  const server = fresh();
  const client = new ScramClient('sha256', 'u', 'p');
  server.step(client.first());
  assert.throws(() => server.step(Buffer.from('c=biws,r=other,p=AAAA')), /nonce mismatch/);
  assert.throws(() => server.step(Buffer.from('anything')), /already complete/);
});

test('the server accepts the client nonce repeated in front of the combined nonce (librdkafka)', async () => {
  const users = new Map([['u', await scram_credential('p', 'sha256')]]);
  const server = new ScramServer('sha256', (name) => users.get(name) ?? null);
  const server_first = server.step(Buffer.from('n,,n=u,r=abc')).toString();
  const combined = parse_attributes(server_first).get('r')!;
  assert.throws(() => server.step(Buffer.from(`c=biws,r=xyz${combined},p=AAAA`)), /nonce mismatch/);
  const again = new ScramServer('sha256', (name) => users.get(name) ?? null);
  const first = parse_attributes(again.step(Buffer.from('n,,n=u,r=abc')).toString()).get('r')!;
  assert.throws(() => again.step(Buffer.from(`c=biws,r=abc${first},p=AAAA`)), /authentication failed/);
});

test('usernames and attributes are escaped and parsed', () => {
  assert.equal(escape_username('a,b=c'), 'a=2Cb=3Dc');
  assert.equal(unescape_username('a=2Cb=3Dc'), 'a,b=c');
  assert.throws(() => unescape_username('a=2Xb'), ScramError);
  assert.deepEqual(
    [...parse_attributes('r=ab==,s=x')],
    [
      ['r', 'ab=='],
      ['s', 'x'],
    ],
  );
});

test('PLAIN messages', () => {
  assert.deepEqual(parse_plain(encode_plain({ username: 'u', password: 'p w' })), { username: 'u', password: 'p w' });
  assert.deepEqual(parse_plain(Buffer.from('u\0u\0p')), { username: 'u', password: 'p' });
  assert.match(parse_plain(Buffer.from('x\0u\0p')) as string, /authorization identity/);
  assert.match(parse_plain(Buffer.from('u\0p')) as string, /authzid NUL user NUL password/);
  assert.match(parse_plain(Buffer.from('\0\0p')) as string, /empty/);
  assert.match(parse_plain(Buffer.alloc(2000, 0x61)) as string, /too long/);
});
