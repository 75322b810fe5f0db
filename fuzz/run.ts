// `npm run fuzz`: coverage-guided fuzzing of the broker's decoders (docs/fuzzing.md). Runs each
// target in turn for the time given, starting from the committed corpus (fuzz/corpus/<target>/) and
// the inputs earlier runs kept (.tmp/fuzz-corpus/<target>/), and prints what it found. Exits 1 if
// any input crashed, hung or allocated out of proportion; the inputs are under .tmp/fuzz-crashes/.
//
//   npm run fuzz                                 every target, 5 minutes each
//   npm run fuzz -- --seconds 60 --target amqp_frame
//   npm run fuzz -- --replay                     only replay the corpus (a quick regression check)
//   npm run fuzz -- --seed 42 --runs 100000      repeat a run (same seed, same number of mutants)
//   npm run fuzz -- --target record_batch --input .tmp/fuzz-crashes/record_batch/X.bin
//                                                replay only these inputs (files or folders)
import path from 'node:path';
import { parseArgs } from 'node:util';
import { COMMITTED_CORPUS, REPOSITORY_ROOT, format_crash, run_fuzzer, type FuzzReport } from './engine/supervisor.ts';
import { TARGET_NAMES, is_target_name } from './targets/index.ts';

const SECONDS_DEFAULT = 300;
const SAVED_CORPUS = path.join(REPOSITORY_ROOT, '.tmp', 'fuzz-corpus');

interface RunOptions {
  targets: string[];
  seconds: number;
  runs: number | undefined;
  seed: number;
  replay_only: boolean;
  save: boolean;
  /** Files or folders to replay instead of the corpus. */
  inputs: string[] | undefined;
}

function usage_error(message: string): never {
  console.error(`${message}\ntargets: ${TARGET_NAMES.join(', ')}`);
  process.exit(2);
}

function number_option(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 0) usage_error(`--${name} must be a whole number, got ${text}`);
  return value;
}

function parse_options(): RunOptions {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string' },
      target: { type: 'string', multiple: true },
      runs: { type: 'string' },
      seed: { type: 'string' },
      replay: { type: 'boolean', default: false },
      input: { type: 'string', multiple: true },
      'no-save': { type: 'boolean', default: false },
    },
  });
  const targets = (values.target ?? TARGET_NAMES).flatMap((name) => name.split(','));
  for (const name of targets) if (!is_target_name(name)) usage_error(`no fuzz target ${name}`);
  return {
    targets,
    seconds: number_option(values.seconds, 'seconds') ?? SECONDS_DEFAULT,
    runs: number_option(values.runs, 'runs'),
    seed: number_option(values.seed, 'seed') ?? Math.floor(Math.random() * 0x7fffffff),
    replay_only: values.replay || values.input !== undefined,
    save: !values['no-save'],
    inputs: values.input,
  };
}

function summary(report: FuzzReport): string {
  const { stats } = report;
  const seconds = stats.elapsed_ms / 1000;
  const rate = seconds > 0 ? Math.round(stats.executions / seconds) : 0;
  return (
    `${report.target.padEnd(14)} ${seconds.toFixed(1).padStart(6)} s  ${String(stats.executions).padStart(9)} execs ` +
    `${String(rate).padStart(6)}/s  seeds ${String(stats.seeds).padStart(4)}  corpus ` +
    `${String(stats.corpus_size).padStart(5)}  blocks ${String(stats.coverage_blocks).padStart(5)}  ` +
    `outcomes ${String(stats.outcomes).padStart(5)}  ` +
    `crashes ${stats.crashes}`
  );
}

async function main(): Promise<void> {
  const options = parse_options();
  console.log(`fuzzing ${options.targets.join(', ')}: seed ${options.seed}, ${options.seconds} s per target`);
  const reports: FuzzReport[] = [];
  for (const target of options.targets) {
    const report = await run_fuzzer({
      target,
      seconds: options.seconds,
      runs: options.runs,
      seed: options.seed,
      replay_only: options.replay_only,
      corpus_dirs: options.inputs ?? [path.join(COMMITTED_CORPUS, target), path.join(SAVED_CORPUS, target)],
      save_dir: options.save ? path.join(SAVED_CORPUS, target) : null,
      on_progress: (stats) => console.log(`  ${target}: ${stats.executions} execs, ${stats.coverage_blocks} blocks`),
    });
    for (const crash of report.crashes) console.log(format_crash(crash));
    console.log(summary(report));
    reports.push(report);
  }
  console.log('\nsummary');
  for (const report of reports) console.log(summary(report));
  if (reports.some((report) => report.stats.crashes > 0)) process.exitCode = 1;
}

await main();
