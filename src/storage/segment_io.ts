// Reading a segment's files: scanning batches (recovery, index rebuild), loading and saving the
// index files, and the read path from a file. Pure functions over a Segment and the I/O boundary;
// the partition log decides when each runs.
import type { FileIO } from './file_io.ts';
import type { HandleCache } from './handle_cache.ts';
import { read_at, read_whole_file, replace_file_atomically } from './file_util.ts';
import { RELATIVE_OFFSET_MAX, batch_crc_matches, check_stored_batch } from './batch.ts';
import {
  BATCH_HEADER_BYTES,
  BATCH_LOG_OVERHEAD_BYTES,
  batch_base_offset,
  batch_last_offset_delta,
  batch_max_timestamp,
  batch_size_at,
} from '../format/batch_layout.ts';
import { RECOVERY_BATCH_BYTES_MAX, RECOVERY_READ_BYTES } from './config.ts';
import { CorruptDataError, assert } from './errors.ts';
import { OffsetIndex, TimeIndex } from './segment_index.ts';
import type { Segment } from './segment.ts';
import { first_offset_at_or_after } from './record_scan.ts';

export interface ScanStop {
  position: number;
  why: string;
}

/**
 * Walks the batches of `segment` from its current size_bytes to the end of the file, checking each
 * (framing, magic, CRC, offsets increasing) and recording it in the segment's indexes. Stops at the
 * first batch that fails and reports where; bytes from there on are not part of the log. With
 * `offset_end`, stops quietly before the first batch reaching it.
 */
export async function scan_segment(
  io: FileIO,
  handles: HandleCache,
  segment: Segment,
  index_interval_bytes: number,
  offset_end = Number.POSITIVE_INFINITY,
): Promise<ScanStop | null> {
  return handles.with_handle(segment.log_path, async (fd) => {
    const file_bytes = await io.fsize(fd);
    let chunk: Buffer = Buffer.alloc(0);
    let chunk_position = segment.size_bytes;
    while (segment.size_bytes < file_bytes) {
      const position = segment.size_bytes;
      let at = position - chunk_position;
      if (at + BATCH_LOG_OVERHEAD_BYTES > chunk.length || at + batch_size_at(chunk, at) > chunk.length) {
        const wanted = at + BATCH_LOG_OVERHEAD_BYTES <= chunk.length ? batch_size_at(chunk, at) : 0;
        const length = Math.min(
          file_bytes - position,
          Math.max(RECOVERY_READ_BYTES, Math.min(wanted, RECOVERY_BATCH_BYTES_MAX)),
        );
        chunk = await read_at(io, fd, length, position);
        chunk_position = position;
        at = 0;
      }
      const check = check_stored_batch(chunk, at, chunk.length, RECOVERY_BATCH_BYTES_MAX);
      if (!check.ok) return { position, why: check.why };
      const base_offset = batch_base_offset(chunk, at);
      const last_offset = base_offset + batch_last_offset_delta(chunk, at);
      if (last_offset >= offset_end) return null; // a truncation point: the scan ends before this batch
      if (base_offset < segment.end_offset) {
        return { position, why: `offset ${base_offset} does not follow ${segment.end_offset - 1}` };
      }
      if (last_offset - segment.base_offset > RELATIVE_OFFSET_MAX) {
        return { position, why: `offset ${last_offset} beyond the segment's relative range` };
      }
      segment.record_batch(
        base_offset,
        last_offset,
        batch_max_timestamp(chunk, at),
        position,
        check.size,
        index_interval_bytes,
      );
    }
    return null;
  });
}

/** Loads the index files of a segment whose data is trusted; false when missing or damaged. */
export async function load_saved_indexes(io: FileIO, handles: HandleCache, segment: Segment): Promise<boolean> {
  const index_bytes = await read_whole_file(io, segment.index_path);
  const time_bytes = await read_whole_file(io, segment.time_index_path);
  if (index_bytes === null || time_bytes === null) return false;
  const index = OffsetIndex.decode(index_bytes, Math.max(segment.size_bytes, 1));
  const time_index = TimeIndex.decode(time_bytes, Math.max(segment.end_offset - segment.base_offset, 1));
  if (index === null || time_index === null) return false;
  if (index.count > 0 && !(await entry_points_at_batch(io, handles, segment, index))) return false;
  segment.adopt_indexes(index, time_index, 0);
  if (time_index.count > 0) {
    segment.max_timestamp_ms = time_index.last_timestamp;
    segment.offset_of_max_timestamp = segment.base_offset + time_index.relative_offset_at(time_index.count - 1);
  }
  segment.indexes_saved = true;
  return true;
}

/** Spot check: the last offset-index entry must point at the header of the batch it names. */
async function entry_points_at_batch(
  io: FileIO,
  handles: HandleCache,
  segment: Segment,
  index: OffsetIndex,
): Promise<boolean> {
  const entry = index.count - 1;
  const position = index.position_at(entry);
  const header = await handles.with_handle(segment.log_path, (fd) => read_at(io, fd, BATCH_HEADER_BYTES, position));
  return (
    header.length === BATCH_HEADER_BYTES &&
    batch_base_offset(header, 0) === segment.base_offset + index.relative_offset_at(entry) &&
    position + batch_size_at(header, 0) <= segment.size_bytes
  );
}

/** Writes both index files (each replaced atomically) with a closing time-index entry. */
export async function save_indexes(io: FileIO, segment: Segment): Promise<void> {
  const index = segment.index;
  const time_index = segment.time_index;
  assert(index !== null && time_index !== null, () => `saving unloaded indexes of segment ${segment.base_offset}`);
  const relative_max = segment.offset_of_max_timestamp - segment.base_offset;
  const last_relative = time_index.count > 0 ? time_index.relative_offset_at(time_index.count - 1) : -1;
  if (segment.max_timestamp_ms > time_index.last_timestamp && relative_max > last_relative) {
    time_index.append(segment.max_timestamp_ms, relative_max);
  }
  await replace_file_atomically(io, segment.index_path, index.encode());
  await replace_file_atomically(io, segment.time_index_path, time_index.encode());
}

export interface SegmentReadLimits {
  /** Return batches up to this many bytes, but always at least one whole batch. */
  bytes_max: number;
  /** Stop before any batch holding this offset or a later one. */
  offset_limit: number;
  verify_crc: boolean;
  partition: string;
}

/** File reads are sized to cover the index gap before the wanted offset plus the bytes asked for. */
const READ_CHUNK_BYTES_MIN = 64 * 1024;
const READ_CHUNK_BYTES_MAX = 8 * 1024 * 1024;

/**
 * Whole batches of `segment` from the one holding `offset`, read from the position its index
 * gives. Every batch is checked (framing, and CRC when verify_crc) before it is returned.
 */
export async function read_segment(
  io: FileIO,
  handles: HandleCache,
  segment: Segment,
  offset: number,
  index_interval_bytes: number,
  limits: SegmentReadLimits,
): Promise<Buffer[]> {
  const index = segment.index;
  assert(index !== null, () => `reading segment ${segment.base_offset} without its index`);
  const entry = index.floor(offset - segment.base_offset);
  let position = entry < 0 ? 0 : index.position_at(entry);
  // Where the batch at `position` starts: what a repair truncates to when it is not readable.
  let boundary_offset = segment.base_offset + (entry < 0 ? 0 : index.relative_offset_at(entry));
  const end = segment.size_bytes;
  const out: Buffer[] = [];
  let bytes = 0;
  let chunk_bytes = Math.min(
    READ_CHUNK_BYTES_MAX,
    Math.max(READ_CHUNK_BYTES_MIN, limits.bytes_max + index_interval_bytes),
  );
  const corrupt = (at: number, detail: string) =>
    new CorruptDataError(limits.partition, segment.base_offset, at, boundary_offset, detail);
  await handles.with_handle(segment.log_path, async (fd) => {
    while (position < end) {
      const chunk = await read_at(io, fd, Math.min(chunk_bytes, end - position), position);
      let at = 0;
      while (at + BATCH_LOG_OVERHEAD_BYTES <= chunk.length) {
        const size = batch_size_at(chunk, at);
        if (size < BATCH_HEADER_BYTES || position + at + size > end)
          throw corrupt(position + at, `batch length ${size}`);
        if (at + size > chunk.length) break;
        const base_offset = batch_base_offset(chunk, at);
        const last_offset = base_offset + batch_last_offset_delta(chunk, at);
        if (last_offset < offset) {
          at += size;
          boundary_offset = last_offset + 1;
          continue;
        }
        if (last_offset >= limits.offset_limit) return;
        if (out.length > 0 && bytes + size > limits.bytes_max) return;
        if (limits.verify_crc && !batch_crc_matches(chunk, at, size)) throw corrupt(position + at, 'CRC32C mismatch');
        out.push(chunk.subarray(at, at + size));
        bytes += size;
        at += size;
        boundary_offset = last_offset + 1;
      }
      if (at === 0) {
        if (chunk.length < BATCH_LOG_OVERHEAD_BYTES) throw corrupt(position, 'file ends inside a batch header');
        chunk_bytes = batch_size_at(chunk, 0); // one batch larger than the chunk: read it whole
        continue;
      }
      position += at;
      if (bytes >= limits.bytes_max) return;
    }
  });
  return out;
}

/**
 * The first offset in `segment` whose record timestamp is >= `timestamp_ms`, or null when no batch
 * of the segment reaches it. Starts from the time index, then walks batch headers.
 */
export async function find_offset_by_time(
  io: FileIO,
  handles: HandleCache,
  segment: Segment,
  timestamp_ms: number,
  offset_limit: number,
  partition: string,
): Promise<number | null> {
  const index = segment.index;
  const time_index = segment.time_index;
  assert(index !== null && time_index !== null, () => `time lookup in segment ${segment.base_offset} without indexes`);
  const time_entry = time_index.last_below(timestamp_ms);
  const start_offset =
    time_entry < 0 ? segment.base_offset : segment.base_offset + time_index.relative_offset_at(time_entry);
  let offset = start_offset;
  for (;;) {
    const batches = await read_segment(io, handles, segment, offset, 0, {
      bytes_max: READ_CHUNK_BYTES_MIN,
      offset_limit,
      verify_crc: true,
      partition,
    });
    if (batches.length === 0) return null;
    for (const batch of batches) {
      if (batch_max_timestamp(batch, 0) >= timestamp_ms)
        return Math.max(offset, first_offset_at_or_after(batch, 0, timestamp_ms));
      offset = batch_base_offset(batch, 0) + batch_last_offset_delta(batch, 0) + 1;
    }
  }
}
