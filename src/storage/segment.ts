// One segment of a partition log: a data file of record batches and its two sparse indexes.
// A segment tracks what has been written to its file; the partition log decides what to write and
// when, and owns all I/O. Indexes of closed segments may be dropped from memory (index cache) and
// loaded again from their files.
import path from 'node:path';
import { assert } from './errors.ts';
import { OffsetIndex, TimeIndex } from './segment_index.ts';

export const SEGMENT_NAME_DIGITS = 20;

export function segment_file_stem(base_offset: number): string {
  return String(base_offset).padStart(SEGMENT_NAME_DIGITS, '0');
}

/** Base offset from a data file name like 00000000000000000042.log, or null. */
export function parse_segment_file_name(name: string): number | null {
  const match = /^(\d{20})\.log$/.exec(name);
  if (!match) return null;
  const base_offset = Number(match[1]);
  return Number.isSafeInteger(base_offset) ? base_offset : null;
}

export class Segment {
  readonly log_path: string;
  readonly index_path: string;
  readonly time_index_path: string;

  /** Bytes of whole batches written to the file (what reads may touch). */
  size_bytes: number;
  /** size_bytes plus the bytes of appends assigned here and not yet written. */
  assigned_bytes: number;
  /** Offset after the last written batch; base_offset while empty. */
  end_offset: number;
  /** Highest batch max timestamp written here, and the base offset of that batch; -1 when unknown. */
  max_timestamp_ms = -1;
  offset_of_max_timestamp = -1;
  /** When the segment began taking appends in this process (for segment_ms). */
  readonly created_ms: number;

  /** In memory while the segment is active or its indexes are cached; null when dropped. */
  index: OffsetIndex | null = null;
  time_index: TimeIndex | null = null;
  private bytes_since_index_entry = 0;
  /** Index files on disk match the in-memory indexes (set after a close or a roll writes them). */
  indexes_saved = false;
  /** The data file exists on disk and its directory entry has been fsynced. */
  file_durable = false;
  deleted = false;

  constructor(
    dir: string,
    readonly base_offset: number,
    size_bytes: number,
    created_ms: number,
  ) {
    const stem = path.join(dir, segment_file_stem(base_offset));
    this.log_path = `${stem}.log`;
    this.index_path = `${stem}.index`;
    this.time_index_path = `${stem}.timeindex`;
    this.size_bytes = size_bytes;
    this.assigned_bytes = size_bytes;
    this.end_offset = base_offset;
    this.created_ms = created_ms;
  }

  get is_empty(): boolean {
    return this.size_bytes === 0;
  }

  get indexes_loaded(): boolean {
    return this.index !== null && this.time_index !== null;
  }

  get index_memory_bytes(): number {
    return (this.index?.memory_bytes ?? 0) + (this.time_index?.memory_bytes ?? 0);
  }

  /** Starts empty in-memory indexes (a new segment, or a rebuild by scanning). */
  reset_indexes(): void {
    this.index = new OffsetIndex();
    this.time_index = new TimeIndex();
    this.bytes_since_index_entry = 0;
    this.max_timestamp_ms = -1;
    this.offset_of_max_timestamp = -1;
    this.indexes_saved = false;
  }

  adopt_indexes(index: OffsetIndex, time_index: TimeIndex, bytes_since_index_entry: number): void {
    this.index = index;
    this.time_index = time_index;
    this.bytes_since_index_entry = bytes_since_index_entry;
  }

  drop_indexes(): void {
    assert(this.indexes_saved, () => `dropping unsaved indexes of segment ${this.base_offset}`);
    this.index = null;
    this.time_index = null;
  }

  /**
   * Accounts for a batch now in the file at `position`. Index entries go in every
   * `index_interval_bytes`; the first batch of a segment is found at position 0 without one.
   */
  record_batch(
    base_offset: number,
    last_offset: number,
    max_timestamp_ms: number,
    position: number,
    size: number,
    index_interval_bytes: number,
  ): void {
    assert(position === this.size_bytes, () => `batch at ${position} does not follow segment end ${this.size_bytes}`);
    assert(
      base_offset >= this.end_offset,
      () => `batch offset ${base_offset} below segment end offset ${this.end_offset}`,
    );
    assert(this.index !== null && this.time_index !== null, 'indexes must be loaded to record a batch');
    if (max_timestamp_ms > this.max_timestamp_ms) {
      this.max_timestamp_ms = max_timestamp_ms;
      this.offset_of_max_timestamp = base_offset;
    }
    if (this.bytes_since_index_entry >= index_interval_bytes) {
      const relative_offset = base_offset - this.base_offset;
      this.index.append(relative_offset, position);
      const relative_max = this.offset_of_max_timestamp - this.base_offset;
      if (
        this.max_timestamp_ms > this.time_index.last_timestamp &&
        relative_max > (this.time_index.count > 0 ? this.time_index.relative_offset_at(this.time_index.count - 1) : -1)
      ) {
        this.time_index.append(this.max_timestamp_ms, relative_max);
      }
      this.bytes_since_index_entry = 0;
    }
    this.bytes_since_index_entry += size;
    this.size_bytes = position + size;
    this.end_offset = last_offset + 1;
    this.indexes_saved = false;
  }
}
