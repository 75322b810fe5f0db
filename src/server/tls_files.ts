// The broker's certificate and key (PEM files) for a TLS listener: read at start, and read again
// when either file changes, so a renewed certificate is served to new connections without a
// restart. A change that cannot be used (a file half written, a key that does not match) is
// logged and the last good pair kept.
import fs from 'node:fs';
import tls from 'node:tls';
import type { Logger } from '../core/index.ts';

export interface TlsFiles {
  /** The certificate chain, PEM. */
  cert_file: string;
  /** Its private key, PEM. */
  key_file: string;
}

/** TLS 1.2 and 1.3 only: the earlier versions have known weaknesses. */
export const TLS_MIN_VERSION = 'TLSv1.2';
/** A client that has not finished its handshake by then is disconnected (Node's default is 120 s). */
export const TLS_HANDSHAKE_TIMEOUT_MS = 10_000;
/** How often the files are checked for a change (fs.watchFile polls; it survives a file replaced by rename). */
const WATCH_INTERVAL_MS = 1_000;

/** The server options of `files`; throws with the file named when one cannot be read or used. */
export function tls_server_options(files: TlsFiles): tls.TlsOptions {
  const read = (file: string) => {
    try {
      return fs.readFileSync(file);
    } catch (error) {
      throw new Error(`cannot read ${file}: ${(error as Error).message}`);
    }
  };
  const options = { cert: read(files.cert_file), key: read(files.key_file), minVersion: TLS_MIN_VERSION } as const;
  try {
    tls.createSecureContext(options);
  } catch (error) {
    throw new Error(`${files.cert_file} and ${files.key_file} are not a usable certificate and key: ${String(error)}`);
  }
  return options;
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
  const watched = [files.cert_file, files.key_file];
  for (const file of watched) fs.watchFile(file, { interval: WATCH_INTERVAL_MS, persistent: false }, reload);
  return () => {
    for (const file of watched) fs.unwatchFile(file, reload);
  };
}
