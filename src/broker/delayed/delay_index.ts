// The in-memory index of pending delayed records, as a hierarchy of time buckets (a timing wheel
// that only keeps the buckets in use): records due within 10 s sit in 10 ms buckets, within an hour
// in 1 s buckets, later in 1 min buckets; as time passes a coarse bucket is split into the finer
// level. Each entry is a float64 reference (the delay log offset of the batch holding the record
// times 2^16 plus the record's index in it) and a uint16 due time within its bucket: 10 bytes, in
// chunks that never need copying, so ten million pending records cost about 100 MB, and the bucket
// count stays bounded by the levels' spans, not by the number of records.
//
// Only finest-level buckets whose end has passed are handed out: a record is never delivered
// early, and at most one fine bucket (10 ms) plus a scheduler tick late.

/** Records of one batch at most (the index is 16 bits). */
export const RECORDS_PER_BATCH_MAX = 65_536;
const BUCKET_INITIAL_ENTRIES = 8;

interface Level {
  bucket_ms: number;
  /** Records due within this span of now go into this level (or a finer one). */
  horizon_ms: number;
}

export const LEVELS: readonly Level[] = [
  { bucket_ms: 10, horizon_ms: 10_000 },
  { bucket_ms: 1_000, horizon_ms: 3_600_000 },
  { bucket_ms: 60_000, horizon_ms: Infinity },
];

export function pack(batch_offset: number, index: number): number {
  return batch_offset * RECORDS_PER_BATCH_MAX + index;
}

export function unpack(ref: number): { batch_offset: number; index: number } {
  const index = ref % RECORDS_PER_BATCH_MAX;
  return { batch_offset: (ref - index) / RECORDS_PER_BATCH_MAX, index };
}

/** Entries per chunk of a bucket: a bucket grows by whole chunks, never by copying. */
const CHUNK_ENTRIES = 16_384;

/**
 * One time bucket: references (float64) and due times as milliseconds past the bucket's start
 * (uint16: every level's bucket is shorter than 65,536 ms), in chunks. 10 bytes per entry; the
 * first chunk starts small and doubles up to CHUNK_ENTRIES.
 */
class Bucket {
  private refs: Float64Array[] = [new Float64Array(BUCKET_INITIAL_ENTRIES)];
  private dues: Uint16Array[] = [new Uint16Array(BUCKET_INITIAL_ENTRIES)];
  length = 0;

  constructor(readonly start_ms: number) {}

  push(due_ms: number, ref: number): void {
    const chunk = Math.floor(this.length / CHUNK_ENTRIES);
    const at = this.length % CHUNK_ENTRIES;
    if (chunk === this.refs.length) {
      this.refs.push(new Float64Array(CHUNK_ENTRIES));
      this.dues.push(new Uint16Array(CHUNK_ENTRIES));
    } else if (at === this.refs[chunk]!.length) {
      const size = Math.min(CHUNK_ENTRIES, this.refs[chunk]!.length * 2);
      const refs = new Float64Array(size);
      refs.set(this.refs[chunk]!);
      const dues = new Uint16Array(size);
      dues.set(this.dues[chunk]!);
      this.refs[chunk] = refs;
      this.dues[chunk] = dues;
    }
    this.refs[chunk]![at] = ref;
    this.dues[chunk]![at] = due_ms - this.start_ms;
    this.length++;
  }

  ref_at(i: number): number {
    return this.refs[Math.floor(i / CHUNK_ENTRIES)]![i % CHUNK_ENTRIES]!;
  }

  due_at(i: number): number {
    return this.start_ms + this.dues[Math.floor(i / CHUNK_ENTRIES)]![i % CHUNK_ENTRIES]!;
  }

  /** Overwrites entry `i` (compaction). */
  set(i: number, due_ms: number, ref: number): void {
    this.refs[Math.floor(i / CHUNK_ENTRIES)]![i % CHUNK_ENTRIES] = ref;
    this.dues[Math.floor(i / CHUNK_ENTRIES)]![i % CHUNK_ENTRIES] = due_ms - this.start_ms;
  }

  /** Keeps the first `length` entries, freeing whole chunks past them. */
  truncate(length: number): void {
    this.length = length;
    const chunks = Math.max(1, Math.ceil(length / CHUNK_ENTRIES));
    this.refs.length = chunks;
    this.dues.length = chunks;
  }

  bytes(): number {
    let bytes = 0;
    for (let c = 0; c < this.refs.length; c++) bytes += this.refs[c]!.byteLength + this.dues[c]!.byteLength;
    return bytes;
  }
}

class LevelBuckets {
  readonly buckets = new Map<number, Bucket>();
  /** Bucket keys in ascending order. */
  order: number[] = [];

  constructor(readonly level: Level) {}

  bucket(key: number): Bucket {
    let bucket = this.buckets.get(key);
    if (!bucket) {
      bucket = new Bucket(key * this.level.bucket_ms);
      this.buckets.set(key, bucket);
      this.order.splice(lower_bound(this.order, key), 0, key);
    }
    return bucket;
  }

  drop_first(): void {
    this.buckets.delete(this.order.shift()!);
  }
}

export class DelayIndex {
  private readonly levels = LEVELS.map((level) => new LevelBuckets(level));
  private count = 0;
  /** Entries per batch offset: what the delay log must keep (see oldest_batch). */
  private readonly per_batch = new Map<number, number>();

  get size(): number {
    return this.count;
  }

  add(due_ms: number, ref: number, now_ms: number): void {
    this.place(due_ms, ref, now_ms);
    this.count++;
    const batch = unpack(ref).batch_offset;
    this.per_batch.set(batch, (this.per_batch.get(batch) ?? 0) + 1);
  }

  private forget(ref: number): void {
    const batch = unpack(ref).batch_offset;
    const left = (this.per_batch.get(batch) ?? 1) - 1;
    if (left > 0) this.per_batch.set(batch, left);
    else this.per_batch.delete(batch);
  }

  /** The lowest batch offset an entry refers to, or Infinity (a pass over the batches held). */
  oldest_batch(): number {
    let oldest = Infinity;
    for (const batch of this.per_batch.keys()) if (batch < oldest) oldest = batch;
    return oldest;
  }

  private place(due_ms: number, ref: number, now_ms: number): void {
    const ahead = due_ms - now_ms;
    const level = this.levels.find((l) => ahead < l.level.horizon_ms)!;
    level.bucket(Math.floor(due_ms / level.level.bucket_ms)).push(due_ms, ref);
  }

  /** Splits coarse buckets that now fall within a finer level's horizon. */
  private cascade(now_ms: number): void {
    for (let i = this.levels.length - 1; i > 0; i--) {
      const coarse = this.levels[i]!;
      const finer_horizon = this.levels[i - 1]!.level.horizon_ms;
      const finer = this.levels[i - 1]!;
      while (coarse.order.length > 0 && coarse.order[0]! * coarse.level.bucket_ms < now_ms + finer_horizon) {
        const bucket = coarse.buckets.get(coarse.order[0]!)!;
        coarse.drop_first();
        // Into the finer level whatever the exact due time: placing by horizon again could put an
        // entry back into the bucket just emptied.
        for (let e = 0; e < bucket.length; e++) {
          const due_ms = bucket.due_at(e);
          finer.bucket(Math.floor(due_ms / finer.level.bucket_ms)).push(due_ms, bucket.ref_at(e));
        }
      }
    }
  }

  /** When the next records fall due (the end of the earliest bucket), or Infinity. */
  next_due_ms(now_ms: number): number {
    this.cascade(now_ms);
    const fine = this.levels[0]!;
    if (fine.order.length > 0) return (fine.order[0]! + 1) * fine.level.bucket_ms;
    for (const level of this.levels.slice(1))
      if (level.order.length > 0) return level.order[0]! * level.level.bucket_ms;
    return Infinity;
  }

  /** Removes and returns up to `max` references whose fine bucket has ended by `now_ms`. */
  take_due(now_ms: number, max: number): number[] {
    this.cascade(now_ms);
    const fine = this.levels[0]!;
    const out: number[] = [];
    while (fine.order.length > 0 && out.length < max) {
      const key = fine.order[0]!;
      if ((key + 1) * fine.level.bucket_ms > now_ms) break;
      const bucket = fine.buckets.get(key)!;
      const take = Math.min(bucket.length, max - out.length);
      for (let e = bucket.length - take; e < bucket.length; e++) {
        const ref = bucket.ref_at(e);
        out.push(ref);
        this.forget(ref);
      }
      bucket.truncate(bucket.length - take);
      this.count -= take;
      if (bucket.length === 0) fine.drop_first();
    }
    return out;
  }

  /** Drops every entry whose reference fails `keep` (a full pass: call it now and then). */
  retain(keep: (ref: number) => boolean): void {
    for (const level of this.levels) {
      for (const [key, bucket] of level.buckets) {
        let kept = 0;
        for (let e = 0; e < bucket.length; e++) {
          const ref = bucket.ref_at(e);
          if (!keep(ref)) {
            this.forget(ref);
            continue;
          }
          bucket.set(kept, bucket.due_at(e), ref);
          kept++;
        }
        this.count -= bucket.length - kept;
        bucket.truncate(kept);
        if (kept === 0) {
          level.buckets.delete(key);
          level.order.splice(lower_bound(level.order, key), 1);
        }
      }
    }
  }

  /** Bytes held by the buckets' arrays (for metrics and the memory benchmark). */
  bytes(): number {
    let bytes = 0;
    for (const level of this.levels) for (const bucket of level.buckets.values()) bytes += bucket.bytes();
    return bytes;
  }
}

function lower_bound(sorted: number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
