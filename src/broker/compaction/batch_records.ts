// The records of one stored batch as the cleaner sees them (offset, key, tombstone or not,
// timestamp, and where its bytes lie), and the same batch rebuilt with fewer records. A rebuilt
// batch keeps every header field that names its place and its producer — base offset, last offset
// delta, leader epoch, producer id, epoch and base sequence, base and max timestamp — so offsets,
// sequence ranges and time lookups stay as they were; the records it keeps are copied byte for
// byte (their offset and timestamp deltas are from the same bases). A compressed batch is
// decompressed and compressed again with its own codec.
import { crc32c } from '@node-rs/crc32';
import {
  ATTRIBUTE_COMPRESSION_MASK,
  BATCH_HEADER_BYTES,
  BATCH_LOG_OVERHEAD_BYTES,
  OFFSET_ATTRIBUTES,
  OFFSET_BATCH_LENGTH,
  OFFSET_CRC,
  OFFSET_RECORDS_COUNT,
  batch_base_offset,
  batch_base_timestamp,
  batch_compression,
  batch_records_count,
  batch_size_at,
} from '../../format/batch_layout.ts';
import { RecordReader } from '../../format/record_reader.ts';
import { compress_record_batch, decompress_record_batch, type CompressionType } from '../../protocol/compression.ts';
import { BrokerError } from '../../core/errors.ts';
import type { TopicConfigs } from '../../core/types.ts';

/** One record of a batch: where its bytes lie in the (uncompressed) batch, and what the cleaner asks of it. */
export interface RecordSlot {
  offset: number;
  /**
   * The key's bytes as latin1 text (one character per byte: equal exactly when the bytes are), or
   * null for a record without a key. Text, not a Buffer view: the cleaner's map keys by it.
   */
  key: string | null;
  /** A record with a null value: it deletes its key. */
  tombstone: boolean;
  timestamp_ms: number;
  start: number;
  end: number;
}

/** The uncompressed form of a stored batch and its records, in offset order. */
export async function records_of(batch: Buffer): Promise<{ plain: Buffer; records: RecordSlot[] }> {
  const plain = batch_compression(batch, 0) === 0 ? batch : await decompress_record_batch(batch);
  return { plain, records: slots_of(plain) };
}

/** The records of an uncompressed batch, in offset order. */
function slots_of(plain: Buffer): RecordSlot[] {
  const base_offset = batch_base_offset(plain, 0);
  const base_timestamp = batch_base_timestamp(plain, 0);
  const count = batch_records_count(plain, 0);
  const reader = new RecordReader(plain, BATCH_HEADER_BYTES, batch_size_at(plain, 0));
  const records: RecordSlot[] = [];
  for (let i = 0; i < count; i++) {
    const start = reader.at;
    const end = reader.enter_record();
    reader.byte();
    const timestamp_delta = reader.varint();
    const offset_delta = reader.varint();
    const key_bytes = reader.field_length();
    const key = key_bytes < 0 ? null : plain.toString('latin1', reader.at, reader.at + key_bytes);
    if (key_bytes > 0) reader.at += key_bytes;
    const tombstone = reader.field_length() < 0;
    reader.leave_record();
    records.push({
      offset: base_offset + offset_delta,
      key,
      tombstone,
      timestamp_ms: base_timestamp + timestamp_delta,
      start,
      end,
    });
  }
  return records;
}

/**
 * `original` with only `kept` of its records (slots of `plain`, its uncompressed form, in order):
 * the original itself when every record is kept; an empty batch (its header alone, uncompressed)
 * when none is.
 */
export async function batch_keeping(
  original: Buffer,
  plain: Buffer,
  records: readonly RecordSlot[],
  kept: readonly RecordSlot[],
): Promise<Buffer> {
  if (kept.length === records.length) return original;
  let size = BATCH_HEADER_BYTES;
  for (const record of kept) size += record.end - record.start;
  const out = Buffer.allocUnsafe(size);
  plain.copy(out, 0, 0, BATCH_HEADER_BYTES);
  let at = BATCH_HEADER_BYTES;
  for (const record of kept) at += plain.copy(out, at, record.start, record.end);
  out.writeInt32BE(size - BATCH_LOG_OVERHEAD_BYTES, OFFSET_BATCH_LENGTH);
  out.writeInt32BE(kept.length, OFFSET_RECORDS_COUNT);
  const codec = (original.readInt16BE(OFFSET_ATTRIBUTES) & ATTRIBUTE_COMPRESSION_MASK) as CompressionType;
  out.writeInt16BE(plain.readInt16BE(OFFSET_ATTRIBUTES) & ~ATTRIBUTE_COMPRESSION_MASK, OFFSET_ATTRIBUTES);
  out.writeUInt32BE(crc32c(out.subarray(OFFSET_ATTRIBUTES)), OFFSET_CRC);
  // An empty batch is left uncompressed: there is nothing to compress.
  return codec === 0 || kept.length === 0 ? out : compress_record_batch(out, codec);
}

/** Whether a topic's own configs make it compacted (cleanup.policy holds compact). */
export function compacted(configs: TopicConfigs): boolean {
  return configs['cleanup.policy']?.includes('compact') ?? false;
}

/**
 * Refuses a produced batch holding a record without a key: a compacted topic keeps each key's
 * latest record. An uncompressed batch is checked at once (null: nothing to wait for); a
 * compressed one once decompressed (the promise).
 */
export function require_keys(batch: Buffer): Promise<void> | null {
  if (batch_compression(batch, 0) !== 0)
    return decompress_record_batch(batch).then(
      (plain) => check_keys(plain),
      (error: unknown) => {
        throw unreadable(error);
      },
    );
  check_keys(batch);
  return null;
}

function check_keys(plain: Buffer): void {
  let keyless = -1;
  try {
    keyless = first_keyless(plain);
  } catch (error) {
    throw unreadable(error);
  }
  if (keyless >= 0)
    throw new BrokerError(
      'invalid_record',
      `a compacted topic (cleanup.policy=compact) takes only records with a key; record ${keyless} ` +
        'of the batch has none',
    );
}

/** The index of the uncompressed batch's first record without a key, or -1: the key lengths alone are read. */
function first_keyless(plain: Buffer): number {
  const count = batch_records_count(plain, 0);
  const reader = new RecordReader(plain, BATCH_HEADER_BYTES, batch_size_at(plain, 0));
  for (let i = 0; i < count; i++) {
    reader.enter_record();
    reader.byte();
    reader.varint();
    reader.varint();
    if (reader.field_length() < 0) return i;
    reader.leave_record();
  }
  return -1;
}

const unreadable = (error: unknown) =>
  new BrokerError('invalid_record', `the batch's records cannot be read: ${(error as Error).message}`);
