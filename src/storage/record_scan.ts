// The one place storage looks inside a batch: finding the first record at or after a timestamp in
// an uncompressed batch, for offset-by-time lookups (never on the append or fetch path). For a
// compressed batch the answer stays at batch granularity, which is conservative: a consumer that
// starts there sees every record at or after the timestamp, plus a few older ones.
import {
  ATTRIBUTE_COMPRESSION_MASK,
  ATTRIBUTE_LOG_APPEND_TIME,
  BATCH_HEADER_BYTES,
  OFFSET_BASE_TIMESTAMP,
  OFFSET_RECORDS_COUNT,
  batch_attributes,
  batch_base_offset,
  batch_max_timestamp,
  batch_size_at,
  read_int64,
} from '../format/batch_layout.ts';
import { RecordFormatError, RecordReader } from '../format/record_reader.ts';

/**
 * Offset of the first record of the batch at `position` whose timestamp is >= `timestamp_ms`, or
 * the batch's base offset when its records cannot be read without decompressing.
 */
export function first_offset_at_or_after(buffer: Buffer, position: number, timestamp_ms: number): number {
  const base_offset = batch_base_offset(buffer, position);
  const attributes = batch_attributes(buffer, position);
  if ((attributes & ATTRIBUTE_COMPRESSION_MASK) !== 0 || (attributes & ATTRIBUTE_LOG_APPEND_TIME) !== 0) {
    // LogAppendTime: every record carries the batch's max timestamp.
    return base_offset;
  }
  const end = position + batch_size_at(buffer, position);
  const base_timestamp = read_int64(buffer, position + OFFSET_BASE_TIMESTAMP);
  const count = buffer.readInt32BE(position + OFFSET_RECORDS_COUNT);
  const reader = new RecordReader(buffer, position + BATCH_HEADER_BYTES, end);
  try {
    for (let i = 0; i < count; i++) {
      reader.enter_record();
      reader.byte(); // attributes
      const timestamp_delta = reader.varint();
      const offset_delta = reader.varint();
      if (base_timestamp + timestamp_delta >= timestamp_ms) return base_offset + offset_delta;
      reader.leave_record();
    }
  } catch (error) {
    // Records that cannot be read: answer at batch granularity, as for a compressed batch.
    if (!(error instanceof RecordFormatError)) throw error;
  }
  return base_offset;
}

/** True when some record of the batch may have a timestamp >= `timestamp_ms`. */
export function batch_reaches(buffer: Buffer, position: number, timestamp_ms: number): boolean {
  return batch_max_timestamp(buffer, position) >= timestamp_ms;
}
