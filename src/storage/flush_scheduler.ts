// Group commit across partitions. Partitions with written-but-unsynced data register here; a flush
// round takes every registered partition at once, fdatasyncs their dirty files (and fsyncs the
// directories of newly created files) in parallel, then tells each partition how far it is
// durable. Appends that arrive during a round wait for the next one, so under load one round
// covers many appends from many partitions, and an idle broker flushes a lone append at once.
import type { FileIO } from './file_io.ts';
import type { HandleCache } from './handle_cache.ts';
import type { DurabilityPolicy } from './config.ts';
import { os_error_code } from './errors.ts';
import { run_bounded } from './concurrency.ts';
import { rethrow_assertion } from './errors.ts';

export interface FlushWork {
  files: string[];
  dirs: string[];
}

export interface FlushTarget {
  /** Captures what is written now; null when nothing needs syncing. */
  begin_flush(): FlushWork | null;
  /** Called once per begin_flush that returned work, with the error if any sync failed. */
  end_flush(work: FlushWork, error: unknown): void;
}

export class FlushScheduler {
  private dirty = new Set<FlushTarget>();
  /** The end of the chain of rounds; rounds never overlap. */
  private chain: Promise<void> = Promise.resolve();
  /** A round that has been requested but has not taken its snapshot yet; new requests join it. */
  private queued: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  rounds = 0;
  /** Duration of the most recent rounds, for metrics (bounded ring). */
  readonly round_durations_ms: number[] = [];
  /** Told each round's duration, for a metrics exporter (storage itself keeps no histograms). */
  on_fsync: ((duration_ms: number) => void) | null = null;

  constructor(
    private readonly io: FileIO,
    private readonly handles: HandleCache,
    private readonly policy: DurabilityPolicy,
    private readonly parallelism_max: number,
  ) {}

  start(): void {
    if (this.policy.kind === 'interval') {
      // One round per tick: under load the timer joins the queued round instead of piling up.
      this.timer = setInterval(() => {
        if (this.dirty.size > 0) void this.request_round().catch(rethrow_assertion);
      }, this.policy.interval_ms);
      this.timer.unref();
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  mark_dirty(target: FlushTarget): void {
    this.dirty.add(target);
    if (this.policy.kind === 'fsync') void this.request_round().catch(rethrow_assertion);
  }

  /**
   * Flushes everything written before the call, whatever the policy (interval timer, checkpoints,
   * close). It waits for at most the running round and one more: the queued round starts after
   * the running one and takes every dirty partition at that moment.
   */
  flush_all(): Promise<void> {
    return this.request_round();
  }

  private request_round(): Promise<void> {
    if (this.queued) return this.queued;
    const queued = this.chain
      .then(() => new Promise<void>((resolve) => setImmediate(resolve))) // let this I/O phase's completions join
      .then(() => {
        this.queued = null;
        return this.run_round();
      });
    this.queued = queued;
    this.chain = queued.catch(() => undefined);
    return queued;
  }

  private async run_round(): Promise<void> {
    const targets = [...this.dirty];
    this.dirty.clear();
    if (targets.length === 0) return;
    const started_ms = performance.now();
    const jobs: Array<{ target: FlushTarget; work: FlushWork; error: unknown }> = [];
    const tasks: Array<() => Promise<void>> = [];
    for (const target of targets) {
      const work = target.begin_flush();
      if (work === null) continue;
      const job = { target, work, error: null as unknown };
      jobs.push(job);
      const record = (error: unknown) => {
        // A file deleted since it was written (retention, partition deletion) has nothing to sync.
        if (os_error_code(error) !== 'ENOENT') job.error ??= error;
      };
      for (const file of work.files) {
        tasks.push(() => this.handles.with_handle(file, (fd) => this.io.fdatasync(fd)).catch(record));
      }
      for (const dir of work.dirs) tasks.push(() => this.io.fsync_dir(dir).catch(record));
    }
    await run_bounded(tasks, this.parallelism_max, (task) => task());
    this.rounds++;
    if (this.round_durations_ms.length >= 1024) this.round_durations_ms.shift();
    const duration_ms = performance.now() - started_ms;
    this.round_durations_ms.push(duration_ms);
    this.on_fsync?.(duration_ms);
    for (const job of jobs) job.target.end_flush(job.work, job.error);
  }
}
