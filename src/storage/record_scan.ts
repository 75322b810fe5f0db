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
} from './batch.ts';

/** Zig-zag varint reader over a bounded range; returns null past `end` or on an over-long varint. */
class VarintReader {
  constructor(
    private readonly buffer: Buffer,
    public position: number,
    private readonly end: number,
  ) {}

  varlong(): number | null {
    let unsigned = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      if (this.position >= this.end) return null;
      const byte = this.buffer[this.position++]!;
      unsigned += (byte & 0x7f) * scale;
      if ((byte & 0x80) === 0) {
        return unsigned % 2 === 0 ? unsigned / 2 : -(unsigned + 1) / 2;
      }
      scale *= 128;
    }
    return null;
  }
}

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
  const reader = new VarintReader(buffer, position + BATCH_HEADER_BYTES, end);
  for (let i = 0; i < count; i++) {
    const length = reader.varlong();
    if (length === null || length < 0) return base_offset;
    const record_end = reader.position + length;
    reader.position += 1; // attributes
    const timestamp_delta = reader.varlong();
    const offset_delta = reader.varlong();
    if (timestamp_delta === null || offset_delta === null || record_end > end) return base_offset;
    if (base_timestamp + timestamp_delta >= timestamp_ms) return base_offset + offset_delta;
    reader.position = record_end;
  }
  return base_offset;
}

/** True when some record of the batch may have a timestamp >= `timestamp_ms`. */
export function batch_reaches(buffer: Buffer, position: number, timestamp_ms: number): boolean {
  return batch_max_timestamp(buffer, position) >= timestamp_ms;
}
