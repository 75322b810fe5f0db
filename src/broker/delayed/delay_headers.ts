// Delay headers on produced records: `sluice-deliver-at` (epoch milliseconds) or `sluice-delay-ms`
// (milliseconds after the broker received the record). Parsing is strict: a value that is not a
// plain non-negative integer, or a due time beyond the configured maximum, refuses the batch with
// a message naming the header, so a typo never turns into a silently immediate message.
import { decompress_record_batch } from '../../protocol/compression.ts';
import type { DecodedRecord } from '../../protocol/record_batch.ts';
import { BrokerError } from '../../core/errors.ts';
import { BATCH_HEADER_BYTES, batch_compression, batch_records_count } from '../../format/batch_layout.ts';
import { RecordFormatError, RecordReader } from '../../format/record_reader.ts';

import { DELAY_MS_HEADER, DELIVER_AT_HEADER, TTL_MS_HEADER } from '../../protocol/message_headers.ts';

export { DELAY_MS_HEADER, DELIVER_AT_HEADER, TTL_MS_HEADER };
/** Every header name read here starts with this; an uncompressed batch without these bytes has none. */
const COMMON_PREFIX = Buffer.from('sluice-');
const INTEGER = /^\d{1,16}$/;

export interface DelayedRecords {
  count: number;
  /** Due time per record (the receive time for records without a delay header). */
  due_ms: number[];
}

function header_value(record: DecodedRecord, name: string): string | null {
  const header = record.headers?.find((h) => h.key === name);
  return header ? (header.value?.toString('utf8') ?? '') : null;
}

function parse_ms(value: string, name: string): number {
  if (!INTEGER.test(value))
    throw new BrokerError(
      'invalid_record',
      `header ${name}: expected whole milliseconds, got ${JSON.stringify(value.slice(0, 40))}`,
    );
  return Number(value);
}

/** The record's own time to live (its `sluice-ttl-ms` header), or null; a malformed value throws. */
export function ttl_of(record: DecodedRecord): number | null {
  const value = header_value(record, TTL_MS_HEADER);
  return value === null ? null : parse_ms(value, TTL_MS_HEADER);
}

/** The record's due time, or null when it carries no delay header. */
export function due_time_of(record: DecodedRecord, received_ms: number, delay_max_ms: number): number | null {
  const at = header_value(record, DELIVER_AT_HEADER);
  const delay = header_value(record, DELAY_MS_HEADER);
  if (at === null && delay === null) return null;
  const due_ms = at !== null ? parse_ms(at, DELIVER_AT_HEADER) : received_ms + parse_ms(delay!, DELAY_MS_HEADER);
  if (due_ms - received_ms > delay_max_ms) {
    throw new BrokerError(
      'invalid_record',
      `${at !== null ? DELIVER_AT_HEADER : DELAY_MS_HEADER}: due ${due_ms - received_ms} ms from now, beyond the ` +
        `maximum delay of ${delay_max_ms} ms`,
    );
  }
  return Math.max(due_ms, received_ms);
}

/** False when the batch surely has no delay or TTL header (uncompressed, without the header bytes). */
export function may_carry_delay(batch: Buffer): boolean {
  return batch_compression(batch, 0) !== 0 || batch.indexOf(COMMON_PREFIX, BATCH_HEADER_BYTES) >= 0;
}

const NAMES = {
  deliver_at: Buffer.from(DELIVER_AT_HEADER),
  delay_ms: Buffer.from(DELAY_MS_HEADER),
  ttl_ms: Buffer.from(TTL_MS_HEADER),
};
const DIGITS_MAX = 16;

/** Whole milliseconds from the header value bytes [from, to), or throws naming the header. */
function ms_of(buffer: Buffer, from: number, to: number, name: string): number {
  if (to - from < 1 || to - from > DIGITS_MAX)
    throw new BrokerError(
      'invalid_record',
      `header ${name}: expected whole milliseconds, got ` +
        `${JSON.stringify(buffer.toString('utf8', from, Math.min(to, from + 40)))}`,
    );
  let value = 0;
  for (let i = from; i < to; i++) {
    const digit = buffer[i]! - 48;
    if (digit < 0 || digit > 9)
      throw new BrokerError(
        'invalid_record',
        `header ${name}: expected whole milliseconds, got ` +
          `${JSON.stringify(buffer.toString('utf8', from, Math.min(to, from + 40)))}`,
      );
    value = value * 10 + digit;
  }
  return value;
}

const is = (buffer: Buffer, from: number, length: number, name: Buffer) =>
  length === name.length && buffer.compare(name, 0, length, from, from + length) === 0;

/**
 * Each record's due time in an uncompressed batch, read from its headers without building record
 * objects; TTL headers are checked on the way. Null when no record asks for a delay.
 */
function scan_dues(batch: Buffer, received_ms: number, delay_max_ms: number): number[] | null {
  const count = batch_records_count(batch, 0);
  // Grown as records are read, never sized by the count the batch claims.
  const due_ms: number[] = [];
  let delayed = false;
  const reader = new RecordReader(batch, BATCH_HEADER_BYTES, batch.length);
  for (let i = 0; i < count; i++) {
    let due: number | null;
    try {
      due = record_due(reader, received_ms, delay_max_ms);
    } catch (error) {
      if (error instanceof RecordFormatError)
        throw new BrokerError('invalid_record', `record ${i} of the batch: ${error.message}`);
      throw error;
    }
    if (due !== null) delayed = true;
    due_ms.push(Math.max(due ?? received_ms, received_ms));
  }
  return delayed ? due_ms : null;
}

/**
 * The due time one record's headers ask for (null: none; deliver-at wins over delay-ms), leaving
 * the reader after the record. A due time beyond `delay_max_ms` refuses the batch.
 */
function record_due(reader: RecordReader, received_ms: number, delay_max_ms: number): number | null {
  const batch = reader.buffer;
  reader.enter_record();
  reader.byte(); // attributes
  reader.varint(); // timestamp delta
  reader.varint(); // offset delta
  reader.skip_bytes(); // key
  reader.skip_bytes(); // value
  const headers = reader.varint();
  let due: number | null = null;
  let absolute = false;
  for (let h = 0; h < headers; h++) {
    const key_length = reader.field_length();
    const key_at = reader.at;
    reader.at += Math.max(0, key_length);
    const value_length = reader.field_length();
    const value_at = reader.at;
    reader.at += Math.max(0, value_length);
    if (is(batch, key_at, key_length, NAMES.deliver_at)) {
      due = ms_of(batch, value_at, value_at + value_length, DELIVER_AT_HEADER);
      absolute = true;
    } else if (is(batch, key_at, key_length, NAMES.delay_ms)) {
      const delay = ms_of(batch, value_at, value_at + value_length, DELAY_MS_HEADER);
      if (!absolute) due = received_ms + delay;
    } else if (is(batch, key_at, key_length, NAMES.ttl_ms)) {
      ms_of(batch, value_at, value_at + value_length, TTL_MS_HEADER);
    }
  }
  reader.leave_record();
  if (due !== null && due - received_ms > delay_max_ms) {
    throw new BrokerError(
      'invalid_record',
      `${absolute ? DELIVER_AT_HEADER : DELAY_MS_HEADER}: due ${due - received_ms} ms from now, beyond the maximum ` +
        `delay of ${delay_max_ms} ms`,
    );
  }
  return due;
}

/**
 * The batch's due times when any record asks for a delay; null otherwise. An uncompressed batch
 * without the header bytes is answered without reading its records.
 */
export async function delayed_records(
  batch: Buffer,
  received_ms: number,
  delay_max_ms: number,
): Promise<DelayedRecords | null> {
  if (!may_carry_delay(batch)) return null;
  const compressed = batch_compression(batch, 0) !== 0;
  let plain = batch;
  if (compressed) {
    try {
      plain = await decompress_record_batch(batch);
    } catch (error) {
      throw new BrokerError(
        'invalid_record',
        `the batch's records cannot be read: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
  const due_ms = scan_dues(plain, received_ms, delay_max_ms);
  return due_ms ? { count: due_ms.length, due_ms } : null;
}
