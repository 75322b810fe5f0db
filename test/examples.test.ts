// Every example in examples/ runs to completion (exit code 0) against a broker process, as a reader
// would run it: `node --import tsx examples/NAME.ts` with SLUICE_BOOTSTRAP pointing at the broker.
// The examples check their own results and exit non-zero when something is off.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { start_broker_process } from './support/broker_process.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const EXAMPLES = path.join(ROOT, 'examples');
const EXAMPLE_TIMEOUT_MS = 60_000;

/** Examples that need a feature not present yet, with the reason; they are reported as skipped. */
const NOT_YET: Record<string, string> = {};

const examples = fs
  .readdirSync(EXAMPLES)
  .filter((name) => name.endsWith('.ts'))
  .sort();

function run_example(
  file: string,
  bootstrap: string,
): Promise<{ code: number | string | null; signal: string | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', path.join(EXAMPLES, file)],
      {
        cwd: ROOT,
        timeout: EXAMPLE_TIMEOUT_MS,
        killSignal: 'SIGKILL',
        env: { ...process.env, SLUICE_BOOTSTRAP: bootstrap },
        maxBuffer: 16 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const failure = error as (Error & { code?: number | string; signal?: string | null }) | null;
        resolve({ code: failure ? (failure.code ?? 1) : 0, signal: failure?.signal ?? null, stdout, stderr });
      },
    );
  });
}

test('every example runs against a broker', { timeout: (examples.length + 1) * EXAMPLE_TIMEOUT_MS }, async (t) => {
  assert.ok(examples.length > 0, 'examples/ has examples');
  const broker = await start_broker_process();
  try {
    for (const file of examples) {
      await t.test(file, { skip: NOT_YET[file] ?? false }, async () => {
        const started = Date.now();
        const result = await run_example(file, broker.bootstrap);
        const elapsed = Date.now() - started;
        const ended = result.signal
          ? `was killed (${result.signal}) after ${elapsed} ms`
          : `exited with ${result.code}`;
        const detail = `examples/${file} ${ended}\n--- stdout\n${result.stdout}\n--- stderr\n${result.stderr}`;
        assert.equal(result.code, 0, detail);
      });
    }
  } finally {
    await broker.stop();
    fs.rmSync(broker.data_dir, { recursive: true, force: true });
  }
});
