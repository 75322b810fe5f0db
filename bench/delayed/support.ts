// What the parts of the delayed-delivery benchmark (bench/delayed.ts) share: its broker processes
// (started, stopped and cleaned up whatever happens), bounded waits, memory and disk readings,
// numbered message values and the printing of figures.
import fs from 'node:fs';
import path from 'node:path';
import { new_data_dir, start_broker_process, type BrokerProcess } from '../../test/support/broker_process.ts';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');

/** The sizes the command line sets (bench/delayed.ts reads them). */
export interface DelayedOptions {
  spread_messages: number;
  spread_s: number;
  rate: number;
  rate_s: number;
  pending: number;
  pending_batch: number;
}

export const VALUE_BYTES = 100;

export const BROKER_ARGS = ['--durability', 'fsync'];

export const SETTLE_MS = 5_000;

export const PART_GRACE_MS = 60_000;

export const STOP_LIMIT_MS = 60_000;

export const PROGRESS_EVERY_MS = 10_000;

export const say = (line = '') => process.stdout.write(`${line}\n`);

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export const f0 = (value: number) => Math.round(value).toLocaleString('en-US');

export const f1 = (value: number) => value.toFixed(1);

export const mb = (bytes: number) => (bytes / 1e6).toFixed(1);

export const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export function table(headers: string[], rows: Array<Array<string | number>>): void {
  say(`| ${headers.join(' | ')} |`);
  say(`| ${headers.map((_, i) => (i === 0 ? '---' : '---:')).join(' | ')} |`);
  for (const row of rows) say(`| ${row.join(' | ')} |`);
}

export function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

export class PartFailed extends Error {}

export async function with_timeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new PartFailed(`${what} did not finish within ${secs(ms)}`)), Math.max(0, ms));
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** VmRSS and VmHWM (peak) of a process, in bytes. */
export function memory_of(pid: number): { rss: number; peak: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => {
    const match = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status);
    if (!match) throw new Error(`/proc/${pid}/status has no ${name}`);
    return Number(match[1]) * 1024;
  };
  return { rss: field('VmRSS'), peak: field('VmHWM') };
}

export function du_bytes(dir: string): number {
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    total += entry.isDirectory() ? du_bytes(full) : fs.statSync(full).size;
  }
  return total;
}

/** A value of VALUE_BYTES: the message's number, a space, then padding. */
export function value_of(i: number): Buffer {
  const value = Buffer.alloc(VALUE_BYTES, 0x2e);
  value.write(`${i} `, 0, 'latin1');
  return value;
}

export function number_in(value: Buffer | null): number {
  if (!value) return -1;
  let n = 0;
  let at = 0;
  for (; at < value.length; at++) {
    const c = value[at]!;
    if (c < 0x30 || c > 0x39) break;
    n = n * 10 + (c - 0x30);
  }
  return at === 0 ? -1 : n;
}

export { random_from } from '../seeded_random.ts';

/** Brokers and directories to clean up whatever happens. */
export const live_brokers = new Set<{ stop(): Promise<unknown>; kill(): Promise<unknown> }>();

export const data_dirs = new Set<string>();

export async function stop_broker(
  broker: { stop(): Promise<unknown>; kill(): Promise<unknown> },
  what: string,
): Promise<{ code: unknown; ms: number }> {
  const started = performance.now();
  try {
    const code = await with_timeout(broker.stop(), STOP_LIMIT_MS, `stopping the ${what} broker`);
    return { code, ms: performance.now() - started };
  } catch (error) {
    await broker.kill();
    throw error;
  } finally {
    live_brokers.delete(broker);
  }
}

export async function start_broker(): Promise<{ broker: BrokerProcess; ready_ms: number }> {
  const started = performance.now();
  const data_dir = new_data_dir('bench-delayed');
  data_dirs.add(data_dir);
  const broker = await start_broker_process({ data_dir, args: BROKER_ARGS });
  live_brokers.add(broker);
  return { broker, ready_ms: performance.now() - started };
}

/** Lines the broker printed besides its ready line (warnings and errors at --log-level warn). */
export function report_broker_output(output: string, what: string): void {
  const lines = output.split('\n').filter((line) => line.trim() !== '' && !/^sluice (ready |stopped$)/.test(line));
  if (lines.length === 0) return;
  say(`broker output (${what}), ${lines.length} line(s):`);
  for (const line of lines.slice(0, 20)) say(`    ${line.slice(0, 400)}`);
  if (lines.length > 20) say(`    ... ${lines.length - 20} more`);
}
