// Runs one target's fuzzing in a worker thread and watches it. The worker runs every input
// synchronously where the decoder is synchronous, so an endless loop would never let it answer:
// the supervisor reads the input running now from shared memory, and past the hang limit reports
// it and terminates the worker. Crash inputs are written to files and kept in the report.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import {
  SLOT,
  clock_ms,
  shared_memory,
  shared_views,
  type Crash,
  type FuzzStats,
  type WorkerMessage,
  type WorkerSettings,
} from './protocol.ts';

export const REPOSITORY_ROOT = path.resolve(import.meta.dirname, '..', '..');
export const COMMITTED_CORPUS = path.join(REPOSITORY_ROOT, 'fuzz', 'corpus');
export const CRASH_DIR = path.join(REPOSITORY_ROOT, '.tmp', 'fuzz-crashes');

/** The spec's limits: an input taking longer than a second hangs. */
export const HANG_MS_DEFAULT = 1000;
/** More than this much memory for one input (each at most 64 KiB) is allocation out of proportion. */
export const ALLOCATION_LIMIT_DEFAULT = 64 * 1024 * 1024;
/** A heap past this ends the worker (reported as a crash) before it takes the machine's memory. */
const WORKER_HEAP_MB = 1536;
const WATCH_EVERY_MS = 100;

export interface FuzzOptions {
  target: string;
  seconds: number;
  /** Most mutants to run; unbounded when absent. */
  runs?: number;
  seed: number;
  corpus_dirs: string[];
  save_dir?: string | null;
  replay_only?: boolean;
  hang_ms?: number;
  allocation_limit_bytes?: number;
  /** Where crash inputs are written (a folder per target below it). */
  crash_dir?: string;
  on_progress?: (stats: FuzzStats) => void;
}

export interface FoundCrash extends Crash {
  /** The file the input was written to. */
  file: string;
}

export interface FuzzReport {
  target: string;
  seed: number;
  stats: FuzzStats;
  crashes: FoundCrash[];
}

/** Fuzzes one target as `options` say and resolves with what was found; never rejects for a crash. */
export function run_fuzzer(options: FuzzOptions): Promise<FuzzReport> {
  const shared = shared_memory();
  const settings: WorkerSettings = {
    target: options.target,
    seconds: options.replay_only ? 0 : options.seconds,
    runs: options.runs ?? Infinity,
    seed: options.seed,
    corpus_dirs: options.corpus_dirs,
    save_dir: options.save_dir ?? null,
    replay_only: options.replay_only ?? false,
    hang_ms: options.hang_ms ?? HANG_MS_DEFAULT,
    allocation_limit_bytes: options.allocation_limit_bytes ?? ALLOCATION_LIMIT_DEFAULT,
    source_dir: path.join(REPOSITORY_ROOT, 'src'),
    shared,
  };
  const worker = new Worker(new URL('./worker.ts', import.meta.url), {
    workerData: settings,
    resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
  });
  return watch(worker, shared, settings, options);
}

function watch(worker: Worker, shared: SharedArrayBuffer, settings: WorkerSettings, options: FuzzOptions) {
  const views = shared_views(shared);
  const crashes: FoundCrash[] = [];
  let stats: FuzzStats = {
    executions: 0,
    elapsed_ms: 0,
    corpus_size: 0,
    seeds: 0,
    coverage_blocks: 0,
    outcomes: 0,
    crashes: 0,
  };
  const record = (crash: Crash) => crashes.push(save_crash(crash, options));
  /** The input running now, if one is. */
  const running = (): Uint8Array | null =>
    Atomics.load(views.slots, SLOT.started_ms) < 0
      ? null
      : views.input.slice(0, Atomics.load(views.slots, SLOT.input_length));
  return new Promise<FuzzReport>((resolve) => {
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      clearInterval(timer);
      // A worker stopped for a hang never sent its last count: the crashes recorded are a floor.
      stats = { ...stats, crashes: Math.max(stats.crashes, crashes.length) };
      resolve({ target: settings.target, seed: settings.seed, stats, crashes });
    };
    const timer = setInterval(() => {
      const started = Atomics.load(views.slots, SLOT.started_ms);
      if (started < 0) return;
      const elapsed = (clock_ms() - started + 0x40000000) % 0x40000000;
      if (elapsed <= settings.hang_ms) return;
      clearInterval(timer); // one hang per worker: it is stopped now
      const input = running();
      if (input) record({ kind: 'hang', message: `the input ran ${elapsed} ms and did not return`, input });
      void worker.terminate().then(finish);
    }, WATCH_EVERY_MS);
    worker.on('message', (message: WorkerMessage) => {
      if (message.kind === 'crash') record(message.crash);
      else {
        stats = message.stats;
        if (message.kind === 'progress') options.on_progress?.(stats);
      }
    });
    // An error the target let escape asynchronously, or the heap limit: the input running then is blamed.
    worker.on('error', (error) => {
      const input = running() ?? new Uint8Array(0);
      record({ kind: error.message.includes('memory') ? 'allocation' : 'exception', message: String(error), input });
    });
    worker.on('exit', finish);
  });
}

function save_crash(crash: Crash, options: FuzzOptions): FoundCrash {
  const dir = path.join(options.crash_dir ?? CRASH_DIR, options.target);
  fs.mkdirSync(dir, { recursive: true });
  const hash = crypto.createHash('sha1').update(crash.input).digest('hex').slice(0, 16);
  const file = path.join(dir, `${crash.kind}-${hash}.bin`);
  fs.writeFileSync(file, crash.input);
  return { ...crash, input: Buffer.from(crash.input), file };
}

/** A crash as text: kind, message, file and the input in hex (cut after `hex_max` bytes). */
export function format_crash(crash: FoundCrash, hex_max = 4096): string {
  const hex = Buffer.from(crash.input.subarray(0, hex_max)).toString('hex');
  const more = crash.input.length > hex_max ? ` ... (${crash.input.length} bytes)` : '';
  return `${crash.kind}: ${crash.message}\n  file: ${crash.file}\n  input (hex): ${hex}${more}`;
}
