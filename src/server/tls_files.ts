// The broker's certificate and key (PEM files) for a TLS listener: read at start, and read again
// when either file changes, so a renewed certificate is served to new connections without a
// restart. A change that cannot be used (a file half written, a key that does not match) is
// logged and the last good pair kept.
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import tls from 'node:tls';
import type { Logger } from '../core/index.ts';

export interface TlsFiles {
  /** The certificate chain, PEM. */
  cert_file: string;
  /** Its private key, PEM. */
  key_file: string;
  /**
   * The certificate authorities (PEM) trusted for client certificates and for the other brokers'
   * certificates; absent: the system's, and no client certificates are asked for.
   */
  ca_file?: string | null;
  /** Whether clients present a certificate (mTLS): not asked, asked and checked when given, or required. */
  client_auth?: ClientAuth;
}

export type ClientAuth = 'none' | 'requested' | 'required';

/** TLS 1.2 and 1.3 only: the earlier versions have known weaknesses. */
export const TLS_MIN_VERSION = 'TLSv1.2';
/** A client that has not finished its handshake by then is disconnected (Node's default is 120 s). */
export const TLS_HANDSHAKE_TIMEOUT_MS = 10_000;
/** How often the files are checked for a change (fs.watchFile polls; it survives a file replaced by rename). */
const WATCH_INTERVAL_MS = 1_000;

function read(file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (error) {
    throw new Error(`cannot read ${file}: ${(error as Error).message}`);
  }
}

/** The server options of `files`; throws with the file named when one cannot be read or used. */
export function tls_server_options(files: TlsFiles): tls.TlsOptions {
  const client_auth = files.client_auth ?? 'none';
  if (client_auth !== 'none' && !files.ca_file) throw new Error(`client certificates (${client_auth}) need a CA file`);
  const options: tls.TlsOptions = {
    cert: read(files.cert_file),
    key: read(files.key_file),
    minVersion: TLS_MIN_VERSION,
    ...(files.ca_file ? { ca: read(files.ca_file) } : {}),
    // 'requested' lets a client without a certificate through; one with a bad certificate is
    // closed by the listener (checked_client), which sees `authorized`.
    requestCert: client_auth !== 'none',
    rejectUnauthorized: client_auth === 'required',
  };
  try {
    tls.createSecureContext(options);
  } catch (error) {
    throw new Error(`${files.cert_file} and ${files.key_file} are not a usable certificate and key: ${String(error)}`);
  }
  return options;
}

/**
 * How this broker connects to another over TLS: trusting `ca_file` (else the system's CAs) and
 * presenting its own certificate, which the other's listener checks when it asks for one. Read at
 * each dial, so a renewed certificate is used from the next connection on.
 */
export function tls_peer_options(files: TlsFiles): tls.ConnectionOptions {
  return {
    minVersion: TLS_MIN_VERSION,
    ...(files.ca_file ? { ca: read(files.ca_file) } : {}),
    ...((files.client_auth ?? 'none') !== 'none' ? { cert: read(files.cert_file), key: read(files.key_file) } : {}),
  };
}

/**
 * The client's identity on a TLS socket: its certificate's subject as an RFC 2253 name ("CN=alice,O=Acme",
 * as Kafka's SSL principal), or null without a certificate. A certificate the CA did not sign
 * closes the socket and answers undefined: the listener then drops the connection.
 */
export function checked_client(socket: tls.TLSSocket): string | null | undefined {
  const certificate = socket.getPeerX509Certificate();
  if (!certificate) return null;
  if (!socket.authorized) {
    socket.destroy();
    return undefined;
  }
  return rfc2253(certificate);
}

/** A certificate's subject as RFC 2253 writes it (Node gives one attribute a line, most significant first). */
function rfc2253(certificate: crypto.X509Certificate): string {
  return certificate.subject.split('\n').reverse().join(',');
}

/**
 * The principal this broker has when it presents its own certificate to another broker (client
 * certificates asked for), or null when it presents none. Brokers act on one another's behalf, so
 * it is a super user when authorization is on.
 */
export function own_principal(files: TlsFiles): string | null {
  if ((files.client_auth ?? 'none') === 'none') return null;
  return rfc2253(new crypto.X509Certificate(read(files.cert_file)));
}

/** Serves the files' latest good pair on `server`; returns what stops watching them. */
export function reload_on_change(server: tls.Server, files: TlsFiles, logger: Logger): () => void {
  const reload = () => {
    try {
      server.setSecureContext(tls_server_options(files));
      logger.info({ cert_file: files.cert_file }, 'TLS certificate reloaded');
    } catch (error) {
      logger.warn({ error: String(error) }, 'TLS certificate change not usable; serving the previous one');
    }
  };
  const watched = [files.cert_file, files.key_file, ...(files.ca_file ? [files.ca_file] : [])];
  for (const file of watched) fs.watchFile(file, { interval: WATCH_INTERVAL_MS, persistent: false }, reload);
  return () => {
    for (const file of watched) fs.unwatchFile(file, reload);
  };
}

/** A listener's server: TLS with `files` (watched for changes), else plain TCP with `plain`'s options. */
export interface ListeningServer {
  server: net.Server;
  /** Stops watching the files (a no-op for plain TCP). */
  stop_watching: () => void;
}

/**
 * The server of a listener that takes TLS when `files` are given. `accept` gets each connection
 * with its client's certificate subject (null: none, or plain TCP); a handshake that fails
 * (garbage, a plaintext client, an old TLS version, a certificate from another CA) closes its
 * socket only, and `accept` never sees it.
 */
export function listening_server(
  files: TlsFiles | null,
  logger: Logger,
  accept: (socket: net.Socket, client: string | null) => void,
  plain: net.ServerOpts = {},
): ListeningServer {
  if (!files) return { server: net.createServer(plain, (socket) => accept(socket, null)), stop_watching: () => {} };
  const server = tls.createServer(
    { ...tls_server_options(files), handshakeTimeout: TLS_HANDSHAKE_TIMEOUT_MS },
    (socket) => {
      const client = checked_client(socket);
      if (client !== undefined) accept(socket, client);
    },
  );
  return { server, stop_watching: reload_on_change(server, files, logger) };
}
