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
import { TextBytesCache } from './text_bytes.ts';

export interface RecordHeader {
  key: string;
  value: Buffer | null;
}

export interface BatchRecord {
  key: Buffer | null;
  value: Buffer | null;
  timestamp_ms: number;
  headers?: readonly RecordHeader[];
  /** Followed by the batch's generated header (BatchOptions.generated_header). */
  generated_header?: boolean;
}

/**
 * A header the encoder writes itself, after their own headers, into the records that ask for it:
 * the SDK's message-id, whose bytes are made in the batch rather than as a Buffer per message.
 */
export interface GeneratedHeader {
  key: string;
  value_bytes: number;
  /** Writes the next value, `value_bytes` long, at `position`. */
  write(buffer: Buffer, position: number): void;
}

export interface BatchOptions {
  producer_id?: number;
  producer_epoch?: number;
  base_sequence?: number;
  /** Bits of the attributes field other than compression (e.g. transactional). */
  attributes?: number;
  /**
   * Compute the CRC (default true). False leaves it 0, for a writer that changes the batch and
   * computes it then (stamping a producer id and sequence, compressing).
   */
  crc?: boolean;
  /** The header of records with `generated_header` set. */
  generated_header?: GeneratedHeader;
}

function bytes_field_size(bytes: Buffer | null): number {
  return bytes === null ? varint_size(-1) : varint_size(bytes.length) + bytes.length;
}

function write_bytes_field(buffer: Buffer, position: number, bytes: Buffer | null): number {
  if (bytes === null) return write_varint(buffer, position, -1);
  position = write_varint(buffer, position, bytes.length);
  // TypedArray.set: Buffer.copy's argument checks cost more than the copy for small fields.
  buffer.set(bytes, position);
  return position + bytes.length;
}

/** Header keys encoded lately: keys repeat from record to record (a message-id header on each, say). */
const HEADER_KEYS_CACHED_MAX = 256;
const header_keys = new TextBytesCache(HEADER_KEYS_CACHED_MAX);

/** A header key as written: its UTF-8 length, then the bytes. */
function write_text_field(buffer: Buffer, position: number, text: string): number {
  const bytes = header_keys.bytes(text);
  const length = bytes.length;
  position = write_varint(buffer, position, length);
  // Keys are short: a byte loop beats TypedArray.set's fixed cost.
  for (let b = 0; b < length; b++) buffer[position + b] = bytes[b]!;
  return position + length;
}

function record_body_size(
  record: BatchRecord,
  timestamp_delta: number,
  offset_delta: number,
  generated: GeneratedHeader | undefined,
): number {
  let size = 1 + varint_size(timestamp_delta) + varint_size(offset_delta);
  size += bytes_field_size(record.key) + bytes_field_size(record.value);
  const headers = record.headers;
  const count = headers?.length ?? 0;
  for (let h = 0; h < count; h++) {
    const header = headers![h]!;
    const key_bytes = header_keys.bytes(header.key).length;
    size += varint_size(key_bytes) + key_bytes + bytes_field_size(header.value);
  }
  if (record.generated_header) {
    if (!generated) throw new RangeError('a record asks for a generated header and the batch has none');
    const key_bytes = header_keys.bytes(generated.key).length;
    size += varint_size(key_bytes) + key_bytes + varint_size(generated.value_bytes) + generated.value_bytes;
    return size + varint_size(count + 1);
  }
  return size + varint_size(count);
}

/** Encodes `records` as one uncompressed v2 batch with base offset 0 and a valid CRC32C. */
export function encode_record_batch(records: readonly BatchRecord[], options: BatchOptions = {}): Buffer {
  const count = records.length;
  if (count === 0) throw new RangeError('a record batch needs at least one record');
  const base_timestamp = records[0]!.timestamp_ms;
  let max_timestamp = base_timestamp;
  const bodies = new Array<number>(count);
  let size = BATCH_HEADER_BYTES;
  for (let i = 0; i < count; i++) {
    const record = records[i]!;
    if (record.timestamp_ms > max_timestamp) max_timestamp = record.timestamp_ms;
    const body = record_body_size(record, record.timestamp_ms - base_timestamp, i, options.generated_header);
    bodies[i] = body;
    size += varint_size(body) + body;
  }
  // Not zero-filled, as every byte is written below (the check at the end confirms it), and not a
  // slice of Node's shared pool, which whoever keeps the batch would keep alive with it.
  const buffer = Buffer.allocUnsafeSlow(size);
  write_batch_header(buffer, size, count, base_timestamp, max_timestamp, options);
  let position = BATCH_HEADER_BYTES;
  const generated = options.generated_header;
  for (let i = 0; i < count; i++) {
    position = write_record(buffer, position, records[i]!, bodies[i]!, base_timestamp, i);
    if (records[i]!.generated_header) position = write_generated_header(buffer, position, generated!);
  }
  if (position !== size) throw new Error(`record batch encoding wrote ${position} of ${size} bytes`);
  if (options.crc !== false) buffer.writeUInt32BE(crc32c(buffer.subarray(OFFSET_ATTRIBUTES)), OFFSET_CRC);
  return buffer;
}

function write_batch_header(
  buffer: Buffer,
  size: number,
  count: number,
  base_timestamp: number,
  max_timestamp: number,
  options: BatchOptions,
): void {
  write_int64(buffer, OFFSET_BASE_OFFSET, 0);
  buffer.writeInt32BE(size - BATCH_LOG_OVERHEAD_BYTES, OFFSET_BATCH_LENGTH);
  buffer.writeInt32BE(0, OFFSET_LEADER_EPOCH);
  buffer.writeInt8(BATCH_MAGIC_V2, OFFSET_MAGIC);
  buffer.writeUInt32BE(0, OFFSET_CRC);
  buffer.writeInt16BE((options.attributes ?? 0) & ~ATTRIBUTE_COMPRESSION_MASK, OFFSET_ATTRIBUTES);
  buffer.writeInt32BE(count - 1, OFFSET_LAST_OFFSET_DELTA);
  write_int64(buffer, OFFSET_BASE_TIMESTAMP, base_timestamp);
  write_int64(buffer, OFFSET_MAX_TIMESTAMP, max_timestamp);
  write_int64(buffer, OFFSET_PRODUCER_ID, options.producer_id ?? -1);
  buffer.writeInt16BE(options.producer_epoch ?? -1, OFFSET_PRODUCER_EPOCH);
  buffer.writeInt32BE(options.base_sequence ?? -1, OFFSET_BASE_SEQUENCE);
  buffer.writeInt32BE(count, OFFSET_RECORDS_COUNT);
}

function write_record(
  buffer: Buffer,
  position: number,
  record: BatchRecord,
  body: number,
  base_timestamp: number,
  offset_delta: number,
): number {
  position = write_varint(buffer, position, body);
  buffer[position++] = 0;
  position = write_varint(buffer, position, record.timestamp_ms - base_timestamp);
  position = write_varint(buffer, position, offset_delta);
  position = write_bytes_field(buffer, position, record.key);
  position = write_bytes_field(buffer, position, record.value);
  const headers = record.headers;
  const count = headers?.length ?? 0;
  position = write_varint(buffer, position, record.generated_header ? count + 1 : count);
  for (let h = 0; h < count; h++) {
    const header = headers![h]!;
    position = write_text_field(buffer, position, header.key);
    position = write_bytes_field(buffer, position, header.value);
  }
  return position;
}

function write_generated_header(buffer: Buffer, position: number, generated: GeneratedHeader): number {
  position = write_text_field(buffer, position, generated.key);
  position = write_varint(buffer, position, generated.value_bytes);
  generated.write(buffer, position);
  return position + generated.value_bytes;
}

export interface DecodedRecord extends BatchRecord {
  offset: number;
}

/**
 * Decodes the records of the uncompressed batch at `position` (offsets as stamped by the log);
 * with `from`/`to`, only those with offsets in that window (the others are stepped over unread).
 */
export function decode_record_batch(buffer: Buffer, position = 0, from = 0, to = Infinity): DecodedRecord[] {
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
      const offset = base_offset + offset_delta;
      if (offset < from || offset > to) {
        reader.leave_record();
        continue;
      }
      const key = reader.bytes();
      const value = reader.bytes();
      const header_count = reader.varint();
      const headers: RecordHeader[] = [];
      for (let h = 0; h < header_count; h++) {
        const header_key = reader.bytes();
        headers.push({ key: header_key?.toString('utf8') ?? '', value: reader.bytes() });
      }
      records.push({
        offset,
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
