// How an AMQP message is kept as a record of a topic, and how any record is delivered over AMQP.
// The routing key is the record's key and the body its value; the content-header properties are
// kept as received (header `amqp.properties`) so AMQP consumers get them byte for byte, and are
// also written as readable headers for Kafka consumers: each entry of the `headers` table under its
// own name, the other properties as `amqp.<property>`. A record a Kafka producer wrote gets its
// headers as the AMQP `headers` table. docs/amqp-compatibility.md has the table.
import type { RecordHeader, BatchRecord, DecodedRecord } from '../../protocol/record_batch.ts';
import type { BasicProperties } from '../../protocol/amqp/properties.ts';
import { decode_properties, encode_properties } from '../../protocol/amqp/properties.ts';
import type { FieldTable, FieldValue } from '../../protocol/amqp/field_table.ts';

import { HEADER_EXCHANGE, HEADER_PROPERTIES } from '../../protocol/amqp/record_headers.ts';
import { DELAY_MS_HEADER, TTL_MS_HEADER } from '../../protocol/message_headers.ts';
import { TextBytesCache } from '../../protocol/text_bytes.ts';

const MILLISECONDS = /^\d{1,15}$/;

/**
 * Properties written as readable headers, with their header names, and whether their values
 * repeat from message to message (ids and timestamps do not).
 */
const READABLE: ReadonlyArray<[keyof BasicProperties, string, boolean]> = [
  ['content_type', 'amqp.content-type', true],
  ['content_encoding', 'amqp.content-encoding', true],
  ['delivery_mode', 'amqp.delivery-mode', true],
  ['priority', 'amqp.priority', true],
  ['correlation_id', 'amqp.correlation-id', false],
  ['reply_to', 'amqp.reply-to', true],
  ['expiration', 'amqp.expiration', true],
  ['message_id', 'amqp.message-id', false],
  ['timestamp', 'amqp.timestamp', false],
  ['type', 'amqp.type', true],
  ['user_id', 'amqp.user-id', true],
  ['app_id', 'amqp.app-id', true],
];

export interface PublishedMessage {
  exchange: string;
  routing_key: string;
  properties: BasicProperties;
  /** The properties as received (flags and list). */
  properties_raw: Buffer;
  body: Buffer;
}

/** A header value as text a Kafka consumer can read; null for nested tables and arrays. */
function readable(value: FieldValue): string | null {
  if (value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') return String(value);
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  if (value instanceof Date) return String(value.getTime());
  return null;
}

/**
 * Texts that repeat from message to message (exchange names, routing keys, content types). A
 * record's fields are only read once encoded into a batch, so records may share these buffers.
 */
const REPEATED_CACHED_MAX = 1024;
const repeated = new TextBytesCache(REPEATED_CACHED_MAX);

/** `delay_ms`: held back this long first (an x-delayed-message exchange's x-delay). */
export function record_of(message: PublishedMessage, now_ms: number, delay_ms = 0): BatchRecord {
  const headers: RecordHeader[] = [{ key: HEADER_EXCHANGE, value: repeated.bytes(message.exchange) }];
  // Per-message TTL: the queue engine expires (and dead-letters) by this header.
  const expiration = message.properties.expiration;
  if (expiration !== undefined && MILLISECONDS.test(expiration))
    headers.push({ key: TTL_MS_HEADER, value: Buffer.from(expiration, 'utf8') });
  if (delay_ms > 0) headers.push({ key: DELAY_MS_HEADER, value: Buffer.from(String(delay_ms), 'utf8') });
  if (message.properties_raw.length > 2) headers.push({ key: HEADER_PROPERTIES, value: message.properties_raw });
  for (const [field, name, repeats] of READABLE) {
    const value = message.properties[field];
    if (value === undefined) continue;
    const text = String(value);
    headers.push({ key: name, value: repeats ? repeated.bytes(text) : Buffer.from(text, 'utf8') });
  }
  for (const [name, value] of Object.entries(message.properties.headers ?? {})) {
    const text = readable(value);
    if (text !== null) headers.push({ key: name, value: Buffer.from(text, 'utf8') });
  }
  return {
    key: message.routing_key === '' ? null : repeated.bytes(message.routing_key),
    value: message.body,
    timestamp_ms: now_ms,
    headers,
  };
}

export interface DeliverableMessage {
  exchange: string;
  routing_key: string;
  /** Properties to send as they are (flags and list), or built for a record without them. */
  properties: Buffer | BasicProperties;
  body: Buffer;
}

/** A stored record as an AMQP delivery; `delivery_count` above 1 adds x-delivery-count. */
export function message_of(record: DecodedRecord, delivery_count = 1): DeliverableMessage {
  const message = stored_message(record);
  if (delivery_count > 1) message.properties = with_delivery_count(message.properties, delivery_count - 1);
  return message;
}

function stored_message(record: DecodedRecord): DeliverableMessage {
  let exchange: string | null = null;
  let raw: Buffer | null = null;
  for (const h of record.headers ?? []) {
    if (h.key === HEADER_EXCHANGE && h.value) exchange = h.value.toString('utf8');
    else if (h.key === HEADER_PROPERTIES && h.value) raw = h.value;
  }
  const routing_key = record.key?.toString('utf8') ?? '';
  const body = record.value ?? Buffer.alloc(0);
  // Properties another Kafka producer could have written are checked before a client gets them: ones
  // that do not decode would break its connection on every delivery. Such a record goes as a
  // Kafka producer's, its headers (that one too) as the headers table.
  if (exchange !== null && (raw === null || properties_decode(raw)))
    return { exchange, routing_key, properties: raw ?? encode_properties({}), body };
  // Written by a Kafka producer: its headers become the headers table.
  const headers: FieldTable = {};
  for (const h of record.headers ?? []) headers[h.key] = h.value?.toString('utf8') ?? null;
  const properties: BasicProperties = { timestamp: Math.floor(record.timestamp_ms / 1000) };
  if (Object.keys(headers).length > 0) properties.headers = headers;
  return { exchange: '', routing_key, properties, body };
}

function properties_decode(raw: Buffer): boolean {
  try {
    decode_properties(raw);
    return true;
  } catch {
    return false;
  }
}

/**
 * The properties with `x-delivery-count` set to the deliveries before this one (RabbitMQ's
 * quorum-queue header), for a message delivered again.
 */
export function with_delivery_count(properties: Buffer | BasicProperties, earlier: number): BasicProperties {
  const decoded = Buffer.isBuffer(properties) ? decode_properties(properties) : { ...properties };
  decoded.headers = { ...decoded.headers, 'x-delivery-count': earlier };
  return decoded;
}

/** The CC and BCC headers' routing keys (RabbitMQ's sender-selected distribution). */
export function sender_selected_keys(message: PublishedMessage): string[] {
  const keys: string[] = [];
  for (const name of ['CC', 'BCC']) {
    const value = message.properties.headers?.[name];
    const list = Array.isArray(value) ? value : value === undefined ? [] : [value];
    for (const key of list) if (typeof key === 'string' || Buffer.isBuffer(key)) keys.push(key.toString());
  }
  return keys;
}

/** The message without its BCC header, which RabbitMQ never delivers. */
export function without_bcc(message: PublishedMessage): PublishedMessage {
  const headers = message.properties.headers;
  if (!headers || !('BCC' in headers)) return message;
  const { BCC: _bcc, ...kept } = headers;
  const properties = { ...message.properties, headers: kept };
  return { ...message, properties, properties_raw: encode_properties(properties) };
}
