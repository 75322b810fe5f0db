// The fuzzing worker: replays the corpus, then mutates inputs for the time it is given, keeping each
// mutant that ran a block of src/ nothing before ran, or had an outcome no input had before.
// Mutants run in batches between two coverage takes (a take costs far more than most decodes); a
// batch that reached a new block is run again one input at a time to find the inputs that did.
// Every input is timed and its memory growth measured; the supervisor watches the shared memory
// for an input that never returns.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';
import { parentPort, workerData } from 'node:worker_threads';
import { CoverageProbe } from './coverage.ts';
import { Random, mutate } from './mutate.ts';
import {
  SLOT,
  clock_ms,
  shared_views,
  type Crash,
  type CrashKind,
  type FuzzStats,
  type WorkerSettings,
} from './protocol.ts';
import type { FuzzTarget } from './target.ts';
import { is_target_name, load_target } from '../targets/index.ts';

/** Mutants between two coverage takes. */
const BATCH = 32;
const PROGRESS_EVERY_MS = 10_000;
/** Crashes reported per run once deduplicated; past that the run only counts them. */
const CRASHES_REPORTED_MAX = 20;

const settings = workerData as WorkerSettings;
const shared = shared_views(settings.shared);

/** The corpus: distinct inputs, in the order they were kept. */
class Corpus {
  readonly inputs: Buffer[] = [];
  private readonly hashes = new Set<string>();

  add(input: Buffer): boolean {
    const hash = hash_of(input);
    if (this.hashes.has(hash)) return false;
    this.hashes.add(hash);
    this.inputs.push(input);
    return true;
  }

  has(input: Buffer): boolean {
    return this.hashes.has(hash_of(input));
  }
}

function hash_of(input: Buffer): string {
  return crypto.createHash('sha1').update(input).digest('hex');
}

/** The V8 heap in use plus the memory outside it (Buffers' backing stores), in bytes. */
function memory_in_use(): number {
  const heap = v8.getHeapStatistics();
  return heap.used_heap_size + heap.external_memory;
}

class Fuzzer {
  private readonly corpus = new Corpus();
  private readonly blocks = new Set<number>();
  private readonly outcomes = new Set<string>();
  private readonly crash_signatures = new Set<string>();
  private readonly random: Random;
  private executions = 0;
  private crashes = 0;
  private seeds = 0;
  private readonly started = performance.now();
  private last_progress = performance.now();

  constructor(
    private readonly target: FuzzTarget,
    private readonly probe: CoverageProbe,
  ) {
    this.random = new Random(settings.seed);
  }

  /**
   * Runs one input: published to the shared memory first, timed and measured. Returns its outcome
   * (what the target returned, or the refusal it threw), which counts as coverage besides blocks:
   * the table-driven decoders run the same blocks for every field, and their refusals name the field.
   */
  private async execute(input: Buffer): Promise<string | null> {
    shared.input.set(input.subarray(0, shared.input.length));
    Atomics.store(shared.slots, SLOT.input_length, Math.min(input.length, shared.input.length));
    Atomics.store(shared.slots, SLOT.started_ms, clock_ms());
    Atomics.add(shared.slots, SLOT.sequence, 1);
    this.executions++;
    const memory_before = memory_in_use();
    const rss_before = process.resourceUsage().maxRSS * 1024;
    const time_before = performance.now();
    let failure: unknown = null;
    let outcome: string | void = undefined;
    try {
      const result = this.target.run(input);
      outcome = typeof result === 'object' ? await result : result;
    } catch (error) {
      failure = error;
    }
    const took_ms = performance.now() - time_before;
    // Measured before anything else allocates: the input's garbage is still counted.
    const grown = Math.max(memory_in_use() - memory_before, process.resourceUsage().maxRSS * 1024 - rss_before);
    Atomics.store(shared.slots, SLOT.started_ms, -1);
    const crashed = this.check(input, failure, took_ms, grown);
    if (crashed) return null; // a crash is not an input to build on
    if (failure instanceof Error) return refusal_of(failure);
    return typeof outcome === 'string' ? outcome : null;
  }

  /** Reports the input if it crashed, hung or allocated past the limit; returns whether it did. */
  private check(input: Buffer, failure: unknown, took_ms: number, grown: number): boolean {
    if (failure !== null && !this.target.is_expected(failure)) this.crash('exception', describe(failure), input);
    else if (took_ms > settings.hang_ms) this.crash('hang', `the input took ${Math.round(took_ms)} ms`, input);
    else if (grown > settings.allocation_limit_bytes)
      this.crash('allocation', `the input grew memory by ${Math.round(grown / 1024 / 1024)} MiB`, input);
    else return false;
    return true;
  }

  /** Whether `outcome` is one not seen before (it is seen from now on). */
  private new_outcome(outcome: string | null): boolean {
    if (outcome === null || this.outcomes.has(outcome)) return false;
    this.outcomes.add(outcome);
    return true;
  }

  private crash(kind: CrashKind, message: string, input: Buffer): void {
    this.crashes++;
    const signature = `${kind} ${message.replace(/\d+/g, 'N')}`;
    if (this.crash_signatures.has(signature) || this.crash_signatures.size >= CRASHES_REPORTED_MAX) return;
    this.crash_signatures.add(signature);
    const crash: Crash = { kind, message, input: new Uint8Array(input) };
    parentPort!.postMessage({ kind: 'crash', crash });
  }

  /** The blocks of `taken` not seen before; with `record`, they count as seen from now on. */
  private new_blocks(taken: readonly number[], record: boolean): number[] {
    const fresh: number[] = [];
    for (const block of taken) {
      if (this.blocks.has(block)) continue;
      fresh.push(block);
      if (record) this.blocks.add(block);
    }
    return fresh;
  }

  async replay(): Promise<void> {
    for (const input of read_corpus(settings.corpus_dirs, this.target.max_bytes)) {
      if (this.corpus.has(input)) continue;
      this.probe.take();
      this.new_outcome(await this.execute(input));
      this.new_blocks(this.probe.take(), true);
      this.corpus.add(input);
      this.seeds++;
    }
  }

  async fuzz(): Promise<void> {
    const deadline = this.started + settings.seconds * 1000;
    if (this.corpus.inputs.length === 0) this.corpus.add(Buffer.alloc(0));
    const context = {
      random: this.random,
      max_bytes: this.target.max_bytes,
      other: () => this.random.pick(this.corpus.inputs),
      dictionary: this.target.dictionary ?? [],
    };
    let mutants = 0;
    this.probe.take();
    while (performance.now() < deadline && mutants < settings.runs) {
      const batch: Buffer[] = [];
      for (let i = 0; i < BATCH && mutants < settings.runs; i++, mutants++) {
        const input = mutate(this.random.pick(this.corpus.inputs), context);
        batch.push(input);
        if (this.new_outcome(await this.execute(input))) this.keep(input);
      }
      const fresh = this.new_blocks(this.probe.take(), false);
      if (fresh.length > 0) await this.attribute(batch, fresh);
      if (performance.now() - this.last_progress > PROGRESS_EVERY_MS) {
        this.last_progress = performance.now();
        parentPort!.postMessage({ kind: 'progress', stats: this.stats() });
      }
    }
  }

  /** Runs a batch that reached new blocks again, one input at a time, and keeps those that reach any. */
  private async attribute(batch: readonly Buffer[], fresh: readonly number[]): Promise<void> {
    for (const input of batch) {
      await this.execute(input);
      if (this.new_blocks(this.probe.take(), true).length > 0) this.keep(input);
    }
    // Blocks run only the first time (a codec compiled once, then cached) do not show on the rerun:
    // they count as seen all the same.
    for (const block of fresh) this.blocks.add(block);
  }

  private keep(input: Buffer): void {
    if (!this.corpus.add(input) || settings.save_dir === null) return;
    fs.mkdirSync(settings.save_dir, { recursive: true });
    fs.writeFileSync(path.join(settings.save_dir, `${hash_of(input)}.bin`), input);
  }

  stats(): FuzzStats {
    return {
      executions: this.executions,
      elapsed_ms: Math.round(performance.now() - this.started),
      corpus_size: this.corpus.inputs.length,
      seeds: this.seeds,
      coverage_blocks: this.blocks.size,
      outcomes: this.outcomes.size,
      crashes: this.crashes,
    };
  }
}

/**
 * A refusal as an outcome: its class and message with what the input put there (numbers, quoted
 * text) left out, so that a new outcome means a new place or reason, not new bytes.
 */
function refusal_of(error: Error): string {
  const message = error.message.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'/g, 'Q').replace(/0x[0-9a-f]+|\d+/gi, 'N');
  return `${error.name}: ${message}`.slice(0, 120);
}

/** The error's class, message and the first frames of its stack: enough to tell two crashes apart. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return `non-error thrown: ${String(error)}`;
  const frames = (error.stack ?? '').split('\n').filter((line) => line.trimStart().startsWith('at '));
  return [`${error.name}: ${error.message}`, ...frames.slice(0, 4)].join('\n');
}

/** The files of the corpus folders (or files named; missing ones are empty), in name order, cut to `max_bytes`. */
function read_corpus(paths: readonly string[], max_bytes: number): Buffer[] {
  const files: string[] = [];
  for (const where of paths) {
    if (!fs.existsSync(where)) continue;
    if (fs.statSync(where).isFile()) files.push(where);
    else for (const name of fs.readdirSync(where).sort()) files.push(path.join(where, name));
  }
  return files.filter((file) => fs.statSync(file).isFile()).map((file) => fs.readFileSync(file).subarray(0, max_bytes));
}

async function main(): Promise<void> {
  if (!is_target_name(settings.target)) throw new Error(`no fuzz target ${settings.target}`);
  // Coverage starts before the target's modules load, so their blocks are counted from the start.
  const probe = new CoverageProbe(settings.source_dir);
  const fuzzer = new Fuzzer(await load_target(settings.target), probe);
  await fuzzer.replay();
  if (!settings.replay_only) await fuzzer.fuzz();
  probe.stop();
  parentPort!.postMessage({ kind: 'done', stats: fuzzer.stats() });
}

await main();
