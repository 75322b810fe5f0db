// Kafka record batch v2 (magic 2): encoding records into a batch and decoding them back, for
// producers (SDK, CLI, benchmarks) and for tools that look inside messages. The broker's hot path
// does not use this: it stores and serves batches without decoding records. Uncompressed only
// here; compression codecs wrap the records section.
import { crc32c } from '@node-rs/crc32';
import {
  ATTRIBUTE_COMPRESSION_MASK,
  BATCH_HEADER_BYTES,
  BATCH_LOG_OVERHEAD_BYTES,
  BATCH_MAGIC_V2,
  OFFSET_ATTRIBUTES,
  OFFSET_BASE_OFFSET,
  OFFSET_BASE_SEQUENCE,
  OFFSET_BASE_TIMESTAMP,
  OFFSET_BATCH_LENGTH,
  OFFSET_CRC,
  OFFSET_LAST_OFFSET_DELTA,
  OFFSET_LEADER_EPOCH,
  OFFSET_MAGIC,
  OFFSET_MAX_TIMESTAMP,
  OFFSET_PRODUCER_EPOCH,
  OFFSET_PRODUCER_ID,
  OFFSET_RECORDS_COUNT,
  batch_base_offset,
  batch_base_timestamp,
  batch_compression,
  batch_records_count,
  batch_size_at,
  write_int64,
} from '../format/batch_layout.ts';
import { RecordFormatError, RecordReader, varint_size, write_varint } from '../format/record_reader.ts';

export interface RecordHeader {
  key: string;
  value: Buffer | null;
}

export interface BatchRecord {
  key: Buffer | null;
  value: Buffer | null;
  timestamp_ms: number;
  headers?: RecordHeader[];
}

export interface BatchOptions {
  producer_id?: number;
  producer_epoch?: number;
  base_sequence?: number;
  /** Bits of the attributes field other than compression (e.g. transactional). */
  attributes?: number;
}

function bytes_field_size(bytes: Buffer | null): number {
  return bytes === null ? varint_size(-1) : varint_size(bytes.length) + bytes.length;
}

function write_bytes_field(buffer: Buffer, position: number, bytes: Buffer | null): number {
  if (bytes === null) return write_varint(buffer, position, -1);
  position = write_varint(buffer, position, bytes.length);
  bytes.copy(buffer, position);
  return position + bytes.length;
}

function record_body_size(record: BatchRecord, timestamp_delta: number, offset_delta: number): number {
  let size = 1 + varint_size(timestamp_delta) + varint_size(offset_delta);
  size += bytes_field_size(record.key) + bytes_field_size(record.value);
  const headers = record.headers ?? [];
  size += varint_size(headers.length);
  for (const header of headers) {
    size += bytes_field_size(Buffer.from(header.key, 'utf8')) + bytes_field_size(header.value);
  }
  return size;
}

/** Encodes `records` as one uncompressed v2 batch with base offset 0 and a valid CRC32C. */
export function encode_record_batch(records: readonly BatchRecord[], options: BatchOptions = {}): Buffer {
  if (records.length === 0) throw new RangeError('a record batch needs at least one record');
  const base_timestamp = records[0]!.timestamp_ms;
  let max_timestamp = base_timestamp;
  const bodies: number[] = [];
  let size = BATCH_HEADER_BYTES;
  records.forEach((record, i) => {
    max_timestamp = Math.max(max_timestamp, record.timestamp_ms);
    const body = record_body_size(record, record.timestamp_ms - base_timestamp, i);
    bodies.push(body);
    size += varint_size(body) + body;
  });
  const buffer = Buffer.alloc(size);
  write_int64(buffer, OFFSET_BASE_OFFSET, 0);
  buffer.writeInt32BE(size - BATCH_LOG_OVERHEAD_BYTES, OFFSET_BATCH_LENGTH);
  buffer.writeInt32BE(0, OFFSET_LEADER_EPOCH);
  buffer.writeInt8(BATCH_MAGIC_V2, OFFSET_MAGIC);
  buffer.writeInt16BE((options.attributes ?? 0) & ~ATTRIBUTE_COMPRESSION_MASK, OFFSET_ATTRIBUTES);
  buffer.writeInt32BE(records.length - 1, OFFSET_LAST_OFFSET_DELTA);
  write_int64(buffer, OFFSET_BASE_TIMESTAMP, base_timestamp);
  write_int64(buffer, OFFSET_MAX_TIMESTAMP, max_timestamp);
  write_int64(buffer, OFFSET_PRODUCER_ID, options.producer_id ?? -1);
  buffer.writeInt16BE(options.producer_epoch ?? -1, OFFSET_PRODUCER_EPOCH);
  buffer.writeInt32BE(options.base_sequence ?? -1, OFFSET_BASE_SEQUENCE);
  buffer.writeInt32BE(records.length, OFFSET_RECORDS_COUNT);
  let position = BATCH_HEADER_BYTES;
  records.forEach((record, i) => {
    position = write_varint(buffer, position, bodies[i]!);
    buffer[position++] = 0;
    position = write_varint(buffer, position, record.timestamp_ms - base_timestamp);
    position = write_varint(buffer, position, i);
    position = write_bytes_field(buffer, position, record.key);
    position = write_bytes_field(buffer, position, record.value);
    const headers = record.headers ?? [];
    position = write_varint(buffer, position, headers.length);
    for (const header of headers) {
      position = write_bytes_field(buffer, position, Buffer.from(header.key, 'utf8'));
      position = write_bytes_field(buffer, position, header.value);
    }
  });
  buffer.writeUInt32BE(crc32c(buffer.subarray(OFFSET_ATTRIBUTES)), OFFSET_CRC);
  return buffer;
}

export interface DecodedRecord extends BatchRecord {
  offset: number;
}

/** Decodes the records of the uncompressed batch at `position` (offsets as stamped by the log). */
export function decode_record_batch(buffer: Buffer, position = 0): DecodedRecord[] {
  if (batch_compression(buffer, position) !== 0) throw new RangeError('compressed batches are not decoded here');
  const base_offset = batch_base_offset(buffer, position);
  const base_timestamp = batch_base_timestamp(buffer, position);
  const count = batch_records_count(buffer, position);
  const reader = new RecordReader(buffer, position + BATCH_HEADER_BYTES, position + batch_size_at(buffer, position));
  const records: DecodedRecord[] = [];
  try {
    for (let i = 0; i < count; i++) {
      reader.enter_record();
      reader.byte();
      const timestamp_delta = reader.varint();
      const offset_delta = reader.varint();
      const key = reader.bytes();
      const value = reader.bytes();
      const header_count = reader.varint();
      const headers: RecordHeader[] = [];
      for (let h = 0; h < header_count; h++) {
        const header_key = reader.bytes();
        headers.push({ key: header_key?.toString('utf8') ?? '', value: reader.bytes() });
      }
      records.push({
        offset: base_offset + offset_delta,
        key,
        value,
        timestamp_ms: base_timestamp + timestamp_delta,
        headers,
      });
      reader.leave_record();
    }
  } catch (error) {
    if (error instanceof RecordFormatError) throw new RangeError(error.message);
    throw error;
  }
  return records;
}

/** A header's value as text (the last one when the name is given twice); null when absent. */
export function header_text(record: DecodedRecord, name: string): string | null {
  let found: string | null = null;
  for (const header of record.headers ?? [])
    if (header.key === name && header.value !== null) found = header.value.toString('utf8');
  return found;
}
