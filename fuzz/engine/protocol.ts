// What the supervisor (main thread) and the fuzzing worker share: the worker's settings, the
// messages it posts, and the shared memory through which the supervisor sees the input running
// now, so that an input stuck in an endless loop can still be reported after the worker is stopped.

export type CrashKind = 'exception' | 'hang' | 'allocation';

export interface Crash {
  kind: CrashKind;
  /** The error and where it was thrown, or what the input took (time, memory). */
  message: string;
  input: Uint8Array;
}

export interface FuzzStats {
  executions: number;
  elapsed_ms: number;
  /** Inputs kept: the seeds plus every mutant that reached a block nothing before had. */
  corpus_size: number;
  /** Committed and saved inputs replayed at the start. */
  seeds: number;
  /** Distinct blocks of src/ seen to run. */
  coverage_blocks: number;
  /** Distinct outcomes: what the target returned, or the refusal it threw (digits left out). */
  outcomes: number;
  /** Crashes found, before deduplication by error and place. */
  crashes: number;
}

export interface WorkerSettings {
  target: string;
  /** Seconds of mutation after the replay (0 with `replay_only`). */
  seconds: number;
  /** Most mutants to run (Infinity: bounded by time only). */
  runs: number;
  seed: number;
  /** Folders (or files) of inputs to replay first and mutate from. */
  corpus_dirs: string[];
  /** Where new inputs that reached new blocks are written; null: kept in memory only. */
  save_dir: string | null;
  replay_only: boolean;
  /** An input running longer than this is a hang. */
  hang_ms: number;
  /** An input growing the heap, external memory or peak RSS by more than this is an allocation crash. */
  allocation_limit_bytes: number;
  /** The folder whose scripts count for coverage. */
  source_dir: string;
  shared: SharedArrayBuffer;
}

export type WorkerMessage =
  { kind: 'crash'; crash: Crash } | { kind: 'progress'; stats: FuzzStats } | { kind: 'done'; stats: FuzzStats };

/** Slots of the shared Int32Array in front of the input bytes. */
export const SLOT = {
  /** Incremented as each input starts. */
  sequence: 0,
  /** Milliseconds since the worker's clock origin when it started; -1 between inputs. */
  started_ms: 1,
  input_length: 2,
} as const;
export const SLOT_BYTES = 16;
/** The longest input the shared memory holds (targets' `max_bytes` and seeds stay below it). */
export const SHARED_INPUT_BYTES = 1024 * 1024;

/** Fresh shared memory, with no input running. */
export function shared_memory(): SharedArrayBuffer {
  const shared = new SharedArrayBuffer(SLOT_BYTES + SHARED_INPUT_BYTES);
  Atomics.store(shared_views(shared).slots, SLOT.started_ms, -1);
  return shared;
}

export function shared_views(shared: SharedArrayBuffer): { slots: Int32Array; input: Uint8Array } {
  return { slots: new Int32Array(shared, 0, SLOT_BYTES / 4), input: new Uint8Array(shared, SLOT_BYTES) };
}

/** A clock both threads read the same way: whole milliseconds, small enough for an Int32Array slot. */
export function clock_ms(): number {
  return Math.floor(performance.timeOrigin + performance.now()) % 0x40000000;
}
