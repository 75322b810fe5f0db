// Control over the kernel's page cache for the replicated produce benchmark.
//
// On the benchmark machine (a VM that hands free memory back to its host) a page-cache write into
// memory the host took back costs about five times the CPU of one into a page freed a moment ago
// (docs/benchmarks.md, "Page cache"). A growing page cache keeps landing in such memory, and a
// 3-broker cluster on one machine grows it three times as fast as one broker, so without control
// the figures would measure that machine effect as much as the brokers. Dropping needs root
// (/proc/sys/vm/drop_caches); without it the benchmark goes on and says once that it could not.
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';

export type PageCacheMode = 'drop' | 'hold' | 'keep';

const DROP_CACHES_FILE = '/proc/sys/vm/drop_caches';
/** While holding, the cache is dropped this often. */
export const HOLD_INTERVAL_MS = 3000;
/** A sync and drop that takes longer is not waited for by the next one. */
const DROP_TIMEOUT_MS = 10_000;

export class PageCacheControl {
  private warned = false;

  constructor(
    readonly mode: PageCacheMode,
    private readonly say: (line: string) => void,
  ) {}

  /** Before a size: sync and drop the clean page cache (modes drop and hold). */
  drop_now(): void {
    if (this.mode === 'keep') return;
    try {
      execFileSync('sync', { timeout: DROP_TIMEOUT_MS });
      fs.writeFileSync(DROP_CACHES_FILE, '1');
    } catch (error) {
      this.warn(error);
    }
  }

  /** Runs `work`; in mode hold, drops the page cache every HOLD_INTERVAL_MS meanwhile, off this process's thread. */
  async holding<T>(work: () => Promise<T>): Promise<T> {
    if (this.mode !== 'hold') return work();
    let running = false;
    const timer = setInterval(() => {
      if (running) return;
      running = true;
      execFile('sh', ['-c', `sync && echo 1 > ${DROP_CACHES_FILE}`], { timeout: DROP_TIMEOUT_MS }, (error) => {
        running = false;
        if (error) this.warn(error);
      });
    }, HOLD_INTERVAL_MS);
    try {
      return await work();
    } finally {
      clearInterval(timer);
    }
  }

  private warn(error: unknown): void {
    if (this.warned) return;
    this.warned = true;
    const reason = error instanceof Error ? error.message : String(error);
    this.say(`page cache not dropped (${reason}): the figures include its cost`);
  }
}
