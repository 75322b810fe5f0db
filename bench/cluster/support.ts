// What the parts of the replicated produce benchmark (bench/cluster.ts) share: the options it was
// given, printing figures, and waits that always have a time limit.
import type { PageCacheControl } from '../page_cache.ts';

/** What the command line sets (bench/cluster.ts reads it). */
export interface ClusterBenchOptions {
  seconds: number;
  messages: number;
  warmup_seconds: number;
  partitions: number;
  sizes: number[];
  producers: number;
  in_flight: number;
  send_messages: number;
  /** The cluster brokers' --durability (the single broker always runs with fsync). */
  cluster_durability: string;
  /** Environment of every broker process (NODE_OPTIONS, the CPU profile directory). */
  broker_env: NodeJS.ProcessEnv;
  page_cache: PageCacheControl;
}

/** Time limits of the waits around the runs. */
export const READY_LIMIT_MS = 60_000;
export const ISR_LIMIT_MS = 60_000;
export const GRACE_MS = 60_000;
export const STOP_LIMIT_MS = 30_000;
const POLL_MS = 200;

let lines_to_stderr = false;

/** With --json stdout carries only the JSON object, so the human-readable lines go to stderr. */
export function print_lines_to_stderr(): void {
  lines_to_stderr = true;
}

export const say = (line = '') => (lines_to_stderr ? process.stderr : process.stdout).write(`${line}\n`);
export const f0 = (value: number) => Math.round(value).toLocaleString('en-US');
export const f1 = (value: number) => value.toFixed(1);
export const size_label = (bytes: number) => (bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} B`);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function table(headers: string[], rows: Array<Array<string | number>>): void {
  say(`| ${headers.join(' | ')} |`);
  say(`| ${headers.map((_, i) => (i < 2 ? '---' : '---:')).join(' | ')} |`);
  for (const row of rows) say(`| ${row.join(' | ')} |`);
}

/** Resolves `promise`, or rejects after `ms` with a message naming `what`. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not done within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Polls `check` every POLL_MS until it returns true, or fails after `limit_ms`. */
export async function wait_until(what: string, limit_ms: number, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  let last_error: unknown = null;
  while (Date.now() - started <= limit_ms) {
    try {
      if (await within(check(), limit_ms, what)) return Date.now() - started;
      last_error = null;
    } catch (error) {
      last_error = error;
    }
    await sleep(POLL_MS);
  }
  const reason = last_error instanceof Error ? ` (last error: ${last_error.message})` : '';
  throw new Error(`${what}: not within ${limit_ms} ms${reason}`);
}
