// Certificates for the TLS tests, made with Debian's openssl in a directory of the test's: a CA,
// a server certificate it signs for 127.0.0.1 and localhost, and client certificates. Never used outside tests.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export interface TestCa {
  cert_file: string;
  key_file: string;
}

/** Why the TLS tests cannot run here (no openssl), or null. */
export function openssl_missing(): string | null {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return null;
  } catch {
    if (process.env.CI === 'true') throw new Error('openssl is missing (CI installs it: .ci/run)');
    return 'openssl is not installed';
  }
}

const openssl = (args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

export function make_ca(dir: string, name: string): TestCa {
  const ca = { cert_file: path.join(dir, `${name}.pem`), key_file: path.join(dir, `${name}.key`) };
  openssl([
    'req',
    '-x509',
    ...EC_KEY,
    '-keyout',
    ca.key_file,
    '-out',
    ca.cert_file,
    '-days',
    '2',
    '-subj',
    `/CN=${name}`,
  ]);
  return ca;
}

/** A server certificate for 127.0.0.1 and localhost signed by `ca`, written to `cert_file` and `key_file`. */
export function make_server_cert(ca: TestCa, cert_file: string, key_file: string): void {
  make_cert(ca, cert_file, key_file, '/CN=sluice-test-broker', 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
}

/**
 * A client certificate for `subject` (such as "/O=Acme/CN=alice") signed by `ca`, beside its CA's
 * files, valid for `days` (-1: expired since yesterday).
 */
export function make_client_cert(ca: TestCa, name: string, subject: string, days = 2): TestCa {
  const dir = path.dirname(ca.cert_file);
  const files = { cert_file: path.join(dir, `${name}.pem`), key_file: path.join(dir, `${name}.key`) };
  make_cert(ca, files.cert_file, files.key_file, subject, null, days);
  return files;
}

function make_cert(
  ca: TestCa,
  cert_file: string,
  key_file: string,
  subject: string,
  extensions: string | null,
  days = 2,
): void {
  const dir = path.dirname(cert_file);
  const request = path.join(dir, 'request.csr');
  const extension_file = path.join(dir, 'request.ext');
  if (extensions) fs.writeFileSync(extension_file, extensions);
  openssl(['req', ...EC_KEY, '-keyout', `${key_file}.new`, '-out', request, '-subj', subject]);
  openssl([
    'x509',
    '-req',
    '-in',
    request,
    '-CA',
    ca.cert_file,
    '-CAkey',
    ca.key_file,
    '-CAcreateserial',
    '-out',
    `${cert_file}.new`,
    '-days',
    String(days),
    ...(extensions ? ['-extfile', extension_file] : []),
  ]);
  // Replaced by rename, as a certificate renewal would: a watcher never reads half a file.
  fs.renameSync(`${key_file}.new`, key_file);
  fs.renameSync(`${cert_file}.new`, cert_file);
}
