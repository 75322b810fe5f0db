// `sluice start --dev-tls`: a local certificate authority and certificates signed by it, made in
// the data directory with node:crypto alone, so TLS (and client certificates) can be tried on a
// laptop without openssl. For trying out only: the CA's key sits beside the certificates.
//
// The certificates are X.509 v3 written here in DER (RFC 5280): ECDSA P-256 with SHA-256, key
// identifiers, basic constraints and key usage marked as strict verifiers (OpenSSL's
// X509_V_FLAG_X509_STRICT, Python's default) expect them, and no extended key usage, so the
// broker's certificate also serves as its client certificate when it dials another broker.
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TlsFiles } from './tls_files.ts';

/** Where the files go, under the data directory. */
export const DEV_TLS_DIR = 'dev-tls';
const CA_VALID_DAYS = 365;
const LEAF_VALID_DAYS = 30;
/** A CA that expires sooner than this is replaced (clients must then trust the new one). */
const CA_RENEW_BEFORE_DAYS = 30;
const DAY_MS = 86_400_000;
const CA_NAME = 'Sluice development CA';
const ONE_HOUR_MS = 3_600_000;

export interface DevTls extends TlsFiles {
  ca_file: string;
  /** A client certificate and key signed by the same CA, for trying client certificates. */
  client_cert_file: string;
  client_key_file: string;
}

// ------------------------------------------------------------------ DER

function der(tag: number, ...content: Buffer[]): Buffer {
  const body = Buffer.concat(content);
  const n = body.length;
  const length = n < 0x80 ? [n] : n < 0x100 ? [0x81, n] : [0x82, n >> 8, n & 0xff];
  if (n > 0xffff) throw new Error('DER value too long');
  return Buffer.concat([Buffer.from([tag, ...length]), body]);
}

const sequence = (...items: Buffer[]) => der(0x30, ...items);
const octets = (bytes: Buffer) => der(0x04, bytes);
const bits = (bytes: Buffer, unused = 0) => der(0x03, Buffer.from([unused]), bytes);
const utf8 = (text: string) => der(0x0c, Buffer.from(text, 'utf8'));

function oid(dotted: string): Buffer {
  const [first, second, ...rest] = dotted.split('.').map(Number);
  const bytes = [first! * 40 + second!];
  for (const arc of rest) {
    const base128 = [arc & 0x7f];
    for (let value = arc >>> 7; value > 0; value >>>= 7) base128.unshift((value & 0x7f) | 0x80);
    bytes.push(...base128);
  }
  return der(0x06, Buffer.from(bytes));
}

/** UTCTime to 2049, GeneralizedTime after, as RFC 5280 says. */
function time(ms: number): Buffer {
  const iso = new Date(ms).toISOString(); // 2026-12-06T12:00:00.000Z
  const digits = iso.slice(0, 19).replace(/[-T:]/g, '');
  const year = new Date(ms).getUTCFullYear();
  return year < 2050 ? der(0x17, Buffer.from(`${digits.slice(2)}Z`)) : der(0x18, Buffer.from(`${digits}Z`));
}

const ECDSA_SHA256 = sequence(oid('1.2.840.10045.4.3.2'));
const name = (common_name: string) => sequence(der(0x31, sequence(oid('2.5.4.3'), utf8(common_name))));
const extension = (id: string, critical: boolean, value: Buffer) =>
  sequence(oid(id), ...(critical ? [der(0x01, Buffer.from([0xff]))] : []), octets(value));

/** The key identifier of a P-256 key: SHA-1 of its point, the last 65 bytes of its SPKI (RFC 5280 4.2.1.2). */
function key_id(spki: Buffer): Buffer {
  return crypto
    .createHash('sha1')
    .update(spki.subarray(spki.length - 65))
    .digest();
}

// ------------------------------------------------------------------ certificates

interface Issued {
  common_name: string;
  cert_pem: string;
  key: crypto.KeyObject;
  spki: Buffer;
}

interface Subject {
  common_name: string;
  is_ca: boolean;
  valid_days: number;
  /** DNS names and IP addresses the certificate is for (servers). */
  hosts: readonly string[];
}

function alt_names(hosts: readonly string[]): Buffer {
  const names = hosts.map((host) =>
    net.isIP(host) ? der(0x87, ip_bytes(host)) : der(0x82, Buffer.from(host, 'ascii')),
  );
  return sequence(...names);
}

function ip_bytes(ip: string): Buffer {
  if (net.isIPv4(ip)) return Buffer.from(ip.split('.').map(Number));
  const [head, tail] = ip.split('::') as [string, string | undefined];
  const groups = (part: string | undefined) => (part ? part.split(':') : []);
  const missing = 8 - groups(head).length - groups(tail).length;
  const all =
    tail === undefined ? groups(head) : [...groups(head), ...Array<string>(missing).fill('0'), ...groups(tail)];
  return Buffer.from(all.flatMap((group) => [parseInt(group, 16) >> 8, parseInt(group, 16) & 0xff]));
}

/** A certificate for `subject`, signed by `issuer` (itself when null). */
function issue(subject: Subject, issuer: Issued | null, now_ms: number): Issued {
  const key = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey;
  const spki = crypto.createPublicKey(key).export({ type: 'spki', format: 'der' });
  const serial = crypto.randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x40; // positive, sixteen bytes
  const usage = subject.is_ca ? bits(Buffer.from([0x86]), 1) : bits(Buffer.from([0x80]), 7);
  const extensions = [
    extension('2.5.29.19', true, subject.is_ca ? sequence(der(0x01, Buffer.from([0xff]))) : sequence()),
    extension('2.5.29.15', true, usage),
    extension('2.5.29.14', false, octets(key_id(spki))),
    extension('2.5.29.35', false, sequence(der(0x80, key_id(issuer?.spki ?? spki)))),
    ...(subject.hosts.length > 0 ? [extension('2.5.29.17', false, alt_names(subject.hosts))] : []),
  ];
  const tbs = sequence(
    der(0xa0, der(0x02, Buffer.from([2]))),
    der(0x02, serial),
    ECDSA_SHA256,
    name(issuer?.common_name ?? subject.common_name),
    sequence(time(now_ms - ONE_HOUR_MS), time(now_ms + subject.valid_days * DAY_MS)),
    name(subject.common_name),
    spki,
    der(0xa3, sequence(...extensions)),
  );
  const signature = crypto.sign('sha256', tbs, issuer?.key ?? key);
  const cert = sequence(tbs, ECDSA_SHA256, bits(signature));
  const base64 = cert.toString('base64').replace(/(.{64})/g, '$1\n');
  const cert_pem = `-----BEGIN CERTIFICATE-----\n${base64.trimEnd()}\n-----END CERTIFICATE-----\n`;
  return { common_name: subject.common_name, cert_pem, key, spki };
}

// ------------------------------------------------------------------ files

function write(file: string, text: string, mode: number): void {
  fs.writeFileSync(`${file}.new`, text, { mode });
  fs.renameSync(`${file}.new`, file);
}

const key_pem = (key: crypto.KeyObject) => key.export({ type: 'pkcs8', format: 'pem' }) as string;

/** The CA in `dir` when it is there and not about to expire, else a new one written there. */
function certificate_authority(dir: string, now_ms: number): { ca: Issued; renewed: boolean } {
  const cert_file = path.join(dir, 'ca.pem');
  const key_file = path.join(dir, 'ca.key');
  if (fs.existsSync(cert_file) && fs.existsSync(key_file)) {
    const cert_pem = fs.readFileSync(cert_file, 'utf8');
    const certificate = new crypto.X509Certificate(cert_pem);
    if (Date.parse(certificate.validTo) - now_ms > CA_RENEW_BEFORE_DAYS * DAY_MS) {
      const key = crypto.createPrivateKey(fs.readFileSync(key_file));
      const spki = certificate.publicKey.export({ type: 'spki', format: 'der' });
      return { ca: { common_name: CA_NAME, cert_pem, key, spki }, renewed: false };
    }
  }
  const ca = issue({ common_name: CA_NAME, is_ca: true, valid_days: CA_VALID_DAYS, hosts: [] }, null, now_ms);
  write(key_file, key_pem(ca.key), 0o600);
  write(cert_file, ca.cert_pem, 0o644);
  return { ca, renewed: true };
}

/**
 * The development CA in `<data_dir>/dev-tls` (kept across starts, so clients keep trusting it) and
 * a broker certificate for localhost, this machine's name, loopback and `hosts`, plus a client
 * certificate, both made again at every start.
 */
export function dev_tls(data_dir: string, hosts: readonly string[], now_ms: number): DevTls & { new_ca: boolean } {
  const dir = path.join(data_dir, DEV_TLS_DIR);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const { ca, renewed } = certificate_authority(dir, now_ms);
  const names = [...new Set(['localhost', os.hostname(), '127.0.0.1', '::1', ...hosts])];
  const broker = issue(
    { common_name: 'sluice-broker', is_ca: false, valid_days: LEAF_VALID_DAYS, hosts: names },
    ca,
    now_ms,
  );
  const client = issue(
    { common_name: 'sluice-dev-client', is_ca: false, valid_days: LEAF_VALID_DAYS, hosts: [] },
    ca,
    now_ms,
  );
  const files = {
    cert_file: path.join(dir, 'broker.pem'),
    key_file: path.join(dir, 'broker.key'),
    ca_file: path.join(dir, 'ca.pem'),
    client_cert_file: path.join(dir, 'client.pem'),
    client_key_file: path.join(dir, 'client.key'),
  };
  write(files.key_file, key_pem(broker.key), 0o600);
  write(files.cert_file, broker.cert_pem, 0o644);
  write(files.client_key_file, key_pem(client.key), 0o600);
  write(files.client_cert_file, client.cert_pem, 0o644);
  return { ...files, new_ca: renewed };
}
