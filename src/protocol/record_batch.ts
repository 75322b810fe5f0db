// Kafka record batch v2 (magic 2): encoding records into a batch and decoding them back, for
// producers (SDK, CLI, benchmarks) and for tools that look inside messages. The broker's hot path
// does not use this: it stores and serves batches without decoding records. Uncompressed only
// here; compression codecs wrap the records section.
import { crc32c } from '@node-rs/crc32';

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

const HEADER_BYTES = 61;

function zigzag(value: number): number {
  return value >= 0 ? value * 2 : -value * 2 - 1;
}

function varint_size(value: number): number {
  let unsigned = zigzag(value);
  let size = 1;
  while (unsigned >= 128) {
    unsigned = Math.floor(unsigned / 128);
    size++;
  }
  return size;
}

function write_varint(buffer: Buffer, position: number, value: number): number {
  let unsigned = zigzag(value);
  while (unsigned >= 128) {
    buffer[position++] = (unsigned % 128) | 0x80;
    unsigned = Math.floor(unsigned / 128);
  }
  buffer[position++] = unsigned;
  return position;
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

function write_int64(buffer: Buffer, position: number, value: number): void {
  buffer.writeBigInt64BE(BigInt(value), position);
}

/** Encodes `records` as one uncompressed v2 batch with base offset 0 and a valid CRC32C. */
export function encode_record_batch(records: readonly BatchRecord[], options: BatchOptions = {}): Buffer {
  if (records.length === 0) throw new RangeError('a record batch needs at least one record');
  const base_timestamp = records[0]!.timestamp_ms;
  let max_timestamp = base_timestamp;
  const bodies: number[] = [];
  let size = HEADER_BYTES;
  records.forEach((record, i) => {
    max_timestamp = Math.max(max_timestamp, record.timestamp_ms);
    const body = record_body_size(record, record.timestamp_ms - base_timestamp, i);
    bodies.push(body);
    size += varint_size(body) + body;
  });
  const buffer = Buffer.alloc(size);
  write_int64(buffer, 0, 0);
  buffer.writeInt32BE(size - 12, 8);
  buffer.writeInt32BE(0, 12);
  buffer.writeInt8(2, 16);
  buffer.writeInt16BE((options.attributes ?? 0) & ~0x07, 21);
  buffer.writeInt32BE(records.length - 1, 23);
  write_int64(buffer, 27, base_timestamp);
  write_int64(buffer, 35, max_timestamp);
  write_int64(buffer, 43, options.producer_id ?? -1);
  buffer.writeInt16BE(options.producer_epoch ?? -1, 51);
  buffer.writeInt32BE(options.base_sequence ?? -1, 53);
  buffer.writeInt32BE(records.length, 57);
  let position = HEADER_BYTES;
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
  buffer.writeUInt32BE(crc32c(buffer.subarray(21)), 17);
  return buffer;
}

export interface DecodedRecord extends BatchRecord {
  offset: number;
}

function read_varint(buffer: Buffer, cursor: { at: number }, end: number): number {
  let unsigned = 0;
  let scale = 1;
  for (let i = 0; i < 10; i++) {
    if (cursor.at >= end) throw new RangeError('varint runs past the end of the batch');
    const byte = buffer[cursor.at++]!;
    unsigned += (byte & 0x7f) * scale;
    if ((byte & 0x80) === 0) return unsigned % 2 === 0 ? unsigned / 2 : -(unsigned + 1) / 2;
    scale *= 128;
  }
  throw new RangeError('varint longer than 10 bytes');
}

function read_bytes_field(buffer: Buffer, cursor: { at: number }, end: number): Buffer | null {
  const length = read_varint(buffer, cursor, end);
  if (length < 0) return null;
  if (cursor.at + length > end) throw new RangeError('field runs past the end of the batch');
  const bytes = buffer.subarray(cursor.at, cursor.at + length);
  cursor.at += length;
  return bytes;
}

/** Decodes the records of the uncompressed batch at `position` (offsets as stamped by the log). */
export function decode_record_batch(buffer: Buffer, position = 0): DecodedRecord[] {
  const size = buffer.readInt32BE(position + 8) + 12;
  const end = position + size;
  if ((buffer.readInt16BE(position + 21) & 0x07) !== 0) throw new RangeError('compressed batches are not decoded here');
  const base_offset = Number(buffer.readBigInt64BE(position));
  const base_timestamp = Number(buffer.readBigInt64BE(position + 27));
  const count = buffer.readInt32BE(position + 57);
  const cursor = { at: position + HEADER_BYTES };
  const records: DecodedRecord[] = [];
  for (let i = 0; i < count; i++) {
    const length = read_varint(buffer, cursor, end);
    const record_end = cursor.at + length;
    cursor.at += 1;
    const timestamp_delta = read_varint(buffer, cursor, record_end);
    const offset_delta = read_varint(buffer, cursor, record_end);
    const key = read_bytes_field(buffer, cursor, record_end);
    const value = read_bytes_field(buffer, cursor, record_end);
    const header_count = read_varint(buffer, cursor, record_end);
    const headers: RecordHeader[] = [];
    for (let h = 0; h < header_count; h++) {
      const header_key = read_bytes_field(buffer, cursor, record_end);
      headers.push({ key: header_key?.toString('utf8') ?? '', value: read_bytes_field(buffer, cursor, record_end) });
    }
    records.push({ offset: base_offset + offset_delta, key, value, timestamp_ms: base_timestamp + timestamp_delta, headers });
    cursor.at = record_end;
  }
  return records;
}
