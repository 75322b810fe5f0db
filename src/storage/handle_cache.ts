// A bounded cache of open file descriptors shared by all partitions. Files are opened on first use
// and closed least-recently-used first; a descriptor in use (pinned) is never closed. When every
// descriptor is pinned and the limit is reached, callers wait in FIFO order, so the number of open
// files never exceeds handles_max. Each caller holds at most one lease at a time (no deadlock).
import type { Fd, FileIO } from './file_io.ts';
import { assert } from './errors.ts';

interface Entry {
  path: string;
  fd: Fd | null;
  opening: Promise<Fd> | null;
  pins: number;
  /** Set by forget(): close as soon as the last pin is released, and never reuse. */
  doomed: boolean;
}

export interface HandleLease {
  readonly fd: Fd;
  release(): void;
}

export class HandleCache {
  private readonly entries = new Map<string, Entry>(); // iteration order = least recently used first
  private readonly waiters: Array<() => void> = [];
  private closing = 0;
  /** Forgotten entries still pinned: their descriptors stay open until released. */
  private lingering = 0;

  constructor(
    private readonly io: FileIO,
    readonly handles_max: number,
  ) {
    assert(handles_max >= 1, 'handles_max must be at least 1');
  }

  get open_count(): number {
    return this.entries.size + this.lingering + this.closing;
  }

  /** Runs `use` with a read-write descriptor of `path`; `create` makes the file when missing. */
  async with_handle<T>(path: string, use: (fd: Fd) => Promise<T>, create = false): Promise<T> {
    const lease = await this.acquire(path, create);
    try {
      return await use(lease.fd);
    } finally {
      lease.release();
    }
  }

  async acquire(path: string, create = false): Promise<HandleLease> {
    for (;;) {
      const existing = this.entries.get(path);
      if (existing && !existing.doomed) {
        this.entries.delete(path); // move to the most recently used end
        this.entries.set(path, existing);
        existing.pins++;
        try {
          const fd = existing.fd ?? (await existing.opening!);
          return this.lease(existing, fd);
        } catch (error) {
          this.unpin(existing);
          throw error;
        }
      }
      if (this.open_count < this.handles_max) return this.open_new(path, create);
      if (await this.evict_one()) continue;
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  private async open_new(path: string, create: boolean): Promise<HandleLease> {
    const entry: Entry = { path, fd: null, opening: null, pins: 1, doomed: false };
    entry.opening = this.io.open(path, create ? 'create' : 'update');
    this.entries.set(path, entry);
    try {
      entry.fd = await entry.opening;
    } catch (error) {
      if (this.entries.get(path) === entry) this.entries.delete(path);
      if (entry.doomed) this.lingering--;
      this.wake();
      throw error;
    } finally {
      entry.opening = null;
    }
    return this.lease(entry, entry.fd);
  }

  private lease(entry: Entry, fd: Fd): HandleLease {
    let released = false;
    return {
      fd,
      release: () => {
        assert(!released, () => `handle for ${entry.path} released twice`);
        released = true;
        this.unpin(entry);
      },
    };
  }

  private unpin(entry: Entry): void {
    entry.pins--;
    assert(entry.pins >= 0, () => `negative pin count on ${entry.path}`);
    if (entry.pins === 0 && entry.doomed) void this.close_entry(entry);
    else if (entry.pins === 0) this.wake();
  }

  private wake(): void {
    const waiter = this.waiters.shift();
    if (waiter) waiter();
  }

  /** Closes the least recently used unpinned descriptor; false when every one is pinned. */
  private async evict_one(): Promise<boolean> {
    for (const entry of this.entries.values()) {
      if (entry.pins === 0 && entry.fd !== null) {
        await this.close_entry(entry);
        return true;
      }
    }
    return false;
  }

  private async close_entry(entry: Entry): Promise<void> {
    if (this.entries.get(entry.path) === entry) this.entries.delete(entry.path);
    if (entry.doomed) this.lingering--;
    const fd = entry.fd;
    entry.fd = null;
    assert(fd !== null, () => `closing ${entry.path} twice`);
    this.closing++;
    try {
      await this.io.close(fd);
    } catch {
      // A close error cannot lose acknowledged data: every acknowledgement waited for its fdatasync.
    } finally {
      this.closing--;
      this.wake();
    }
  }

  /** Closes the descriptor of `path` once nobody uses it (before unlinking or renaming the file). */
  async forget(path: string): Promise<void> {
    const entry = this.entries.get(path);
    if (!entry) return;
    entry.doomed = true;
    this.entries.delete(path);
    this.lingering++;
    if (entry.opening) {
      try {
        await entry.opening;
      } catch {
        return; // open_new's failure path already uncounted it
      }
    }
    if (entry.pins === 0 && entry.fd !== null) await this.close_entry(entry);
  }

  async forget_prefix(prefix: string): Promise<void> {
    const paths = [...this.entries.keys()].filter((path) => path.startsWith(prefix));
    await Promise.all(paths.map((path) => this.forget(path)));
  }

  async close_all(): Promise<void> {
    await Promise.all([...this.entries.keys()].map((path) => this.forget(path)));
  }
}
