// The message browser's view of records: key, value and header values as UTF-8 text when they are
// valid UTF-8, else {"base64": "..."}; fields longer than a bound are cut (the item says so).
import { isUtf8 } from 'node:buffer';
import type { DecodedRecord } from '../../protocol/record_batch.ts';
import type { Core, PartitionReader } from '../../core/index.ts';

export const MESSAGES_LIMIT_DEFAULT = 50;
export const MESSAGES_LIMIT_MAX = 500;
/** Stored bytes read for one page of messages. */
export const MESSAGES_READ_BYTES_MAX = 4 * 1024 * 1024;
/** Bytes of one key, value or header value shown; the rest is cut. */
export const MESSAGE_FIELD_BYTES_MAX = 64 * 1024;
/** Longest UTF-8 sequence: a cut inside one is moved back to its start. */
const UTF8_SEQUENCE_BYTES_MAX = 4;

export type FieldValue = string | { base64: string } | null;

export interface MessageView {
  offset: number;
  timestamp_ms: number;
  key: FieldValue;
  value: FieldValue;
  headers: Record<string, FieldValue>;
  /** Size of the whole value (null when the value is null). */
  value_bytes: number | null;
  /** Present (true) when a key, value or header value was longer than the bound and was cut. */
  truncated?: true;
}

function field_of(bytes: Buffer | null, cut: { happened: boolean }): FieldValue {
  if (bytes === null) return null;
  let shown = bytes;
  if (bytes.length > MESSAGE_FIELD_BYTES_MAX) {
    cut.happened = true;
    // A cut inside a multi-byte character would make valid text look binary: cut before it.
    let end = MESSAGE_FIELD_BYTES_MAX;
    while (end > MESSAGE_FIELD_BYTES_MAX - UTF8_SEQUENCE_BYTES_MAX && (bytes[end]! & 0xc0) === 0x80) end--;
    shown = bytes.subarray(0, end);
  }
  return isUtf8(shown) ? shown.toString('utf8') : { base64: shown.toString('base64') };
}

export function message_view(record: DecodedRecord): MessageView {
  const cut = { happened: false };
  const headers: Record<string, FieldValue> = {};
  // Kafka allows a header name twice; the last one wins here, as most clients read it.
  for (const header of record.headers ?? []) headers[header.key] = field_of(header.value, cut);
  const view: MessageView = {
    offset: record.offset,
    timestamp_ms: record.timestamp_ms,
    key: field_of(record.key, cut),
    value: field_of(record.value, cut),
    headers,
    value_bytes: record.value === null ? null : record.value.length,
  };
  if (cut.happened) view.truncated = true;
  return view;
}

export interface MessagePage<T> {
  items: T[];
  next_offset: number;
  high_watermark: number;
  log_start_offset: number;
}

/** A page of a partition's messages from `offset` (default: the last `limit` below the high watermark). */
export async function read_message_page<T>(
  core: Core,
  log: PartitionReader,
  offset: number | null,
  limit: number,
  view: (record: DecodedRecord) => T,
): Promise<MessagePage<T>> {
  const high_watermark = log.high_watermark;
  const from = offset ?? Math.max(log.log_start_offset, high_watermark - limit);
  if (from >= high_watermark)
    return {
      items: [],
      next_offset: Math.max(from, log.log_start_offset),
      high_watermark,
      log_start_offset: log.log_start_offset,
    };
  const read = await core.partitions.read_records(log, from, limit, MESSAGES_READ_BYTES_MAX);
  return {
    items: read.records.map(view),
    next_offset: read.next_offset,
    high_watermark,
    log_start_offset: log.log_start_offset,
  };
}
