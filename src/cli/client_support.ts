// What every client command shares: the SDK client from the common flags (bootstrap, TLS, SASL), an
// admin session, a progress bar on standard error for people, and output as text or JSON lines.
import fs from 'node:fs';
import type tls from 'node:tls';
import cliProgress from 'cli-progress';
import { Sluice, type Admin, type SaslOptions } from '../sdk/index.ts';

export interface ClientFlags {
  bootstrap: string;
  json?: boolean;
  saslUsername?: string;
  saslMechanism?: string;
  tls?: boolean;
  tlsCa?: string;
  tlsCert?: string;
  tlsKey?: string;
}

/** TLS from --tls, --tls-ca and --tls-cert/--tls-key: any of them turns it on. */
export function tls_of(flags: ClientFlags): tls.ConnectionOptions | undefined {
  if (!flags.tls && !flags.tlsCa && !flags.tlsCert && !flags.tlsKey) return undefined;
  if (!flags.tlsCert !== !flags.tlsKey) throw new Error('--tls-cert and --tls-key go together');
  const read = (file: string | undefined) => (file ? fs.readFileSync(file) : undefined);
  return { ca: read(flags.tlsCa), cert: read(flags.tlsCert), key: read(flags.tlsKey) };
}

/**
 * The SASL login from --sasl-username/--sasl-mechanism and SLUICE_SASL_PASSWORD (never a flag: argv is visible to every
 * user).
 */
function sasl_of(flags: ClientFlags): SaslOptions | undefined {
  if (!flags.saslUsername) return undefined;
  const password = process.env.SLUICE_SASL_PASSWORD;
  if (!password) throw new Error('--sasl-username needs the password in the SLUICE_SASL_PASSWORD environment variable');
  return {
    mechanism: (flags.saslMechanism ?? 'scram-sha-256') as SaslOptions['mechanism'],
    username: flags.saslUsername,
    password,
  };
}

export function client(flags: ClientFlags): Sluice {
  return new Sluice({
    brokers: flags.bootstrap.split(','),
    clientId: 'sluice-cli',
    retry: { retries: 3 },
    sasl: sasl_of(flags),
    ssl: tls_of(flags),
  });
}

export async function with_admin<T>(flags: ClientFlags, work: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = client(flags).admin();
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.disconnect();
  }
}

/** A live counter on standard error, drawn only for people (a terminal, no --json); else a no-op. */
export interface Progress {
  update(count: number): void;
  stop(): void;
}

export function progress(
  flags: ClientFlags,
  label: string,
  total: number | null,
  interactive_stream_busy: boolean,
): Progress {
  if (!process.stderr.isTTY || flags.json || interactive_stream_busy) return { update: () => {}, stop: () => {} };
  const started = Date.now();
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      format:
        total === null
          ? `${label} {value} messages | {rate} msg/s | {duration_formatted}`
          : `${label} [{bar}] {value}/{total} messages | {rate} msg/s | {duration_formatted}`,
      hideCursor: false,
      clearOnComplete: true,
      fps: 10,
    },
    cliProgress.Presets.shades_classic,
  );
  const rate = (count: number) => ({ rate: Math.round(count / Math.max(0.001, (Date.now() - started) / 1000)) });
  bar.start(total ?? 0, 0, rate(0));
  return {
    update: (count) => bar.update(count, rate(count)),
    stop: () => bar.stop(),
  };
}

export function print(flags: { json?: boolean }, value: unknown, text: () => string): void {
  process.stdout.write(flags.json ? `${JSON.stringify(value)}\n` : `${text()}\n`);
}
