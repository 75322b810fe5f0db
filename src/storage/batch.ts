// Record batch v2 header checks and stamps: the unit the log stores, indexes and serves. The storage
// layer reads and patches only the fixed 61-byte header (its layout: format/batch_layout.ts);
// records are opaque bytes here (see record_scan.ts for the one read-side exception).
import { crc32c } from '@node-rs/crc32';
import {
  ATTRIBUTE_CONTROL,
  ATTRIBUTE_LOG_APPEND_TIME,
  BATCH_HEADER_BYTES,
  BATCH_LOG_OVERHEAD_BYTES,
  BATCH_MAGIC_V2,
  OFFSET_ATTRIBUTES,
  OFFSET_BASE_OFFSET,
  OFFSET_BASE_SEQUENCE,
  OFFSET_BATCH_LENGTH,
  OFFSET_CRC,
  OFFSET_LEADER_EPOCH,
  OFFSET_MAGIC,
  OFFSET_MAX_TIMESTAMP,
  OFFSET_PRODUCER_ID,
  OFFSET_RECORDS_COUNT,
  batch_attributes,
  batch_base_offset,
  batch_compression,
  batch_last_offset_delta,
  batch_size_at,
  read_int64,
  records_count_fits,
  write_int64,
} from '../format/batch_layout.ts';
import { InvalidArgumentError, InvalidBatchError, MessageTooLargeError, assert } from './errors.ts';

/** Offsets inside one segment are stored relative to its base as int32. */
export const RELATIVE_OFFSET_MAX = 0x7fffffff;

export function batch_crc_matches(buffer: Buffer, position: number, size: number): boolean {
  const stored = buffer.readUInt32BE(position + OFFSET_CRC);
  return crc32c(buffer.subarray(position + OFFSET_ATTRIBUTES, position + size)) === stored;
}

export function rewrite_crc(buffer: Buffer, position: number, size: number): void {
  buffer.writeUInt32BE(crc32c(buffer.subarray(position + OFFSET_ATTRIBUTES, position + size)), position + OFFSET_CRC);
}

export interface BatchCheckLimits {
  /** Largest batch accepted, in bytes including the log overhead. */
  message_bytes_max: number;
  /** Client batches must have recordsCount == lastOffsetDelta + 1 and no control flag. */
  client_batch: boolean;
}

/**
 * Checks the header of the batch at `position` and returns its size. Throws InvalidBatchError or
 * MessageTooLargeError naming the reason. Reads only the header and runs one CRC32C pass.
 */
export function check_batch(buffer: Buffer, position: number, limits: BatchCheckLimits): number {
  const available = buffer.length - position;
  if (available < BATCH_HEADER_BYTES) {
    throw new InvalidBatchError('truncated', `${available} bytes is less than the ${BATCH_HEADER_BYTES}-byte header`);
  }
  const batch_length = buffer.readInt32BE(position + OFFSET_BATCH_LENGTH);
  const size = batch_length + BATCH_LOG_OVERHEAD_BYTES;
  if (size < BATCH_HEADER_BYTES) {
    throw new InvalidBatchError('length', `batchLength ${batch_length} is shorter than the header`);
  }
  if (size > limits.message_bytes_max) throw new MessageTooLargeError(size, limits.message_bytes_max);
  if (size > available) {
    throw new InvalidBatchError('truncated', `batchLength says ${size} bytes but only ${available} were given`);
  }
  const magic = buffer.readInt8(position + OFFSET_MAGIC);
  if (magic !== BATCH_MAGIC_V2) throw new InvalidBatchError('magic', `magic ${magic}, expected ${BATCH_MAGIC_V2}`);
  if (!batch_crc_matches(buffer, position, size)) {
    throw new InvalidBatchError('crc', 'CRC32C over attributes..end does not match the stored crc');
  }
  const last_offset_delta = batch_last_offset_delta(buffer, position);
  if (last_offset_delta < 0 || last_offset_delta > RELATIVE_OFFSET_MAX / 2) {
    throw new InvalidBatchError('offset_delta', `lastOffsetDelta ${last_offset_delta} is out of range`);
  }
  // Readers of the records size their work by the count; a compressed batch is checked once decompressed.
  if (batch_compression(buffer, position) === 0 && !records_count_fits(buffer, position, size - BATCH_HEADER_BYTES)) {
    throw new InvalidBatchError(
      'record_count',
      `recordsCount ${buffer.readInt32BE(position + OFFSET_RECORDS_COUNT)} does not fit ${size - BATCH_HEADER_BYTES} ` +
        'bytes of records',
    );
  }
  if (limits.client_batch) {
    const records_count = buffer.readInt32BE(position + OFFSET_RECORDS_COUNT);
    if (records_count <= 0 || records_count !== last_offset_delta + 1) {
      throw new InvalidBatchError(
        'record_count',
        `recordsCount ${records_count} does not match lastOffsetDelta ${last_offset_delta} + 1`,
      );
    }
    if ((batch_attributes(buffer, position) & ATTRIBUTE_CONTROL) !== 0) {
      throw new InvalidBatchError('control', 'clients may not write control batches');
    }
    const producer_id = read_int64(buffer, position + OFFSET_PRODUCER_ID);
    if (producer_id >= 0 && buffer.readInt32BE(position + OFFSET_BASE_SEQUENCE) < 0) {
      throw new InvalidBatchError('sequence', `producer id ${producer_id} without a base sequence`);
    }
  }
  return size;
}

/** Outcome of checking stored bytes during recovery: a size, or why the tail stops here. */
export type StoredBatchCheck =
  | { ok: true; size: number }
  | { ok: false; why: 'short_header' | 'length' | 'short_batch' | 'magic' | 'crc' | 'offset_delta' };

/** Like check_batch but for bytes already on disk: never throws, no client rules. */
export function check_stored_batch(buffer: Buffer, position: number, end: number, size_max: number): StoredBatchCheck {
  if (end - position < BATCH_HEADER_BYTES) return { ok: false, why: 'short_header' };
  const size = batch_size_at(buffer, position);
  if (size < BATCH_HEADER_BYTES || size > size_max) return { ok: false, why: 'length' };
  if (position + size > end) return { ok: false, why: 'short_batch' };
  if (buffer.readInt8(position + OFFSET_MAGIC) !== BATCH_MAGIC_V2) return { ok: false, why: 'magic' };
  if (batch_last_offset_delta(buffer, position) < 0) return { ok: false, why: 'offset_delta' };
  if (!batch_crc_matches(buffer, position, size)) return { ok: false, why: 'crc' };
  return { ok: true, size };
}

/** Stamps the offsets and leader epoch the log assigned. Both fields lie outside the CRC. */
export function stamp_batch(buffer: Buffer, position: number, base_offset: number, leader_epoch: number): void {
  write_int64(buffer, position + OFFSET_BASE_OFFSET, base_offset);
  buffer.writeInt32BE(leader_epoch, position + OFFSET_LEADER_EPOCH);
}

/** Marks the batch LogAppendTime with the broker's clock; this changes covered bytes, so the CRC too. */
export function stamp_log_append_time(buffer: Buffer, position: number, size: number, now_ms: number): void {
  const attributes = batch_attributes(buffer, position);
  buffer.writeInt16BE(attributes | ATTRIBUTE_LOG_APPEND_TIME, position + OFFSET_ATTRIBUTES);
  write_int64(buffer, position + OFFSET_MAX_TIMESTAMP, now_ms);
  rewrite_crc(buffer, position, size);
}

/**
 * Checks every batch of an append (back to back in `records`; `checked` when the caller already
 * ran check_batch on them) and returns how many offsets they span together.
 */
export function check_batches(records: Buffer, checked: boolean, limits: BatchCheckLimits): number {
  if (records.length === 0) throw new InvalidBatchError('truncated', 'no record batch given');
  let span = 0;
  for (let position = 0; position < records.length;) {
    const size = checked ? batch_size_at(records, position) : check_batch(records, position, limits);
    assert(
      size >= BATCH_HEADER_BYTES && position + size <= records.length,
      () => `batch at ${position} was not checked`,
    );
    span += batch_last_offset_delta(records, position) + 1;
    position += size;
  }
  return span;
}

/** How the log stamps an append's batches: the offsets from `base_offset` on and its leader epoch. */
export interface BatchStamp {
  base_offset: number;
  leader_epoch: number;
  /** The broker time for LogAppendTime topics, null for CreateTime. */
  log_append_time_ms: number | null;
}

/** Stamps every batch of an append in place; returns the offset after the last one. */
export function stamp_batches(records: Buffer, stamp: BatchStamp): number {
  let offset = stamp.base_offset;
  for (let position = 0; position < records.length;) {
    const size = batch_size_at(records, position);
    stamp_batch(records, position, offset, stamp.leader_epoch);
    if (stamp.log_append_time_ms !== null) stamp_log_append_time(records, position, size, stamp.log_append_time_ms);
    offset += batch_last_offset_delta(records, position) + 1;
    position += size;
  }
  return offset;
}

/**
 * A follower's copy keeps the leader's offsets: it must continue the log at `next_offset`, or after
 * it where a compacted leader's log has a gap (batches its cleaner removed), never before it.
 */
export function check_batches_continue(records: Buffer, next_offset: number, name: string): number {
  let offset = next_offset;
  for (let position = 0; position < records.length;) {
    const given = batch_base_offset(records, position);
    if (given < offset)
      throw new InvalidArgumentError(
        `${name}: replicated batch at offset ${given} does not continue the log at ${offset}`,
      );
    offset = given + batch_last_offset_delta(records, position) + 1;
    position += batch_size_at(records, position);
  }
  return offset;
}
