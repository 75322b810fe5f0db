/** Runs `work` over `items` with at most `parallelism_max` in flight; rethrows the first failure. */
export async function run_bounded<T>(
  items: readonly T[],
  parallelism_max: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | null = null;
  const worker = async () => {
    while (next < items.length && failure === null) {
      try {
        await work(items[next++]!);
      } catch (error) {
        failure = { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallelism_max, items.length) }, worker));
  if (failure !== null) throw (failure as { error: unknown }).error;
}

/** Admits at most `slots` holders at once; others wait in FIFO order. */
export class Semaphore {
  private free: number;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly slots: number) {
    this.free = slots;
  }

  async with<T>(work: () => Promise<T>): Promise<T> {
    if (this.free > 0) this.free--;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    }
  }
}

/**
 * Coalesces directory fsyncs: callers asking for the same directory while a sync of it runs share
 * the next one (the running one may have started before their change), so a burst of file
 * creations in one directory costs two fsyncs, not one each.
 */
export class DirectorySync {
  private readonly states = new Map<string, { running: Promise<void> | null; waiting: Promise<void> | null }>();

  constructor(private readonly sync: (dir: string) => Promise<void>) {}

  request(dir: string): Promise<void> {
    let state = this.states.get(dir);
    if (!state) {
      state = { running: null, waiting: null };
      this.states.set(dir, state);
    }
    if (!state.running) return this.launch(dir, state);
    const joined = state;
    joined.waiting ??= joined
      .running!.catch(() => undefined)
      .then(() => {
        joined.waiting = null;
        return this.launch(dir, joined);
      });
    return joined.waiting;
  }

  private launch(dir: string, state: { running: Promise<void> | null; waiting: Promise<void> | null }): Promise<void> {
    const running: Promise<void> = this.sync(dir).finally(() => {
      if (state.running !== running) return;
      state.running = null;
      if (!state.waiting) this.states.delete(dir);
    });
    state.running = running;
    return running;
  }
}
