// Delay headers on produced records: `sluice-deliver-at` (epoch milliseconds) or `sluice-delay-ms`
// (milliseconds after the broker received the record). Parsing is strict: a value that is not a
// plain non-negative integer, or a due time beyond the configured maximum, refuses the batch with
// a message naming the header, so a typo never turns into a silently immediate message.
import { decompress_record_batch } from '../../protocol/compression.ts';
import type { DecodedRecord } from '../../protocol/record_batch.ts';
import { BrokerError } from '../errors.ts';

export const DELIVER_AT_HEADER = 'sluice-deliver-at';
export const DELAY_MS_HEADER = 'sluice-delay-ms';
export const TTL_MS_HEADER = 'sluice-ttl-ms';
/** Every header name read here starts with this; an uncompressed batch without these bytes has none. */
const COMMON_PREFIX = Buffer.from('sluice-');
const BATCH_HEADER_BYTES = 61;
const ATTRIBUTES_AT = 21;
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
  if (!INTEGER.test(value)) throw new BrokerError('invalid_record', `header ${name}: expected whole milliseconds, got ${JSON.stringify(value.slice(0, 40))}`);
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
    throw new BrokerError('invalid_record', `${at !== null ? DELIVER_AT_HEADER : DELAY_MS_HEADER}: due ${due_ms - received_ms} ms from now, beyond the maximum delay of ${delay_max_ms} ms`);
  }
  return Math.max(due_ms, received_ms);
}

/** False when the batch surely has no delay or TTL header (uncompressed, without the header bytes). */
export function may_carry_delay(batch: Buffer): boolean {
  return (batch.readInt16BE(ATTRIBUTES_AT) & 0x07) !== 0 || batch.indexOf(COMMON_PREFIX, BATCH_HEADER_BYTES) >= 0;
}

const NAMES = { deliver_at: Buffer.from(DELIVER_AT_HEADER), delay_ms: Buffer.from(DELAY_MS_HEADER), ttl_ms: Buffer.from(TTL_MS_HEADER) };
const DIGITS_MAX = 16;

/** Reading position of the scanner below (module state: the scan never awaits). */
let at = 0;

function varint(buffer: Buffer, end: number): number {
  let unsigned = 0;
  let scale = 1;
  for (let i = 0; i < 10; i++) {
    if (at >= end) throw new BrokerError('invalid_record', 'a record runs past the end of its batch');
    const byte = buffer[at++]!;
    unsigned += (byte & 0x7f) * scale;
    if ((byte & 0x80) === 0) return unsigned % 2 === 0 ? unsigned / 2 : -(unsigned + 1) / 2;
    scale *= 128;
  }
  throw new BrokerError('invalid_record', 'a varint longer than 10 bytes');
}

/** Whole milliseconds from the header value bytes [from, to), or throws naming the header. */
function ms_of(buffer: Buffer, from: number, to: number, name: string): number {
  if (to - from < 1 || to - from > DIGITS_MAX) throw new BrokerError('invalid_record', `header ${name}: expected whole milliseconds, got ${JSON.stringify(buffer.toString('utf8', from, Math.min(to, from + 40)))}`);
  let value = 0;
  for (let i = from; i < to; i++) {
    const digit = buffer[i]! - 48;
    if (digit < 0 || digit > 9) throw new BrokerError('invalid_record', `header ${name}: expected whole milliseconds, got ${JSON.stringify(buffer.toString('utf8', from, Math.min(to, from + 40)))}`);
    value = value * 10 + digit;
  }
  return value;
}

const is = (buffer: Buffer, from: number, length: number, name: Buffer) => length === name.length && buffer.compare(name, 0, length, from, from + length) === 0;

/**
 * Each record's due time in an uncompressed batch, read from its headers without building record
 * objects; TTL headers are checked on the way. Null when no record asks for a delay.
 */
function scan_dues(batch: Buffer, received_ms: number, delay_max_ms: number): number[] | null {
  const count = batch.readInt32BE(57);
  const end = batch.length;
  const due_ms: number[] = new Array(count);
  let delayed = false;
  at = BATCH_HEADER_BYTES;
  for (let i = 0; i < count; i++) {
    const length = varint(batch, end);
    const record_end = at + length;
    if (length < 0 || record_end > end) throw new BrokerError('invalid_record', `record ${i} runs past the end of its batch`);
    at++; // attributes
    varint(batch, record_end); // timestamp delta
    varint(batch, record_end); // offset delta
    for (let field = 0; field < 2; field++) {
      const field_length = varint(batch, record_end);
      if (field_length > 0) at += field_length;
    }
    const headers = varint(batch, record_end);
    let due: number | null = null;
    let absolute = false;
    for (let h = 0; h < headers; h++) {
      const key_length = varint(batch, record_end);
      const key_at = at;
      at += Math.max(0, key_length);
      const value_length = varint(batch, record_end);
      const value_at = at;
      at += Math.max(0, value_length);
      if (at > record_end) throw new BrokerError('invalid_record', `record ${i} runs past its end`);
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
    if (due !== null) {
      if (due - received_ms > delay_max_ms) throw new BrokerError('invalid_record', `${absolute ? DELIVER_AT_HEADER : DELAY_MS_HEADER}: due ${due - received_ms} ms from now, beyond the maximum delay of ${delay_max_ms} ms`);
      delayed = true;
    }
    due_ms[i] = Math.max(due ?? received_ms, received_ms);
    at = record_end;
  }
  return delayed ? due_ms : null;
}

/**
 * The batch's due times when any record asks for a delay; null otherwise. An uncompressed batch
 * without the header bytes is answered without reading its records.
 */
export async function delayed_records(batch: Buffer, received_ms: number, delay_max_ms: number): Promise<DelayedRecords | null> {
  if (!may_carry_delay(batch)) return null;
  const compressed = (batch.readInt16BE(ATTRIBUTES_AT) & 0x07) !== 0;
  let plain = batch;
  if (compressed) {
    try {
      plain = await decompress_record_batch(batch);
    } catch (error) {
      throw new BrokerError('invalid_record', `the batch's records cannot be read: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  const due_ms = scan_dues(plain, received_ms, delay_max_ms);
  return due_ms ? { count: due_ms.length, due_ms } : null;
}
