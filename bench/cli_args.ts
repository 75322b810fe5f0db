// Command-line handling shared by the standalone benchmark scripts: options parsed strictly (a
// wrong option prints the usage and exits 2), --help, and bounded integer options.
import { parseArgs, type ParseArgsConfig } from 'node:util';

type Options = NonNullable<ParseArgsConfig['options']>;

/** The parsed options; exits with the usage on --help (0) or a bad option (2). */
export function bench_args<T extends Options>(options: T, usage: string) {
  let values: ReturnType<typeof parseArgs<{ options: T; strict: true }>>['values'];
  try {
    values = parseArgs<{ options: T; strict: true }>({ options, strict: true }).values;
  } catch (error) {
    console.error(`${error instanceof Error ? error.message : String(error)}\n${usage}`);
    process.exit(2);
  }
  if ((values as { help?: boolean }).help) {
    console.log(usage);
    process.exit(0);
  }
  return values;
}

/** `text` as an integer in 1..max, or the usage and exit 2. */
export function positive_int(name: string, text: string, max: number, usage: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value <= 0 || value > max) {
    console.error(`--${name} must be an integer in 1..${max}, got ${JSON.stringify(text)}\n${usage}`);
    process.exit(2);
  }
  return value;
}
