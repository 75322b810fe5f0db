// The cleaner's map of each key to the offset of its latest record, bounded in memory. Keys are
// the text of their bytes (batch_records.ts: latin1, one character per byte); each entry is
// counted at its key's length plus what a Map entry costs.
/** Memory a Map entry of a string key and a number costs besides the key's characters (measured: about 60 B in V8). */
const ENTRY_OVERHEAD_BYTES = 64;

export class KeyMap {
  private readonly offsets = new Map<string, number>();
  private bytes = 0;

  constructor(private readonly bytes_max: number) {}

  /** Records the key's record at `offset` (later offsets come later); false when the memory is full. */
  put(key: string, offset: number): boolean {
    if (!this.offsets.has(key)) {
      const cost = key.length + ENTRY_OVERHEAD_BYTES;
      if (this.bytes + cost > this.bytes_max) return false;
      this.bytes += cost;
    }
    this.offsets.set(key, offset);
    return true;
  }

  /** The offset of the key's latest record mapped, if any. */
  latest(key: string): number | undefined {
    return this.offsets.get(key);
  }

  get size(): number {
    return this.offsets.size;
  }
}
