// SASL on the Kafka listener (`sluice start --sasl-users FILE`) with real clients: kafkajs and the
// SDK log in with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 and move messages; wrong passwords,
// unknown users and requests sent before logging in are refused with Kafka's errors while the
// broker stays up and logged-in clients are unaffected; kcat (librdkafka) logs in with SCRAM.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Kafka, logLevel, type SASLOptions } from 'kafkajs';
import { new_data_dir, start_broker_process, type BrokerProcess } from '../support/broker_process.ts';
import { AuthenticationError, Sluice, type SaslOptions } from '../../src/sdk/index.ts';
import { Writer } from '../../src/protocol/kafka/wire.ts';
import { write_request_header } from '../../src/protocol/kafka/header.ts';
import { message_codec } from '../../src/protocol/kafka/codec.ts';
import { METADATA } from '../../src/protocol/kafka/messages/03_metadata.ts';
import { SASL_HANDSHAKE } from '../../src/protocol/kafka/messages/17_sasl_handshake.ts';
import type { ApiSpec } from '../../src/protocol/kafka/schema.ts';
import { SLUICE_CLI } from '../support/cli.ts';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
const USERS = { alice: 'wonderland', 'bob,=odd': 'builder pass' };
const MECHANISMS = ['plain', 'scram-sha-256', 'scram-sha-512'] as const;
const KCAT = process.env.KCAT ?? 'kcat';
const RUN_TIMEOUT_MS = 30_000;

let broker: BrokerProcess;
let plain_broker: BrokerProcess;

before(async () => {
  const data_dir = new_data_dir('sasl');
  const users_file = path.join(data_dir, 'users.json');
  fs.writeFileSync(users_file, JSON.stringify({ users: USERS }), { mode: 0o600 });
  broker = await start_broker_process({ data_dir, args: ['--sasl-users', users_file] });
  plain_broker = await start_broker_process();
});

after(async () => {
  await broker?.stop();
  await plain_broker?.stop();
  for (const b of [broker, plain_broker]) if (b) fs.rmSync(b.data_dir, { recursive: true, force: true });
});

function kafkajs(sasl: SASLOptions, target = broker) {
  return new Kafka({
    brokers: [target.bootstrap],
    clientId: 'sasl-test',
    logLevel: logLevel.NOTHING,
    sasl,
    retry: { retries: 2, initialRetryTime: 100 },
  });
}

function sdk(sasl: SaslOptions, target = broker) {
  return new Sluice({
    brokers: [target.bootstrap],
    clientId: 'sasl-test',
    sasl,
    retry: { retries: 2, initialRetryTime: 100 },
  });
}

for (const mechanism of MECHANISMS) {
  test(`kafkajs with ${mechanism}: produce and consume; a wrong password is refused`, async () => {
    const topic = `kafkajs-${mechanism}`;
    const kafka = kafkajs({ mechanism, username: 'bob,=odd', password: USERS['bob,=odd'] } as SASLOptions);
    const producer = kafka.producer({ idempotent: true });
    await producer.connect();
    await producer.send({ topic, acks: -1, messages: [{ key: 'k', value: `via ${mechanism}` }] });
    await producer.disconnect();
    const consumer = kafka.consumer({ groupId: `g-${mechanism}`, maxWaitTimeInMs: 100 });
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    const got = await new Promise<string>(
      (resolve) => void consumer.run({ eachMessage: async ({ message }) => resolve(message.value!.toString()) }),
    );
    await consumer.disconnect();
    assert.equal(got, `via ${mechanism}`);

    const wrong = kafkajs({ mechanism, username: 'alice', password: 'not-it' } as SASLOptions).admin();
    await assert.rejects(
      wrong.connect(),
      (error: Error) => error.name === 'KafkaJSSASLAuthenticationError' || /SASL|authentication/i.test(error.message),
    );
  });

  test(`SDK with ${mechanism}: produce and consume; bad credentials: a non-retriable AuthenticationError`, async () => {
    const topic = `sdk-${mechanism}`;
    const client = sdk({ mechanism, username: 'alice', password: USERS.alice });
    const producer = client.producer();
    await producer.connect();
    await producer.send({ topic, messages: [{ key: 'k', value: 'hello' }] });
    await producer.disconnect();
    const consumer = client.consumer({ groupId: `sdk-${mechanism}` });
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    const got = await new Promise<string>(
      (resolve) => void consumer.run({ eachMessage: async ({ message }) => resolve(message.value!.toString()) }),
    );
    await consumer.disconnect();
    assert.equal(got, 'hello');

    for (const [username, password] of [
      ['alice', 'wrong'],
      ['nobody', 'wonderland'],
    ]) {
      const admin = sdk({ mechanism, username: username!, password: password! }).admin();
      await assert.rejects(admin.connect(), (error: unknown) => {
        assert.ok(error instanceof AuthenticationError, String(error));
        assert.equal(error.retriable, false);
        assert.equal(error.code, 58); // SASL_AUTHENTICATION_FAILED
        assert.match(error.message, /invalid credentials/);
        return true;
      });
      await admin.disconnect();
    }
  });
}

test('the SDK says so when the listener does not use SASL', async () => {
  const admin = sdk({ mechanism: 'scram-sha-256', username: 'alice', password: 'x' }, plain_broker).admin();
  await assert.rejects(admin.connect(), /does not use SASL/);
  await admin.disconnect();
});

test('a request before logging in closes the connection; the broker stays up for others', async () => {
  const raw = await raw_socket();
  raw.send(request(METADATA, 1, { topics: null }));
  assert.equal(await raw.next(), 'closed');
  const admin = sdk({ mechanism: 'scram-sha-512', username: 'alice', password: USERS.alice }).admin();
  await admin.connect();
  assert.ok((await admin.listTopics()).length >= 0);
  await admin.disconnect();
  assert.match(broker.output(), /before SASL authentication/);
});

/** A raw socket that sends frames and reads whole size-prefixed frames back (or learns it closed). */
async function raw_socket() {
  const socket = net.connect(broker.port, '127.0.0.1');
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let buffered = Buffer.alloc(0);
  let closed = false;
  const waiters: Array<() => void> = [];
  const wake = () => waiters.splice(0).forEach((w) => w());
  socket.on('data', (chunk: Buffer) => ((buffered = Buffer.concat([buffered, chunk])), wake()));
  socket.on('close', () => ((closed = true), wake()));
  socket.on('error', () => undefined);
  return {
    send(frame: Buffer) {
      const size = Buffer.alloc(4);
      size.writeInt32BE(frame.length);
      socket.write(Buffer.concat([size, frame]));
    },
    async next(): Promise<Buffer | 'closed'> {
      const deadline = Date.now() + 10_000;
      for (;;) {
        if (buffered.length >= 4 && buffered.length >= 4 + buffered.readInt32BE(0)) {
          const size = buffered.readInt32BE(0);
          const frame = buffered.subarray(4, 4 + size);
          buffered = buffered.subarray(4 + size);
          return frame;
        }
        if (closed) return 'closed';
        if (Date.now() > deadline) throw new Error('no frame within 10 s');
        await new Promise<void>((resolve) => (waiters.push(resolve), setTimeout(resolve, 100)));
      }
    },
    close: () => socket.destroy(),
  };
}

function request(api: ApiSpec, version: number, body: Record<string, unknown>, correlation_id = 1): Buffer {
  const writer = new Writer();
  write_request_header(writer, { api_key: api.api_key, api_version: version, correlation_id, client_id: 'raw' }, false);
  message_codec(api.request, version).encode(writer, body);
  return writer.to_buffer();
}

test('SaslHandshake v0 (bare tokens, pre Kafka 1.0) with PLAIN works; a wrong token closes the socket', async () => {
  for (const [password, expected] of [
    [USERS.alice, 'ok'],
    ['wrong', 'closed'],
  ] as const) {
    const raw = await raw_socket();
    raw.send(request(SASL_HANDSHAKE, 0, { mechanism: 'PLAIN' }));
    const handshake = await raw.next();
    assert.ok(handshake !== 'closed');
    assert.equal(handshake.readInt16BE(4), 0, 'handshake error code');
    raw.send(Buffer.from(`\0alice\0${password}`));
    const answer = await raw.next();
    if (expected === 'closed') {
      assert.equal(answer, 'closed');
    } else {
      assert.ok(answer !== 'closed' && answer.length === 0, 'an empty token on success');
      raw.send(request(METADATA, 1, { topics: null }, 2));
      const metadata = await raw.next();
      assert.ok(metadata !== 'closed' && metadata.readInt32BE(0) === 2, 'Metadata answered after the login');
    }
    raw.close();
  }
});

test('the CLI logs in with --sasl-username and SLUICE_SASL_PASSWORD', async () => {
  const cli = (password: string) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const args = [
        ...SLUICE_CLI,
        'topic',
        'list',
        '--bootstrap',
        broker.bootstrap,
        '--json',
        '--sasl-username',
        'alice',
        '--sasl-mechanism',
        'scram-sha-512',
      ];
      const child = spawn(process.execPath, args, {
        env: { ...process.env, SLUICE_SASL_PASSWORD: password },
        timeout: RUN_TIMEOUT_MS,
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.once('error', reject);
      child.once('close', (code) => resolve({ code, stdout, stderr }));
    });
  const ok = await cli(USERS.alice);
  assert.equal(ok.code, 0, ok.stderr);
  assert.ok(Array.isArray(JSON.parse(ok.stdout)));
  const refused = await cli('wrong');
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /invalid credentials/);
});

function kcat_missing(): string | null {
  const probe = spawnSync(KCAT, ['-V'], { encoding: 'utf8', timeout: 10_000 });
  return probe.error
    ? `kcat is not available (${probe.error.message}); install it (Debian/Ubuntu: apt-get install kcat)`
    : null;
}
const why_no_kcat = kcat_missing();
if (why_no_kcat && process.env.CI === 'true') throw new Error(`SASL kcat test cannot run under CI: ${why_no_kcat}`);

function run_kcat(args: string[], input: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(KCAT, args, {
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: RUN_TIMEOUT_MS,
      killSignal: 'SIGKILL',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

test(
  'kcat (librdkafka) logs in with SCRAM-SHA-256 and is refused with a wrong password',
  { skip: why_no_kcat ?? false },
  async () => {
    const login = (password: string) => [
      '-b',
      broker.bootstrap,
      '-X',
      'security.protocol=SASL_PLAINTEXT',
      '-X',
      'sasl.mechanisms=SCRAM-SHA-256',
      '-X',
      'sasl.username=alice',
      '-X',
      `sasl.password=${password}`,
      '-X',
      'socket.timeout.ms=10000',
    ];
    const produced = await run_kcat(
      [...login(USERS.alice), '-P', '-t', 'kcat-sasl', '-X', 'message.timeout.ms=20000'],
      'one\ntwo\nthree\n',
    );
    assert.equal(produced.code, 0, produced.stderr);
    const consumed = await run_kcat(
      [...login(USERS.alice), '-C', '-t', 'kcat-sasl', '-o', 'beginning', '-e', '-q'],
      '',
    );
    assert.equal(consumed.code, 0, consumed.stderr);
    assert.deepEqual(consumed.stdout.trim().split('\n'), ['one', 'two', 'three']);
    const refused = await run_kcat([...login('wrong'), '-L', '-m', '5'], '');
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /Authentication failed|SASL authentication error/i);
  },
);
