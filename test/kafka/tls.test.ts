// TLS on the Kafka listener (`--tls-cert`, `--tls-key`) against a broker process: kafkajs, the
// SDK and kcat produce and consume over it; a client that trusts another CA, a plaintext client, garbage
// instead of a handshake and a client offering only TLS 1.1 are refused without disturbing the
// others; a certificate replaced on disk is served to new connections without a restart.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { Kafka, logLevel } from 'kafkajs';
import { start_broker_process, type BrokerProcess } from '../support/broker_process.ts';
import { make_ca, make_server_cert, openssl_missing, type TestCa } from '../support/test_ca.ts';
import { Sluice } from '../../src/sdk/index.ts';
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';

const missing = openssl_missing();
let dir: string;
let ca: TestCa;
let other_ca: TestCa;
let cert_file: string;
let key_file: string;
let broker: BrokerProcess;

before(async () => {
  if (missing) return;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-tls-'));
  ca = make_ca(dir, 'test-ca');
  other_ca = make_ca(dir, 'other-ca');
  cert_file = path.join(dir, 'broker.pem');
  key_file = path.join(dir, 'broker.key');
  make_server_cert(ca, cert_file, key_file);
  broker = await start_broker_process({ args: ['--tls-cert', cert_file, '--tls-key', key_file] });
});

after(async () => {
  await broker?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const trusting = (authority: TestCa) => ({ ca: [fs.readFileSync(authority.cert_file)] });

function kafka(): Kafka {
  return new Kafka({
    brokers: [broker.bootstrap],
    clientId: 'tls-test',
    ssl: trusting(ca),
    logLevel: logLevel.NOTHING,
  });
}

/** The outcome of a TLS handshake with the listener: 'ok' or the client's error. */
function handshake(options: tls.ConnectionOptions): Promise<string> {
  return new Promise((resolve) => {
    const socket = tls.connect({ host: '127.0.0.1', port: broker.port, ...options }, () => {
      socket.end();
      resolve('ok');
    });
    socket.once('error', (error) => resolve(String(error)));
  });
}

test('kafkajs produces and consumes over TLS', { skip: missing ?? false }, async () => {
  const client = kafka();
  const admin = client.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'tls-orders', numPartitions: 2 }] });
  await admin.disconnect();
  const producer = client.producer();
  await producer.connect();
  const values = Array.from({ length: 100 }, (_, i) => `order-${i}`);
  await producer.send({ topic: 'tls-orders', messages: values.map((value) => ({ value })) });
  await producer.disconnect();
  const consumer = client.consumer({ groupId: 'tls-readers' });
  await consumer.connect();
  await consumer.subscribe({ topic: 'tls-orders', fromBeginning: true });
  const read: string[] = [];
  await consumer.run({ eachMessage: async ({ message }) => void read.push(message.value!.toString()) });
  const deadline = Date.now() + 20_000;
  while (read.length < values.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  await consumer.disconnect();
  assert.deepEqual(read.sort(), [...values].sort());
});

test('the SDK produces and consumes over TLS', { skip: missing ?? false }, async () => {
  const sluice = new Sluice({ brokers: [broker.bootstrap], clientId: 'tls-sdk', ssl: trusting(ca) });
  const producer = sluice.producer();
  await producer.send({ topic: 'tls-sdk', messages: [{ value: 'over tls' }] });
  await producer.disconnect();
  const consumer = sluice.consumer({ maxWaitTimeInMs: 50 });
  const read: string[] = [];
  await consumer.subscribe({ topic: 'tls-sdk', fromBeginning: true });
  await consumer.run({ eachMessage: async ({ message }) => void read.push(message.value!.toString()) });
  const deadline = Date.now() + 20_000;
  while (read.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  await consumer.disconnect();
  assert.deepEqual(read, ['over tls']);
});

/** kcat is a system tool: a laptop without it skips that test (.ci/run installs it). */
const kcat_missing = spawnSync('kcat', ['-V']).error ? 'kcat is not installed' : null;

test('kcat (librdkafka) produces and consumes over TLS', { skip: missing ?? kcat_missing ?? false }, async () => {
  const run = promisify(execFile);
  const tls_args = ['-b', broker.bootstrap, '-X', 'security.protocol=ssl', '-X', `ssl.ca.location=${ca.cert_file}`];
  const producing = run('kcat', [...tls_args, '-P', '-t', 'tls-kcat'], { timeout: 30_000 });
  producing.child.stdin!.end('one\ntwo\n');
  await producing;
  const { stdout } = await run('kcat', [...tls_args, '-C', '-t', 'tls-kcat', '-o', 'beginning', '-e', '-q'], {
    timeout: 30_000,
  });
  assert.deepEqual(stdout.trim().split('\n'), ['one', 'two']);
});

test(
  'a client that trusts another CA, or offers only TLS 1.1, is refused; the others go on',
  { skip: missing ?? false },
  async () => {
    assert.equal(await handshake(trusting(ca)), 'ok');
    assert.match(await handshake(trusting(other_ca)), /certificate/i);
    assert.notEqual(await handshake({ ...trusting(ca), minVersion: 'TLSv1', maxVersion: 'TLSv1.1' }), 'ok');
    assert.equal(await handshake(trusting(ca)), 'ok', 'the listener still serves');
  },
);

test(
  'a plaintext Kafka request, or garbage, instead of a handshake closes that connection only',
  { skip: missing ?? false },
  async () => {
    // ApiVersions v0 as a plaintext client sends it (size 14, key 18, version 0, correlation id 1,
    // client id "kaka"), then bytes that are nothing at all.
    const api_versions = Buffer.from('0000000e001200000000000100046b616b61', 'hex');
    for (const bytes of [api_versions, Buffer.alloc(4096, 0x5a)]) {
      const closed = await new Promise<boolean>((resolve) => {
        const socket = net.connect(broker.port, '127.0.0.1', () => socket.write(bytes));
        socket.on('data', () => undefined);
        socket.once('close', () => resolve(true));
        socket.once('error', () => undefined);
        setTimeout(() => resolve(false), 15_000).unref();
      });
      assert.ok(closed, 'the listener closed the connection');
    }
    const admin = kafka().admin();
    await admin.connect();
    assert.ok((await admin.listTopics()).includes('tls-orders'), 'the broker serves TLS clients as before');
    await admin.disconnect();
  },
);

test(
  'a certificate replaced on disk is served to new connections without a restart',
  { skip: missing ?? false },
  async () => {
    const renewed_ca = make_ca(dir, 'renewed-ca');
    make_server_cert(renewed_ca, cert_file, key_file);
    const deadline = Date.now() + 15_000;
    while ((await handshake(trusting(renewed_ca))) !== 'ok' && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 200));
    assert.equal(await handshake(trusting(renewed_ca)), 'ok', 'the new certificate is served');
    assert.match(await handshake(trusting(ca)), /certificate/i, 'the old CA no longer verifies it');
  },
);
