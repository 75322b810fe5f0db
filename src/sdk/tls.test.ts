// The SDK over TLS: a TLS endpoint (a terminating proxy with a self-signed certificate made by
// openssl) in front of a broker that advertises the proxy's address.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import tls from 'node:tls';
import { ConnectionError, Sluice } from './index.ts';
import { start_broker } from '../compose/start_broker.ts';
import { temp_dir } from '../../test/support/storage.ts';

function self_signed(dir: string): { key: Buffer; cert: Buffer } {
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ],
    { stdio: 'ignore' },
  );
  return { key: fs.readFileSync(key), cert: fs.readFileSync(cert) };
}

test('the SDK produces and consumes over TLS, and refuses an untrusted certificate', { timeout: 60_000 }, async () => {
  const dir = temp_dir('sdk-tls');
  const { key, cert } = self_signed(dir);
  let upstream_port = 0;
  const proxy = tls.createServer({ key, cert }, (client) => {
    const upstream = net.connect(upstream_port, '127.0.0.1');
    client.pipe(upstream).pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end);
    upstream.on('error', end);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const proxy_port = (proxy.address() as net.AddressInfo).port;
  const broker = await start_broker({
    data_dir: path.join(dir, 'data'),
    kafka: { host: '127.0.0.1', port: 0 },
    advertise: { host: '127.0.0.1', port: proxy_port },
  });
  upstream_port = broker.kafka.bound_address.port;
  try {
    const sluice = new Sluice({ brokers: [`127.0.0.1:${proxy_port}`], clientId: 'tls-test', ssl: { ca: cert } });
    const producer = sluice.producer();
    await producer.send({ topic: 'secure', messages: [{ key: 'a', value: 'over tls' }] });
    await producer.disconnect();
    const consumer = sluice.consumer({ groupId: 'tls-readers', heartbeatInterval: 200 });
    await consumer.subscribe({ topics: ['secure'], fromBeginning: true });
    const got = await new Promise<string>(
      (resolve) => void consumer.run({ eachMessage: async ({ message }) => resolve(message.value!.toString()) }),
    );
    await consumer.disconnect();
    assert.equal(got, 'over tls');

    const untrusting = new Sluice({
      brokers: [`127.0.0.1:${proxy_port}`],
      ssl: true,
      retry: { retries: 1, initialRetryTime: 50 },
    });
    const admin = untrusting.admin();
    const started = Date.now();
    await assert.rejects(
      admin.connect(),
      (error: unknown) => error instanceof ConnectionError && /certificate/i.test(error.message),
    );
    assert.ok(Date.now() - started < 5_000, 'refused promptly');
  } finally {
    await broker.close();
    await new Promise<void>((resolve) => proxy.close(() => resolve()));
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
