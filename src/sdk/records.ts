// Decoding fetched record sets into messages for the consumer: record batch v2 (magic 2), checked
// by CRC-32C and decompressed (gzip with node:zlib; snappy, lz4 and zstd with the codecs of
// compression.ts, whose packages load on first use); control batches skipped, records below the
// fetch offset dropped and, under read_committed, records of aborted transactions dropped.
// Messages take kafkajs's shape (offsets and timestamps as strings, headers as Buffers).
import zlib from 'node:zlib';
import { promisify } from 'node:util';
import { crc32c } from '@node-rs/crc32';
import { SluiceError } from './errors.ts';
import { decompress } from '../protocol/compression.ts';
import { ControlType, control_type } from '../protocol/control_records.ts';
import {
  ATTRIBUTE_COMPRESSION_MASK,
  ATTRIBUTE_CONTROL,
  ATTRIBUTE_LOG_APPEND_TIME,
  ATTRIBUTE_TRANSACTIONAL,
  BATCH_HEADER_BYTES,
  BATCH_LOG_OVERHEAD_BYTES,
  OFFSET_ATTRIBUTES,
  OFFSET_BATCH_LENGTH,
  OFFSET_CRC,
  OFFSET_MAGIC,
  batch_attributes,
  batch_base_offset,
  batch_base_timestamp,
  batch_last_offset_delta,
  batch_max_timestamp,
  batch_producer_id,
  batch_records_count,
} from '../format/batch_layout.ts';
import { RecordFormatError, RecordReader } from '../format/record_reader.ts';

const gunzip = promisify(zlib.gunzip);

/** Header values as kafkajs types them; decoded headers are Buffers (an array for a repeated key). */
export interface IHeaders {
  [key: string]: Buffer | string | (Buffer | string)[] | undefined;
}

/** One consumed message (kafkajs's RecordBatchEntry). */
export interface KafkaMessage {
  key: Buffer | null;
  value: Buffer | null;
  /** Milliseconds since the epoch, as a string (the batch's max timestamp under LogAppendTime). */
  timestamp: string;
  /** The record's attributes byte (unused by Kafka today, always 0). */
  attributes: number;
  /** The record's offset, as a string. */
  offset: string;
  headers: IHeaders;
}

const CompressionCodec = { none: 0, gzip: 1, snappy: 2, lz4: 3, zstd: 4 } as const;
const CODEC_NAMES = ['none', 'gzip', 'snappy', 'lz4', 'zstd'];

/** The record set could not be decoded (bad CRC, unknown codec, unsupported format). Not retriable. */
export class RecordDecodeError extends SluiceError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, false, options);
  }
}

/** The smallest batch-length field of any message format (v0 message: crc, magic, attributes, key, value). */
const LENGTH_FIELD_MIN = 14;

/** Decompresses the records section of a batch compressed with `codec` (attributes bits 0-2). */
export async function decompress_records(codec: number, data: Buffer): Promise<Buffer> {
  switch (codec) {
    case CompressionCodec.none:
      return data;
    case CompressionCodec.gzip:
      return gunzip(data);
    case CompressionCodec.snappy:
    case CompressionCodec.lz4:
    case CompressionCodec.zstd:
      return decompress(codec, data);
    default:
      throw new RecordDecodeError(`unknown compression codec ${codec}`);
  }
}

/** A batch header, read without looking at its records. */
export interface BatchHeader {
  base_offset: number;
  last_offset: number;
  attributes: number;
  codec: number;
  is_control: boolean;
  is_transactional: boolean;
  producer_id: number;
  base_timestamp: number;
  max_timestamp: number;
  record_count: number;
}

function read_header(buffer: Buffer, at: number): BatchHeader {
  const attributes = batch_attributes(buffer, at);
  const base_offset = batch_base_offset(buffer, at);
  return {
    base_offset,
    last_offset: base_offset + batch_last_offset_delta(buffer, at),
    attributes,
    codec: attributes & ATTRIBUTE_COMPRESSION_MASK,
    is_control: (attributes & ATTRIBUTE_CONTROL) !== 0,
    is_transactional: (attributes & ATTRIBUTE_TRANSACTIONAL) !== 0,
    producer_id: batch_producer_id(buffer, at),
    base_timestamp: batch_base_timestamp(buffer, at),
    max_timestamp: batch_max_timestamp(buffer, at),
    record_count: batch_records_count(buffer, at),
  };
}

/** Runs `read` and reports a malformed record as the decoder's error. */
function decoding<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof RecordFormatError) throw new RecordDecodeError(error.message);
    throw error;
  }
}

// Header names repeat from record to record (a message-id header on each, say): the last few
// decoded names are kept with their bytes, so a repeated name costs a byte comparison, not a string.
const NAME_CACHE_SIZE = 8;
const name_bytes: Buffer[] = [];
const name_strings: string[] = [];
let name_next = 0;

/** Reads a header name as a UTF-8 string ('' for a null name). */
function header_name_at(reader: RecordReader): string {
  const length = reader.field_length();
  if (length <= 0) return '';
  const buffer = reader.buffer;
  const start = reader.at;
  reader.at = start + length;
  search: for (let c = 0; c < name_bytes.length; c++) {
    const cached = name_bytes[c]!;
    if (cached.length !== length) continue;
    for (let b = 0; b < length; b++) if (cached[b] !== buffer[start + b]) continue search;
    return name_strings[c]!;
  }
  const name = buffer.toString('utf8', start, reader.at);
  if (length <= 64) {
    // A copy: a view would keep the whole fetched response alive.
    name_bytes[name_next] = Buffer.from(buffer.subarray(start, reader.at));
    name_strings[name_next] = name;
    name_next = (name_next + 1) % NAME_CACHE_SIZE;
  }
  return name;
}

const EMPTY = Buffer.alloc(0);

/**
 * Decodes the records of the records section `data` (already decompressed), keeping those at or
 * after `min_offset`.
 */
function decode_records(header: BatchHeader, data: Buffer, min_offset: number, out: KafkaMessage[]): void {
  const reader = new RecordReader(data, 0, data.length);
  const base_offset = header.base_offset;
  const log_append = (header.attributes & ATTRIBUTE_LOG_APPEND_TIME) !== 0;
  const base_timestamp = header.base_timestamp;
  const log_append_timestamp = String(header.max_timestamp);
  const record_count = header.record_count;
  // Records of a batch mostly share a timestamp: its string is made once per distinct delta.
  let last_delta = Number.NaN;
  let last_timestamp = '';
  for (let i = 0; i < record_count; i++) {
    try {
      reader.enter_record();
    } catch (error) {
      if (!(error instanceof RecordFormatError)) throw error;
      throw new RecordDecodeError(`record ${i} of the batch at offset ${base_offset} runs past its end`);
    }
    const attributes = reader.byte();
    const timestamp_delta = reader.varint();
    const offset = base_offset + reader.varint();
    if (offset < min_offset) {
      reader.leave_record();
      continue;
    }
    const key = reader.bytes();
    const value = reader.bytes();
    const header_count = reader.varint();
    const headers: IHeaders = {};
    for (let h = 0; h < header_count; h++) {
      const name = header_name_at(reader);
      const header_value = reader.bytes() ?? EMPTY;
      const existing = headers[name];
      if (existing === undefined) headers[name] = header_value;
      else if (Array.isArray(existing)) existing.push(header_value);
      else headers[name] = [existing, header_value];
    }
    let timestamp = log_append_timestamp;
    if (!log_append) {
      if (timestamp_delta !== last_delta) {
        last_delta = timestamp_delta;
        last_timestamp = String(base_timestamp + timestamp_delta);
      }
      timestamp = last_timestamp;
    }
    out.push({ key, value, timestamp, attributes, offset: String(offset), headers });
    reader.leave_record();
  }
}

/**
 * For a control batch: true when its marker is an abort (control record key: int16 version, int16 type 0 = commit, 1 =
 * abort).
 */
function is_abort_marker(header: BatchHeader, data: Buffer): boolean {
  const type = control_type(data);
  if (type === null) throw new RecordDecodeError(`control batch at offset ${header.base_offset} has no valid key`);
  return type === ControlType.ABORT;
}

export interface AbortedTransaction {
  producer_id: number;
  first_offset: number;
}

export interface DecodeOptions {
  /** Drop records of the aborted transactions listed (read_committed). */
  aborted_transactions?: AbortedTransaction[] | null;
  /** Check each batch's CRC-32C (default true). */
  check_crcs?: boolean;
}

export interface FetchedRecords {
  /** Messages at or after the fetch offset, in offset order, without control and aborted records. */
  messages: KafkaMessage[];
  /** Where the next fetch starts: after the last complete batch (the fetch offset when there was none). */
  next_offset: number;
}

/**
 * Where the fetch after this record set starts, read from the batch headers alone: after the last
 * complete batch that ends at or after `fetch_offset` (as decode_fetched's next_offset, for a set
 * it decodes without error).
 */
export function next_fetch_offset(records: Buffer | null | undefined, fetch_offset: number): number {
  let next_offset = fetch_offset;
  if (!records) return next_offset;
  let at = 0;
  while (records.length - at >= BATCH_LOG_OVERHEAD_BYTES) {
    const length = records.readInt32BE(at + OFFSET_BATCH_LENGTH);
    const end = at + BATCH_LOG_OVERHEAD_BYTES + length;
    if (length < LENGTH_FIELD_MIN || end > records.length || length + BATCH_LOG_OVERHEAD_BYTES < BATCH_HEADER_BYTES)
      break;
    const last_offset = batch_base_offset(records, at) + batch_last_offset_delta(records, at);
    if (last_offset >= fetch_offset) next_offset = Math.max(next_offset, last_offset + 1);
    at = end;
  }
  return next_offset;
}

/**
 * Decodes the record set of one fetched partition. A batch cut short at the end of the set (a broker
 * may truncate the last one at the size limit) is left for the next fetch.
 */
export async function decode_fetched(
  records: Buffer | null | undefined,
  fetch_offset: number,
  options: DecodeOptions = {},
): Promise<FetchedRecords> {
  const messages: KafkaMessage[] = [];
  let next_offset = fetch_offset;
  if (!records || records.length === 0) return { messages, next_offset };
  const aborted = [...(options.aborted_transactions ?? [])].sort((a, b) => a.first_offset - b.first_offset);
  const aborted_producers = new Set<number>();
  const check_crcs = options.check_crcs ?? true;
  let at = 0;
  while (records.length - at >= 12) {
    const length = records.readInt32BE(at + OFFSET_BATCH_LENGTH);
    if (length < LENGTH_FIELD_MIN)
      throw new RecordDecodeError(`batch length ${length} at offset ${batch_base_offset(records, at)} is too small`);
    const end = at + 12 + length;
    if (end > records.length) break; // partial batch at the end
    const magic = records.readInt8(at + OFFSET_MAGIC);
    if (magic !== 2)
      throw new RecordDecodeError(`message format v${magic} (magic ${magic}) is not supported; only record batch v2`);
    if (length + BATCH_LOG_OVERHEAD_BYTES < BATCH_HEADER_BYTES)
      throw new RecordDecodeError(`batch of ${length + 12} bytes is shorter than its header`);
    const batch = records.subarray(at, end);
    at = end;
    if (check_crcs && crc32c(batch.subarray(OFFSET_ATTRIBUTES)) !== batch.readUInt32BE(OFFSET_CRC)) {
      throw new RecordDecodeError(`batch at offset ${batch_base_offset(batch, 0)} fails its CRC-32C check`);
    }
    const header = read_header(batch, 0);
    if (header.last_offset < fetch_offset) continue; // wholly before the fetch offset
    next_offset = Math.max(next_offset, header.last_offset + 1);
    while (aborted.length > 0 && aborted[0]!.first_offset <= header.last_offset)
      aborted_producers.add(aborted.shift()!.producer_id);
    if (header.is_control) {
      if (header.is_transactional && aborted_producers.has(header.producer_id)) {
        const data = await decompress_records(header.codec, batch.subarray(BATCH_HEADER_BYTES));
        if (header.record_count > 0 && decoding(() => is_abort_marker(header, data)))
          aborted_producers.delete(header.producer_id);
      }
      continue;
    }
    if (header.is_transactional && aborted_producers.has(header.producer_id)) continue;
    if (header.record_count === 0) continue;
    let data: Buffer;
    try {
      data = await decompress_records(header.codec, batch.subarray(BATCH_HEADER_BYTES));
    } catch (error) {
      if (error instanceof RecordDecodeError) throw error;
      throw new RecordDecodeError(
        `cannot decompress the ${CODEC_NAMES[header.codec]} batch at offset ${header.base_offset}: ${String(error)}`,
        { cause: error },
      );
    }
    decoding(() => decode_records(header, data, fetch_offset, messages));
  }
  return { messages, next_offset };
}
