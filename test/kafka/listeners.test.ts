// Several Kafka listeners on one broker process: plaintext without logins on one port and SASL over
// TLS on another, advertised under another name. kafkajs and kcat use each; Metadata and
// FindCoordinator on each listener name that listener's address. A listener whose protocol lacks
// what it needs (TLS files, users) stops the start with the reason.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { new_data_dir, start_broker_process, type BrokerProcess } from '../support/broker_process.ts';
import { SLUICE_CLI } from '../support/cli.ts';
import { openssl_missing } from '../support/test_ca.ts';
import { Connection } from '../../src/protocol/kafka/client_connection.ts';
import { METADATA } from '../../src/protocol/kafka/messages/03_metadata.ts';
import { FIND_COORDINATOR } from '../../src/protocol/kafka/messages/10_find_coordinator.ts';
import { sasl_connection } from '../support/sasl_connection.ts';

const missing = openssl_missing();
const kcat_missing = spawnSync('kcat', ['-V']).error !== undefined;
const USERS = { alice: 'alice-pw' };
let data_dir: string;
let broker: BrokerProcess;
let plain_port: number;
let secure_port: number;
let ca_file: string;

function free_port(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

before(async () => {
  if (missing) return;
  data_dir = new_data_dir('listeners');
  const users_file = path.join(data_dir, 'users.json');
  fs.writeFileSync(users_file, JSON.stringify({ users: USERS }), { mode: 0o600 });
  [plain_port, secure_port] = [await free_port(), await free_port()];
  const args = [
    ...['--dev-tls', '--sasl-users', users_file],
    ...['--listeners', `PLAINTEXT://127.0.0.1:${plain_port},SASL_SSL://127.0.0.1:${secure_port}`],
    ...['--advertised-listeners', `SASL_SSL://localhost:${secure_port}`],
  ];
  broker = await start_broker_process({ data_dir, args });
  ca_file = path.join(data_dir, 'dev-tls', 'ca.pem');
});

after(async () => {
  await broker?.stop();
  if (data_dir) fs.rmSync(data_dir, { recursive: true, force: true });
});

/** The brokers Metadata names and the coordinator FindCoordinator names, on one connection. */
async function addresses(connection: Connection) {
  const metadata = await connection.call(METADATA, 9, { topics: null, allow_auto_topic_creation: false });
  const coordinator = await connection.call(FIND_COORDINATOR, 3, { key: 'g', key_type: 0 });
  connection.close();
  return {
    brokers: metadata.brokers.map((b) => `${b.host}:${b.port}`),
    coordinator: `${coordinator.host}:${coordinator.port}`,
  };
}

test('each listener advertises its own address', { skip: missing ?? false }, async () => {
  assert.match(broker.output(), new RegExp(`listeners=PLAINTEXT://127.0.0.1:${plain_port},SASL_SSL://localhost:`));
  const plain = await addresses(await Connection.connect('127.0.0.1', plain_port));
  assert.deepEqual(plain, { brokers: [`127.0.0.1:${plain_port}`], coordinator: `127.0.0.1:${plain_port}` });
  const tls = { ca: fs.readFileSync(ca_file), servername: 'localhost' };
  const secure = await addresses(
    await sasl_connection(
      `127.0.0.1:${secure_port}`,
      { mechanism: 'scram-sha-256', username: 'alice', password: USERS.alice },
      undefined,
      tls,
    ),
  );
  assert.deepEqual(secure, { brokers: [`localhost:${secure_port}`], coordinator: `localhost:${secure_port}` });
});

test(
  'kafkajs on both listeners: plaintext without a login, SASL over TLS with one',
  { skip: missing ?? false },
  async () => {
    const plain = new Kafka({ brokers: [`127.0.0.1:${plain_port}`], clientId: 'plain', logLevel: logLevel.NOTHING });
    const secure = new Kafka({
      brokers: [`localhost:${secure_port}`],
      clientId: 'secure',
      logLevel: logLevel.NOTHING,
      ssl: { ca: [fs.readFileSync(ca_file)] },
      sasl: { mechanism: 'scram-sha-512', username: 'alice', password: USERS.alice },
    });
    const producer = plain.producer();
    await producer.connect();
    await producer.send({ topic: 'two-doors', messages: [{ value: 'in by the back' }] });
    await producer.disconnect();
    const consumer = secure.consumer({ groupId: 'two-doors' });
    await consumer.connect();
    await consumer.subscribe({ topic: 'two-doors', fromBeginning: true });
    const value = await new Promise<string>((resolve) => {
      void consumer.run({ eachMessage: async ({ message }) => resolve(message.value!.toString()) });
    });
    await consumer.disconnect();
    assert.equal(value, 'in by the back');
    // The TLS listener does not take plaintext, nor the plaintext one a TLS handshake's login.
    const wrong = new Kafka({
      brokers: [`localhost:${secure_port}`],
      clientId: 'wrong',
      logLevel: logLevel.NOTHING,
      retry: { retries: 0 },
      connectionTimeout: 2_000,
    });
    await assert.rejects(wrong.admin().connect());
  },
);

test('kcat lists each listener under its own address', { skip: (missing ?? kcat_missing) || false }, async () => {
  const run = promisify(execFile);
  const plain = await run('kcat', ['-b', `127.0.0.1:${plain_port}`, '-L', '-J'], { timeout: 30_000 });
  assert.equal(JSON.parse(plain.stdout).brokers[0].name, `127.0.0.1:${plain_port}`);
  const secure = await run(
    'kcat',
    [
      ...['-b', `localhost:${secure_port}`, '-L', '-J'],
      ...['-X', 'security.protocol=sasl_ssl', '-X', `ssl.ca.location=${ca_file}`, '-X', 'sasl.mechanisms=PLAIN'],
      ...['-X', 'sasl.username=alice', '-X', `sasl.password=${USERS.alice}`],
    ],
    { timeout: 30_000 },
  );
  assert.equal(JSON.parse(secure.stdout).brokers[0].name, `localhost:${secure_port}`);
});

test('a listener without what its protocol needs stops the start with the reason', async () => {
  const start = (args: string[]) =>
    spawnSync(process.execPath, [...SLUICE_CLI, 'start', '--data', new_data_dir('listeners-bad'), ...args], {
      encoding: 'utf8',
      timeout: 30_000,
    });
  const cases: Array<[string[], RegExp]> = [
    [['--listeners', 'SSL://127.0.0.1:0'], /the SSL listener needs --tls-cert and --tls-key/],
    [['--listeners', 'SASL_PLAINTEXT://127.0.0.1:0'], /the SASL_PLAINTEXT listener needs users/],
    [['--listeners', 'HTTP://127.0.0.1:0'], /expected PROTOCOL:\/\/HOST:PORT/],
    [['--listeners', 'PLAINTEXT://127.0.0.1:0,PLAINTEXT://127.0.0.1:0'], /PLAINTEXT is named twice/],
    [['--listeners', 'PLAINTEXT://127.0.0.1:0', '--advertised-listeners', 'SSL://h:1'], /SSL is not one of/],
  ];
  for (const [args, reason] of cases) {
    const result = start(args);
    assert.notEqual(result.status, 0, args.join(' '));
    assert.match(result.stderr, reason);
  }
});
