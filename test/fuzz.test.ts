// The short fuzzing run of CI (docs/fuzzing.md): every target replays its whole committed corpus,
// then mutates for a few seconds, under the same crash, hang and allocation checks as
// `npm run fuzz`. A failure prints each input in hex and where it was written (.tmp/fuzz-crashes/),
// and the seed; SLUICE_FUZZ_SEED repeats a seed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { COMMITTED_CORPUS, format_crash, run_fuzzer } from '../fuzz/engine/supervisor.ts';
import { TARGET_NAMES } from '../fuzz/targets/index.ts';

/** Four targets at this, with the workers' start, stay within a minute on two cores. */
const SECONDS_PER_TARGET = 11;
const TIMEOUT_MS = 60_000;

const seed = Number(process.env.SLUICE_FUZZ_SEED ?? Math.floor(Math.random() * 0x7fffffff));

for (const target of TARGET_NAMES) {
  test(
    `fuzzing ${target}: the corpus replays and ${SECONDS_PER_TARGET} s of mutants find no crash`,
    {
      timeout: TIMEOUT_MS,
    },
    async () => {
      const report = await run_fuzzer({
        target,
        seconds: SECONDS_PER_TARGET,
        seed,
        corpus_dirs: [path.join(COMMITTED_CORPUS, target)],
        save_dir: null,
      });
      const found = report.crashes.map((crash) => format_crash(crash)).join('\n\n');
      assert.ok(report.stats.crashes === 0 && report.crashes.length === 0, `${target}, seed ${seed}:\n${found}`);
      assert.ok(report.stats.seeds > 0, `${target}: the committed corpus was replayed`);
      assert.ok(report.stats.executions > report.stats.seeds, `${target}: mutants ran after the replay`);
    },
  );
}
