// Record batch v2 header: the unit the log stores, indexes and serves. The storage layer reads and
// patches only the fixed 61-byte header; records are opaque bytes here (see record_scan.ts for the
// one read-side exception). Layout facts: docs/storage-format.md.
import { crc32c } from '@node-rs/crc32';
import { InvalidBatchError, MessageTooLargeError } from './errors.ts';

export const BATCH_HEADER_BYTES = 61;
/** baseOffset (8) + batchLength (4): the bytes batchLength does not count. */
export const BATCH_LOG_OVERHEAD_BYTES = 12;
export const BATCH_MAGIC_V2 = 2;

export const OFFSET_BASE_OFFSET = 0;
export const OFFSET_BATCH_LENGTH = 8;
export const OFFSET_LEADER_EPOCH = 12;
export const OFFSET_MAGIC = 16;
export const OFFSET_CRC = 17;
export const OFFSET_ATTRIBUTES = 21;
export const OFFSET_LAST_OFFSET_DELTA = 23;
export const OFFSET_BASE_TIMESTAMP = 27;
export const OFFSET_MAX_TIMESTAMP = 35;
export const OFFSET_PRODUCER_ID = 43;
export const OFFSET_PRODUCER_EPOCH = 51;
export const OFFSET_BASE_SEQUENCE = 53;
export const OFFSET_RECORDS_COUNT = 57;

export const ATTRIBUTE_COMPRESSION_MASK = 0x07;
export const ATTRIBUTE_LOG_APPEND_TIME = 0x08;
export const ATTRIBUTE_TRANSACTIONAL = 0x10;
export const ATTRIBUTE_CONTROL = 0x20;

/** Offsets inside one segment are stored relative to its base as int32. */
export const RELATIVE_OFFSET_MAX = 0x7fffffff;

const TWO_POW_32 = 0x1_0000_0000;

/** Reads a non-negative or negative int64 as a JS number; exact for |value| < 2^53. */
export function read_int64(buffer: Buffer, position: number): number {
  const high = buffer.readInt32BE(position);
  const low = buffer.readUInt32BE(position + 4);
  return high * TWO_POW_32 + low;
}

export function write_int64(buffer: Buffer, position: number, value: number): void {
  const high = Math.floor(value / TWO_POW_32);
  const low = value - high * TWO_POW_32;
  buffer.writeInt32BE(high, position);
  buffer.writeUInt32BE(low, position + 4);
}

/** Total bytes of the batch starting at `position`, from its batchLength field. */
export function batch_size_at(buffer: Buffer, position: number): number {
  return buffer.readInt32BE(position + OFFSET_BATCH_LENGTH) + BATCH_LOG_OVERHEAD_BYTES;
}

export function batch_base_offset(buffer: Buffer, position: number): number {
  return read_int64(buffer, position + OFFSET_BASE_OFFSET);
}

export function batch_last_offset_delta(buffer: Buffer, position: number): number {
  return buffer.readInt32BE(position + OFFSET_LAST_OFFSET_DELTA);
}

export function batch_max_timestamp(buffer: Buffer, position: number): number {
  return read_int64(buffer, position + OFFSET_MAX_TIMESTAMP);
}

export function batch_attributes(buffer: Buffer, position: number): number {
  return buffer.readInt16BE(position + OFFSET_ATTRIBUTES);
}

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
