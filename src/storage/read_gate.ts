// Reads of a log's segment files run together; a swap of a segment's file (compaction) runs alone.
// A read looks a position up in a segment's index and then reads the file: the two must belong to
// the same file, so a swap waits for the reads under way and holds new ones back while it runs.
export class ReadGate {
  private readers = 0;
  /** Settles when the swap that holds the gate is done; null while reads may enter. */
  private held: Promise<void> | null = null;
  private drained: (() => void) | null = null;

  /** Runs `work` beside other reads, once no swap holds the gate. */
  async read<T>(work: () => Promise<T>): Promise<T> {
    while (this.held) await this.held;
    this.readers++;
    try {
      return await work();
    } finally {
      this.readers--;
      if (this.readers === 0 && this.drained) this.drained();
    }
  }

  /** Runs `work` with no read under way, holding reads back until it is done. */
  async alone<T>(work: () => Promise<T>): Promise<T> {
    while (this.held) await this.held;
    let release!: () => void;
    this.held = new Promise<void>((resolve) => (release = resolve));
    try {
      if (this.readers > 0) await new Promise<void>((resolve) => (this.drained = resolve));
      this.drained = null;
      return await work();
    } finally {
      this.held = null;
      release();
    }
  }
}
