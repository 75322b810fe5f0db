// The two sparse indexes of a segment, held in memory as typed arrays and saved as flat files.
//   offset index: (relative offset int32, file position int32) -> where a batch starts
//   time index:   (max timestamp so far int64, relative offset int32) -> where to start a time search
// Both are strictly increasing in every column, so lookups are binary searches. Layouts are in
// docs/storage-format.md; decode() rejects a file that breaks any structural rule.
import { assert } from './errors.ts';
import { read_int64, write_int64 } from '../format/batch_layout.ts';

export const OFFSET_INDEX_ENTRY_BYTES = 8;
export const TIME_INDEX_ENTRY_BYTES = 12;
const INITIAL_CAPACITY = 16;

/** Index of the last element <= target in a sorted prefix of `values`, or -1. */
function floor_search(values: Int32Array | Float64Array, count: number, target: number): number {
  let low = 0;
  let high = count - 1;
  let found = -1;
  while (low <= high) {
    const middle = (low + high) >>> 1;
    if (values[middle]! <= target) {
      found = middle;
      low = middle + 1;
    } else {
      high = middle - 1;
    }
  }
  return found;
}

export class OffsetIndex {
  private relative_offsets = new Int32Array(INITIAL_CAPACITY);
  private positions = new Int32Array(INITIAL_CAPACITY);
  count = 0;

  get memory_bytes(): number {
    return this.relative_offsets.byteLength + this.positions.byteLength;
  }

  relative_offset_at(i: number): number {
    return this.relative_offsets[i]!;
  }

  position_at(i: number): number {
    return this.positions[i]!;
  }

  append(relative_offset: number, position: number): void {
    if (this.count > 0) {
      assert(relative_offset > this.relative_offsets[this.count - 1]!, 'offset index offsets must increase');
      assert(position > this.positions[this.count - 1]!, 'offset index positions must increase');
    }
    if (this.count === this.positions.length) {
      this.relative_offsets = grow_int32(this.relative_offsets);
      this.positions = grow_int32(this.positions);
    }
    this.relative_offsets[this.count] = relative_offset;
    this.positions[this.count] = position;
    this.count++;
  }

  /** Entry of the last indexed batch starting at or before `relative_offset`, or -1. */
  floor(relative_offset: number): number {
    return floor_search(this.relative_offsets, this.count, relative_offset);
  }

  /** Drops every entry pointing at or past `position` (after the file was truncated there). */
  truncate_to_position(position: number): void {
    while (this.count > 0 && this.positions[this.count - 1]! >= position) this.count--;
  }

  encode(): Buffer {
    const buffer = Buffer.allocUnsafe(this.count * OFFSET_INDEX_ENTRY_BYTES);
    for (let i = 0; i < this.count; i++) {
      buffer.writeInt32BE(this.relative_offsets[i]!, i * OFFSET_INDEX_ENTRY_BYTES);
      buffer.writeInt32BE(this.positions[i]!, i * OFFSET_INDEX_ENTRY_BYTES + 4);
    }
    return buffer;
  }

  /** null when the bytes break a structural rule; entries past `segment_bytes` are invalid. */
  static decode(buffer: Buffer, segment_bytes: number): OffsetIndex | null {
    if (buffer.length % OFFSET_INDEX_ENTRY_BYTES !== 0) return null;
    const index = new OffsetIndex();
    for (let at = 0; at < buffer.length; at += OFFSET_INDEX_ENTRY_BYTES) {
      const relative_offset = buffer.readInt32BE(at);
      const position = buffer.readInt32BE(at + 4);
      if (relative_offset < 0 || position < 0 || position >= segment_bytes) return null;
      if (
        index.count > 0 &&
        (relative_offset <= index.relative_offset_at(index.count - 1) || position <= index.position_at(index.count - 1))
      ) {
        return null;
      }
      index.append(relative_offset, position);
    }
    return index;
  }
}

export class TimeIndex {
  private timestamps = new Float64Array(INITIAL_CAPACITY);
  private relative_offsets = new Int32Array(INITIAL_CAPACITY);
  count = 0;

  get memory_bytes(): number {
    return this.timestamps.byteLength + this.relative_offsets.byteLength;
  }

  get last_timestamp(): number {
    return this.count === 0 ? -Infinity : this.timestamps[this.count - 1]!;
  }

  timestamp_at(i: number): number {
    return this.timestamps[i]!;
  }

  relative_offset_at(i: number): number {
    return this.relative_offsets[i]!;
  }

  /** Records that the batch at `relative_offset` raised the segment's max timestamp to `timestamp`. */
  append(timestamp: number, relative_offset: number): void {
    if (this.count > 0) {
      assert(timestamp > this.timestamps[this.count - 1]!, 'time index timestamps must increase');
      assert(relative_offset > this.relative_offsets[this.count - 1]!, 'time index offsets must increase');
    }
    if (this.count === this.timestamps.length) {
      const grown = new Float64Array(this.timestamps.length * 2);
      grown.set(this.timestamps);
      this.timestamps = grown;
      this.relative_offsets = grow_int32(this.relative_offsets);
    }
    this.timestamps[this.count] = timestamp;
    this.relative_offsets[this.count] = relative_offset;
    this.count++;
  }

  /**
   * Entry of the last indexed point whose max timestamp is below `timestamp`, or -1. Every record at
   * or before that point is older than `timestamp`, so a search may start there.
   */
  last_below(timestamp: number): number {
    return floor_search(this.timestamps, this.count, timestamp - 1);
  }

  truncate_to_offset(relative_offset: number): void {
    while (this.count > 0 && this.relative_offsets[this.count - 1]! >= relative_offset) this.count--;
  }

  encode(): Buffer {
    const buffer = Buffer.allocUnsafe(this.count * TIME_INDEX_ENTRY_BYTES);
    for (let i = 0; i < this.count; i++) {
      write_int64(buffer, i * TIME_INDEX_ENTRY_BYTES, this.timestamps[i]!);
      buffer.writeInt32BE(this.relative_offsets[i]!, i * TIME_INDEX_ENTRY_BYTES + 8);
    }
    return buffer;
  }

  static decode(buffer: Buffer, relative_offset_end: number): TimeIndex | null {
    if (buffer.length % TIME_INDEX_ENTRY_BYTES !== 0) return null;
    const index = new TimeIndex();
    for (let at = 0; at < buffer.length; at += TIME_INDEX_ENTRY_BYTES) {
      const timestamp = read_int64(buffer, at);
      const relative_offset = buffer.readInt32BE(at + 8);
      if (relative_offset < 0 || relative_offset >= relative_offset_end) return null;
      if (
        index.count > 0 &&
        (timestamp <= index.last_timestamp || relative_offset <= index.relative_offset_at(index.count - 1))
      ) {
        return null;
      }
      index.append(timestamp, relative_offset);
    }
    return index;
  }
}

function grow_int32(values: Int32Array): Int32Array<ArrayBuffer> {
  const grown = new Int32Array(values.length * 2);
  grown.set(values);
  return grown;
}
