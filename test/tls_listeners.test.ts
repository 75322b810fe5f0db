// Every listener of one broker process on TLS with client certificates required (mTLS): kafkajs,
// kcat and the CLI present a certificate of the CA and go through; one from another CA, an expired
// one, or none is refused at the handshake and the broker serves the others on. The AMQP listener
// takes amqps (amqplib) and refuses a plaintext client; the HTTP listener is HTTPS only. And a
// broker started with --dev-tls, on certificates it made itself.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import amqp from 'amqplib';
import { Kafka, logLevel } from 'kafkajs';
import { start_broker_process, type BrokerProcess } from './support/broker_process.ts';
import { make_ca, make_client_cert, make_server_cert, openssl_missing, type TestCa } from './support/test_ca.ts';
import { SLUICE_CLI } from './support/cli.ts';

const missing = openssl_missing();
const run = promisify(execFile);
let dir: string;
let ca: TestCa;
let alice: TestCa;
let stranger: TestCa;
let expired: TestCa;
let broker: BrokerProcess;

before(async () => {
  if (missing) return;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-mtls-'));
  ca = make_ca(dir, 'test-ca');
  alice = make_client_cert(ca, 'alice', '/CN=alice');
  expired = make_client_cert(ca, 'expired', '/CN=alice', -1);
  stranger = make_client_cert(make_ca(dir, 'other-ca'), 'stranger', '/CN=alice');
  const server = { cert_file: path.join(dir, 'broker.pem'), key_file: path.join(dir, 'broker.key') };
  make_server_cert(ca, server.cert_file, server.key_file);
  const tls_args = ['--tls-cert', server.cert_file, '--tls-key', server.key_file, '--tls-ca', ca.cert_file];
  broker = await start_broker_process({ args: [...tls_args, '--tls-client-auth', 'required'] });
});

after(async () => {
  await broker?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** TLS options trusting the test CA and presenting `certificate` (null: none). */
function presenting(certificate: TestCa | null) {
  const trust = { ca: [fs.readFileSync(ca.cert_file)] };
  if (!certificate) return trust;
  return { ...trust, cert: fs.readFileSync(certificate.cert_file), key: fs.readFileSync(certificate.key_file) };
}

const kafka = (certificate: TestCa | null) =>
  new Kafka({
    brokers: [broker.bootstrap],
    clientId: 'mtls-test',
    ssl: presenting(certificate),
    logLevel: logLevel.NOTHING,
    retry: { retries: 0 },
  });

test('kafkajs with a certificate of the CA produces and reads back', { skip: missing ?? false }, async () => {
  const client = kafka(alice);
  const producer = client.producer();
  await producer.connect();
  await producer.send({ topic: 'mtls', messages: [{ value: 'one' }, { value: 'two' }] });
  await producer.disconnect();
  const admin = client.admin();
  await admin.connect();
  const offsets = await admin.fetchTopicOffsets('mtls');
  await admin.disconnect();
  assert.equal(offsets[0]!.high, '2');
});

test(
  "no certificate, another CA's or an expired one is refused; the broker serves on",
  { skip: missing ?? false },
  async () => {
    for (const certificate of [null, stranger, expired]) {
      const admin = kafka(certificate).admin();
      await assert.rejects(admin.connect(), Error, `refused: ${certificate?.cert_file ?? 'no certificate'}`);
    }
    const admin = kafka(alice).admin();
    await admin.connect();
    assert.ok((await admin.listTopics()).includes('mtls'));
    await admin.disconnect();
  },
);

const kcat_missing = spawnSync('kcat', ['-V']).error ? 'kcat is not installed' : null;

test('kcat (librdkafka) reads with its client certificate', { skip: missing ?? kcat_missing ?? false }, async () => {
  const args = ['-b', broker.bootstrap, '-X', 'security.protocol=ssl', '-X', `ssl.ca.location=${ca.cert_file}`];
  args.push('-X', `ssl.certificate.location=${alice.cert_file}`, '-X', `ssl.key.location=${alice.key_file}`);
  const { stdout } = await run('kcat', [...args, '-C', '-t', 'mtls', '-o', 'beginning', '-e', '-q'], {
    timeout: 30_000,
  });
  assert.deepEqual(stdout.trim().split('\n'), ['one', 'two']);
});

test('the CLI connects with --tls-ca, --tls-cert and --tls-key', { skip: missing ?? false }, async () => {
  const tls_args = ['--tls-ca', ca.cert_file, '--tls-cert', alice.cert_file, '--tls-key', alice.key_file];
  const { stdout } = await run(
    process.execPath,
    [...SLUICE_CLI, 'topic', 'list', '--bootstrap', broker.bootstrap, ...tls_args],
    {
      timeout: 30_000,
    },
  );
  assert.match(stdout, /mtls/);
});

test('AMQP over TLS (amqps) with amqplib; a plaintext AMQP client is closed', { skip: missing ?? false }, async () => {
  const connection = await amqp.connect(`amqps://guest:guest@${broker.amqp!}`, presenting(alice));
  const channel = await connection.createConfirmChannel();
  await channel.assertQueue('mtls-queue', { durable: true });
  channel.sendToQueue('mtls-queue', Buffer.from('over amqps'));
  await channel.waitForConfirms();
  const got = await channel.get('mtls-queue', { noAck: true });
  assert.equal(got && got.content.toString(), 'over amqps');
  await connection.close();
  const cli = ['amqp', 'queues', '--http', broker.http!, '--tls-ca', ca.cert_file];
  const { stdout } = await run(process.execPath, [...SLUICE_CLI, ...cli], { timeout: 30_000 });
  assert.match(stdout, /mtls-queue/, 'sluice amqp reads the admin API over HTTPS');
  await assert.rejects(amqp.connect(`amqp://guest:guest@${broker.amqp!}`), Error, 'plaintext AMQP is refused');
});

test('AMQP EXTERNAL: a client certificate logs in with no password', { skip: missing ?? false }, async () => {
  const connection = await amqp.connect(`amqps://${broker.amqp!}`, {
    ...presenting(alice),
    credentials: amqp.credentials.external(),
  });
  const channel = await connection.createConfirmChannel();
  await channel.assertQueue('external-queue', { durable: true });
  channel.sendToQueue('external-queue', Buffer.from('by certificate'));
  await channel.waitForConfirms();
  await connection.close();
  assert.match(broker.output(), /tls=mtls-required/, 'the broker asked for client certificates');
});

/** The status of GET `path` on the HTTP listener over HTTPS, or the error of a plaintext request. */
function get(path: string, secure: boolean): Promise<number | string> {
  const [host, port] = broker.http!.split(':');
  return new Promise((resolve) => {
    const options = { host, port: Number(port), path, timeout: 10_000 };
    const request = secure
      ? https.get({ ...options, ca: fs.readFileSync(ca.cert_file) }, (response) => resolve(response.statusCode ?? 0))
      : http.get(options, (response) => resolve(response.statusCode ?? 0));
    request.on('error', (error) => resolve(String(error)));
    request.on('timeout', () => request.destroy(new Error('timed out')));
  });
}

test('the HTTP listener answers over HTTPS only', { skip: missing ?? false }, async () => {
  assert.equal(await get('/healthz', true), 200);
  assert.equal(await get('/api/v1/topics', true), 200);
  assert.equal(typeof (await get('/healthz', false)), 'string', 'plain HTTP gets no answer');
  const socket = net.connect(Number(broker.http!.split(':')[1]), '127.0.0.1');
  await new Promise((resolve) => socket.on('connect', resolve));
  socket.destroy();
  assert.equal(await get('/healthz', true), 200, 'the listener serves on');
});

test('--dev-tls: a broker on its own local CA; kafkajs and kcat trust the CA it names', async () => {
  const dev = await start_broker_process({ args: ['--dev-tls'] });
  try {
    const ca_file = /clients trust (\S+);/.exec(dev.output())?.[1];
    assert.equal(ca_file, path.join(dev.data_dir, 'dev-tls', 'ca.pem'));
    const client = new Kafka({
      brokers: [dev.bootstrap],
      clientId: 'dev-tls',
      ssl: { ca: [fs.readFileSync(ca_file)] },
      logLevel: logLevel.NOTHING,
    });
    const producer = client.producer();
    await producer.connect();
    await producer.send({ topic: 'dev', messages: [{ value: 'trusted' }] });
    await producer.disconnect();
    if (kcat_missing) return;
    const args = ['-b', dev.bootstrap, '-X', 'security.protocol=ssl', '-X', `ssl.ca.location=${ca_file}`];
    const { stdout } = await run('kcat', [...args, '-C', '-t', 'dev', '-o', 'beginning', '-e', '-q'], {
      timeout: 30_000,
    });
    assert.equal(stdout.trim(), 'trusted');
  } finally {
    await dev.stop();
  }
});
