// The listeners' TLS server with client certificates (mTLS): a certificate's subject becomes the
// client's principal, one signed by another CA is closed before the listener sees it, and
// 'required' refuses a client without one. Real handshakes on loopback; certificates from openssl.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { SILENT_LOGGER } from '../core/index.ts';
import {
  make_ca,
  make_client_cert,
  make_server_cert,
  openssl_missing,
  type TestCa,
} from '../../test/support/test_ca.ts';
import { type ClientAuth, listening_server, tls_peer_options, tls_server_options, type TlsFiles } from './tls_files.ts';

const missing = openssl_missing();
let dir: string;
let ca: TestCa;
let alice: TestCa;
let stranger: TestCa;
let server_files: TlsFiles;

before(() => {
  if (missing) return;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-mtls-'));
  ca = make_ca(dir, 'test-ca');
  const other_ca = make_ca(dir, 'other-ca');
  alice = make_client_cert(ca, 'alice', '/O=Acme, Inc./CN=alice');
  stranger = make_client_cert(other_ca, 'stranger', '/CN=stranger');
  server_files = {
    cert_file: path.join(dir, 'broker.pem'),
    key_file: path.join(dir, 'broker.key'),
    ca_file: ca.cert_file,
  };
  make_server_cert(ca, server_files.cert_file, server_files.key_file);
});

after(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** A server in `client_auth` mode; `accepted` lists the principals it was handed. */
async function serve(
  client_auth: ClientAuth,
): Promise<{ port: number; accepted: Array<string | null>; close(): void }> {
  const accepted: Array<string | null> = [];
  const { server, stop_watching } = listening_server({ ...server_files, client_auth }, SILENT_LOGGER, (socket, who) => {
    accepted.push(who);
    socket.end('hello');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () => {
    stop_watching();
    server.close();
  };
  return { port: (server.address() as net.AddressInfo).port, accepted, close };
}

/** What a client presenting `certificate` reads: the server's greeting, or the error that ended it. */
function connect(port: number, certificate: TestCa | null): Promise<string> {
  return new Promise((resolve) => {
    const options = certificate
      ? { cert: fs.readFileSync(certificate.cert_file), key: fs.readFileSync(certificate.key_file) }
      : {};
    const socket = tls.connect({ host: '127.0.0.1', port, ca: fs.readFileSync(ca.cert_file), ...options });
    let read = '';
    socket.on('data', (chunk: Buffer) => (read += chunk.toString()));
    socket.on('error', (error) => resolve(`error: ${error.message}`));
    socket.on('close', () => resolve(read || 'closed'));
  });
}

test(
  'requested: a certificate names the principal (RFC 2253), none is let through, another CA is closed',
  { skip: missing ?? false },
  async () => {
    const server = await serve('requested');
    try {
      assert.equal(await connect(server.port, alice), 'hello');
      assert.equal(await connect(server.port, null), 'hello');
      assert.notEqual(await connect(server.port, stranger), 'hello');
      assert.deepEqual(server.accepted, ['CN=alice,O=Acme\\, Inc.', null]);
    } finally {
      server.close();
    }
  },
);

test(
  "required: a client without a certificate, or with another CA's, is refused in the handshake",
  { skip: missing ?? false },
  async () => {
    const server = await serve('required');
    try {
      assert.notEqual(await connect(server.port, null), 'hello');
      assert.notEqual(await connect(server.port, stranger), 'hello');
      assert.equal(await connect(server.port, alice), 'hello');
      assert.deepEqual(server.accepted, ['CN=alice,O=Acme\\, Inc.']);
    } finally {
      server.close();
    }
  },
);

test(
  'client certificates need a CA; a broker dialing a peer presents its own certificate only when asked',
  { skip: missing ?? false },
  () => {
    assert.throws(
      () => tls_server_options({ ...server_files, ca_file: null, client_auth: 'required' }),
      /need a CA file/,
    );
    const plain = tls_peer_options({ ...server_files, client_auth: 'none' });
    assert.equal(plain.cert, undefined);
    assert.ok(plain.ca);
    const mutual = tls_peer_options({ ...server_files, client_auth: 'required' });
    assert.ok(mutual.cert && mutual.key);
  },
);
