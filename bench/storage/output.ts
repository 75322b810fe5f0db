// Printing for the storage benchmark (bench/storage_append.ts): lines on stdout, or on stderr
// when --json keeps stdout for the JSON object; aligned tables; number formats; a bounded wait.

let to_stderr = false;

/** With --json: human-readable lines go to stderr from now on. */
export function say_on_stderr(): void {
  to_stderr = true;
}

/** Human-readable lines; on stderr when --json so stdout carries only the JSON object. */
export function say(line = ''): void {
  if (to_stderr) process.stderr.write(`${line}\n`);
  else process.stdout.write(`${line}\n`);
}

/** Columns after the first are right-aligned (numbers) unless `left` is set (key-value tables). */
export function table(headers: string[], rows: Array<Array<string | number>>, left = false): void {
  const cells = rows.map((row) => row.map((cell) => String(cell)));
  const widths = headers.map((header, i) => Math.max(header.length, ...cells.map((row) => (row[i] ?? '').length)));
  const line = (row: string[]) =>
    row
      .map((cell, i) => (i === 0 || left ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  say(line(headers));
  say(widths.map((width) => '-'.repeat(width)).join('  '));
  for (const row of cells) say(line(row));
}

export const mb = (bytes: number, ms: number) => (ms > 0 ? bytes / 1e6 / (ms / 1000) : 0);

export const per_s = (count: number, ms: number) => (ms > 0 ? count / (ms / 1000) : 0);

export const f1 = (value: number) => value.toFixed(1);

export const f0 = (value: number) => Math.round(value).toLocaleString('en-US');

export const pct = (value: number) => `${(value * 100).toFixed(0)}%`;

export function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

export async function with_timeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
