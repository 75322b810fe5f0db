// Delay headers on produced records: `sluice-deliver-at` (epoch milliseconds) or `sluice-delay-ms`
// (milliseconds after the broker received the record). Parsing is strict: a value that is not a
// plain non-negative integer, or a due time beyond the configured maximum, refuses the batch with
// a message naming the header, so a typo never turns into a silently immediate message.
import { decompress_record_batch } from '../../protocol/compression.ts';
import { decode_record_batch, type DecodedRecord } from '../../protocol/record_batch.ts';
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
  records: DecodedRecord[];
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

/**
 * The batch's records and due times when any record asks for a delay; null otherwise. An
 * uncompressed batch without the header bytes is answered without decoding.
 */
export async function delayed_records(batch: Buffer, received_ms: number, delay_max_ms: number): Promise<DelayedRecords | null> {
  if (!may_carry_delay(batch)) return null;
  const compressed = (batch.readInt16BE(ATTRIBUTES_AT) & 0x07) !== 0;
  let records: DecodedRecord[];
  try {
    records = decode_record_batch(compressed ? await decompress_record_batch(batch) : batch);
  } catch (error) {
    throw new BrokerError('invalid_record', `the batch's records cannot be read: ${error instanceof Error ? error.message : String(error)}`);
  }
  let delayed = false;
  const due_ms = records.map((record) => {
    ttl_of(record); // checked when produced, so a malformed value never reaches a consumer
    const due = due_time_of(record, received_ms, delay_max_ms);
    if (due !== null) delayed = true;
    return due ?? received_ms;
  });
  return delayed ? { records, due_ms } : null;
}
