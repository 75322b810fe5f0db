// Recently written batches kept in memory so consumers at the tail never touch the disk.
// Each partition has a TailWindow: a contiguous run of batches ending at the partition's written
// end. One TailCache bounds the bytes of all windows together and evicts oldest-first across
// partitions, which keeps every window a contiguous suffix of its log.
//
// A cached batch is usually a view into the request or response frame it arrived in, and that
// frame's other batches are cached beside it (the other partitions of a produce or of a follower's
// fetch). Copying each batch out would double what the broker allocates per byte received, and
// with it the garbage collections that allocation drives, so the cache keeps the views and
// charges each backing ArrayBuffer once, for all of its bytes, while any batch in it is cached.
import { assert } from './errors.ts';

export interface CachedBatch {
  readonly buffer: Buffer;
  readonly base_offset: number;
  readonly last_offset: number;
  alive: boolean;
}

/**
 * A batch whose backing memory exceeds it by more than this, and is also more than
 * 1/BACKING_SHARE_OF_BUDGET_MAX of the budget, is copied: one small batch must not pin a large frame.
 */
const BACKING_BYTES_SLACK = 4096;
const BACKING_SHARE_OF_BUDGET_MAX = 8;

export class TailCache {
  private readonly order: Array<{ window: TailWindow; batch: CachedBatch }> = [];
  private order_head = 0;
  /** Cached batches per backing ArrayBuffer; each backing is charged once. */
  private readonly backings = new Map<ArrayBufferLike, number>();
  /** Bytes of backing memory the cached batches keep alive. */
  bytes = 0;

  constructor(readonly bytes_max: number) {}

  /** The buffer to cache for `buffer`: itself, or a copy when its backing is too large to pin. */
  owned(buffer: Buffer): Buffer {
    const backing_bytes = buffer.buffer.byteLength;
    const too_large =
      backing_bytes > buffer.length + BACKING_BYTES_SLACK &&
      backing_bytes * BACKING_SHARE_OF_BUDGET_MAX > this.bytes_max;
    if (!too_large) return buffer;
    // A copy with a backing of its own: Buffer.from would take a slab of Node's pool (64 KiB from
    // Node 24 on), which would pin more than the batch.
    const copy = Buffer.allocUnsafeSlow(buffer.length);
    buffer.copy(copy);
    return copy;
  }

  window(): TailWindow {
    return new TailWindow(this);
  }

  /** @internal called by TailWindow */
  admitted(window: TailWindow, batch: CachedBatch): void {
    this.order.push({ window, batch });
    const backing = batch.buffer.buffer;
    const users = this.backings.get(backing) ?? 0;
    if (users === 0) this.bytes += backing.byteLength;
    this.backings.set(backing, users + 1);
    while (this.bytes > this.bytes_max && this.order_head < this.order.length) {
      const oldest = this.order[this.order_head]!;
      this.order[this.order_head] = undefined as never;
      this.order_head++;
      if (oldest.batch.alive) oldest.window.evict_oldest(oldest.batch);
    }
    if (this.order_head > 1024 && this.order_head * 2 > this.order.length) {
      this.order.splice(0, this.order_head);
      this.order_head = 0;
    }
  }

  /** @internal */
  released(buffer: Buffer): void {
    const backing = buffer.buffer;
    const users = this.backings.get(backing);
    assert(users !== undefined && users > 0, 'tail cache released a batch it does not hold');
    if (users > 1) {
      this.backings.set(backing, users - 1);
      return;
    }
    this.backings.delete(backing);
    this.bytes -= backing.byteLength;
    assert(this.bytes >= 0, 'tail cache byte count went negative');
  }
}

export class TailWindow {
  private batches: CachedBatch[] = [];
  private head = 0;

  constructor(private readonly cache: TailCache) {}

  get first_offset(): number {
    return this.head < this.batches.length ? this.batches[this.head]!.base_offset : -1;
  }

  add(buffer: Buffer, base_offset: number, last_offset: number): void {
    if (this.cache.bytes_max === 0) return;
    const last = this.head < this.batches.length ? this.batches[this.batches.length - 1]! : null;
    assert(last === null || base_offset > last.last_offset, 'tail cache batches must be contiguous and increasing');
    const batch: CachedBatch = { buffer: this.cache.owned(buffer), base_offset, last_offset, alive: true };
    this.batches.push(batch);
    this.cache.admitted(this, batch);
  }

  /** @internal */
  evict_oldest(batch: CachedBatch): void {
    assert(this.batches[this.head] === batch, 'tail cache eviction out of order');
    this.drop(batch);
    this.batches[this.head] = undefined as never;
    this.head++;
    if (this.head > 64 && this.head * 2 > this.batches.length) {
      this.batches = this.batches.slice(this.head);
      this.head = 0;
    }
  }

  private drop(batch: CachedBatch): void {
    batch.alive = false;
    this.cache.released(batch.buffer);
  }

  /** Forgets the batches wholly below `offset` (a compacted segment's file now holds what is kept). */
  drop_below(offset: number): void {
    while (this.head < this.batches.length && this.batches[this.head]!.last_offset < offset) {
      this.drop(this.batches[this.head]!);
      this.batches[this.head] = undefined as never;
      this.head++;
    }
  }

  /** Forgets everything (the log was truncated or closed). */
  clear(): void {
    for (let i = this.head; i < this.batches.length; i++) this.drop(this.batches[i]!);
    this.batches = [];
    this.head = 0;
  }

  /**
   * Whole batches starting with the one that holds `offset`, up to `bytes_max` (at least one),
   * none reaching `offset_limit`; null when the window does not reach back to `offset`.
   */
  read(offset: number, bytes_max: number, offset_limit: number): Buffer[] | null {
    if (this.head >= this.batches.length || offset < this.batches[this.head]!.base_offset) return null;
    let low = this.head;
    let high = this.batches.length - 1;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.batches[middle]!.last_offset < offset) low = middle + 1;
      else high = middle;
    }
    const out: Buffer[] = [];
    let bytes = 0;
    for (let i = low; i < this.batches.length; i++) {
      const batch = this.batches[i]!;
      if (batch.last_offset < offset) continue;
      if (batch.last_offset >= offset_limit) break;
      if (out.length > 0 && bytes + batch.buffer.length > bytes_max) break;
      out.push(batch.buffer);
      bytes += batch.buffer.length;
    }
    return out;
  }
}
