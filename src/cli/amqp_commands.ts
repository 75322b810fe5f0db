// `sluice amqp queues|exchanges|bindings|connections`: the AMQP side of a broker, read from its
// HTTP admin API (`--http`, default 127.0.0.1:8080; HTTPS with `--tls-ca`), as text or JSON lines.
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { print } from './client_support.ts';

export interface AmqpFlags {
  http: string;
  /** HTTPS, trusting these authorities (a broker started with --tls-cert). */
  tlsCa?: string;
  /** HTTP Basic login (a broker with users); the password from SLUICE_SASL_PASSWORD. */
  saslUsername?: string;
  /** Absent: every vhost. */
  vhost?: string;
  json?: boolean;
}

const FETCH_TIMEOUT_MS = 10_000;

async function get<T>(flags: AmqpFlags, path: string): Promise<T> {
  const query = flags.vhost === undefined ? '' : `?vhost=${encodeURIComponent(flags.vhost)}`;
  let answer: { status: number; body: string };
  try {
    answer = await request(flags, `/api/v1/amqp/${path}${query}`);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new Error(`the admin API at ${flags.http} did not answer (${why}); is the broker's --http on?`);
  }
  const body = JSON.parse(answer.body) as T & { error?: { message: string } };
  if (answer.status >= 300) throw new Error(body.error?.message ?? `HTTP ${answer.status}`);
  return body;
}

/** One GET on the admin API (HTTPS with --tls-ca: fetch takes no certificate authorities). */
function request(flags: AmqpFlags, path: string): Promise<{ status: number; body: string }> {
  const colon = flags.http.lastIndexOf(':');
  const login = flags.saslUsername ? `${flags.saslUsername}:${process.env.SLUICE_SASL_PASSWORD ?? ''}` : null;
  const options = {
    headers: login ? { authorization: `Basic ${Buffer.from(login).toString('base64')}` } : {},
    host: flags.http.slice(0, colon),
    port: Number(flags.http.slice(colon + 1)),
    path,
    timeout: FETCH_TIMEOUT_MS,
  };
  return new Promise((resolve, reject) => {
    const answered = (response: http.IncomingMessage) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      response.on('error', reject);
    };
    const sent = flags.tlsCa
      ? https.get({ ...options, ca: fs.readFileSync(flags.tlsCa) }, answered)
      : http.get(options, answered);
    sent.on('error', reject);
    sent.on('timeout', () => sent.destroy(new Error(`no answer within ${FETCH_TIMEOUT_MS} ms`)));
  });
}

type Row = Record<string, unknown>;
const text = (value: unknown) => (typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value));

/** Rows as aligned columns of `fields`, or `empty` when there are none. */
function table(rows: Row[], fields: string[], empty: string): string {
  if (rows.length === 0) return empty;
  const cells = [fields, ...rows.map((r) => fields.map((f) => text(r[f] ?? '')))];
  const widths = fields.map((_, i) => Math.max(...cells.map((c) => c[i]!.length)));
  return cells
    .map((c) =>
      c
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

const LISTS = {
  queues: { fields: ['vhost', 'name', 'ready', 'unacked', 'consumers', 'durable', 'topic'], empty: 'no queues' },
  exchanges: { fields: ['vhost', 'name', 'type', 'durable', 'internal'], empty: 'no exchanges' },
  bindings: { fields: ['vhost', 'source', 'destination', 'destination_type', 'routing_key'], empty: 'no bindings' },
  connections: { fields: ['id', 'user', 'vhost', 'channels', 'consumers'], empty: 'no AMQP connections' },
} as const;

export async function amqp_list(what: keyof typeof LISTS, flags: AmqpFlags): Promise<void> {
  const body = await get<Record<string, Row[]>>(flags, what);
  const rows = body[what] ?? [];
  const { fields, empty } = LISTS[what];
  print(flags, rows, () => table(rows, [...fields], empty));
}
