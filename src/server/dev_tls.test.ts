// --dev-tls's certificates, made with node:crypto alone: they verify against their CA, name the
// hosts asked for, pass OpenSSL's strict checks, carry a real TLS handshake with a client
// certificate, and the CA is kept across starts until it nears its end.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { SILENT_LOGGER } from '../core/index.ts';
import { dev_tls } from './dev_tls.ts';
import { listening_server } from './tls_files.ts';
import { openssl_missing } from '../../test/support/test_ca.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-dev-tls-'));
after(() => fs.rmSync(dir, { recursive: true, force: true }));

const certificate = (file: string) => new crypto.X509Certificate(fs.readFileSync(file));

test('the broker and client certificates verify against the CA and name the hosts', () => {
  const files = dev_tls(dir, ['broker.example', '10.1.2.3', 'fd00::7'], Date.now());
  const ca = certificate(files.ca_file);
  const broker = certificate(files.cert_file);
  assert.ok(ca.ca && ca.verify(ca.publicKey));
  assert.ok(!broker.ca && broker.verify(ca.publicKey) && broker.checkIssued(ca));
  assert.ok(certificate(files.client_cert_file).verify(ca.publicKey));
  for (const host of ['localhost', 'broker.example', os.hostname()]) assert.equal(broker.checkHost(host), host);
  for (const ip of ['127.0.0.1', '10.1.2.3', '::1']) assert.equal(broker.checkIP(ip), ip);
  assert.equal(broker.checkIP('fd00:0:0:0:0:0:0:7'), 'fd00:0:0:0:0:0:0:7');
  assert.equal(fs.statSync(files.key_file).mode & 0o777, 0o600);
});

test('OpenSSL verifies them in strict mode', { skip: openssl_missing() ?? false }, () => {
  const files = dev_tls(dir, [], Date.now());
  for (const file of [files.cert_file, files.client_cert_file]) {
    const out = execFileSync('openssl', ['verify', '-x509_strict', '-CAfile', files.ca_file, file]).toString();
    assert.match(out, /: OK/);
  }
});

test('a TLS handshake with them, the client presenting its certificate', async () => {
  const files = dev_tls(dir, [], Date.now());
  const principals: Array<string | null> = [];
  const { server, stop_watching } = listening_server(
    { ...files, client_auth: 'required' },
    SILENT_LOGGER,
    (socket, who) => {
      principals.push(who);
      socket.end('hello');
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  const read = await new Promise<string>((resolve, reject) => {
    const socket = tls.connect({
      host: 'localhost',
      port,
      ca: fs.readFileSync(files.ca_file),
      cert: fs.readFileSync(files.client_cert_file),
      key: fs.readFileSync(files.client_key_file),
    });
    let text = '';
    socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
    socket.on('error', reject);
    socket.on('close', () => resolve(text));
  });
  stop_watching();
  server.close();
  assert.equal(read, 'hello');
  assert.deepEqual(principals, ['CN=sluice-dev-client']);
});

test('the CA is kept across starts, and replaced when it nears its end', () => {
  const first = dev_tls(dir, [], Date.now());
  const ca_pem = fs.readFileSync(first.ca_file, 'utf8');
  assert.equal(dev_tls(dir, [], Date.now()).new_ca, false);
  assert.equal(fs.readFileSync(first.ca_file, 'utf8'), ca_pem);
  const later = dev_tls(dir, [], Date.now() + 340 * 86_400_000);
  assert.equal(later.new_ca, true);
  assert.notEqual(fs.readFileSync(first.ca_file, 'utf8'), ca_pem);
});
