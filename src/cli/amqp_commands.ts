// `sluice amqp queues|exchanges|bindings|connections`: the AMQP side of a broker, read from its
// HTTP admin API (`--http`, default 127.0.0.1:8080), as text or JSON lines.
import { print } from './client_support.ts';

export interface AmqpFlags {
  http: string;
  /** Absent: every vhost. */
  vhost?: string;
  json?: boolean;
}

const FETCH_TIMEOUT_MS = 10_000;

async function get<T>(flags: AmqpFlags, path: string): Promise<T> {
  const query = flags.vhost === undefined ? '' : `?vhost=${encodeURIComponent(flags.vhost)}`;
  const url = `http://${flags.http}/api/v1/amqp/${path}${query}`;
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new Error(`the admin API at ${flags.http} did not answer (${why}); is the broker's --http on?`);
  }
  const body = (await response.json()) as T & { error?: { message: string } };
  if (!response.ok) throw new Error(body.error?.message ?? `HTTP ${response.status}`);
  return body;
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
