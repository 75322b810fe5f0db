// Bounds the memory held by the indexes of closed segments across all partitions. Active segments
// keep their indexes outside this budget (one per partition). A closed segment's indexes are
// dropped least-recently-used first and reloaded from their files on the next lookup; indexes not
// yet saved to disk are never dropped.
import type { Segment } from './segment.ts';

export class IndexCache {
  private readonly segments = new Map<Segment, number>(); // LRU order; value = bytes counted
  bytes = 0;

  constructor(readonly bytes_max: number) {}

  touch(segment: Segment): void {
    const counted = this.segments.get(segment);
    if (counted !== undefined) this.segments.delete(segment);
    else this.bytes += segment.index_memory_bytes;
    this.segments.set(segment, counted ?? segment.index_memory_bytes);
    this.trim();
  }

  forget(segment: Segment): void {
    const counted = this.segments.get(segment);
    if (counted === undefined) return;
    this.segments.delete(segment);
    this.bytes -= counted;
  }

  private trim(): void {
    if (this.bytes <= this.bytes_max) return;
    for (const [segment, counted] of this.segments) {
      if (this.bytes <= this.bytes_max) break;
      if (!segment.indexes_saved) continue;
      this.segments.delete(segment);
      this.bytes -= counted;
      segment.drop_indexes();
    }
  }
}
