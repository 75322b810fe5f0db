// The content header frame of AMQP 0-9-1: class id, weight, body size, then basic's property flags
// and the properties whose flag is set, in flag order. Decoding keeps the flags and property bytes
// as received (properties_raw) so a broker can store and deliver them untouched, and encoding
// takes either properties or such raw bytes.
import { AmqpError, ReplyCode } from './constants.ts';
import { decode_table, encode_table, type FieldTable } from './field_table.ts';
import { write_utf8 } from './short_string.ts';

type PropertyType = 'shortstr' | 'octet' | 'table' | 'timestamp';

/** Basic's properties, highest flag first (the order of the property list on the wire). */
export const BASIC_PROPERTIES = [
  { name: 'content_type', flag: 0x8000, type: 'shortstr' },
  { name: 'content_encoding', flag: 0x4000, type: 'shortstr' },
  { name: 'headers', flag: 0x2000, type: 'table' },
  /** 1 = transient, 2 = persistent. */
  { name: 'delivery_mode', flag: 0x1000, type: 'octet' },
  { name: 'priority', flag: 0x0800, type: 'octet' },
  { name: 'correlation_id', flag: 0x0400, type: 'shortstr' },
  { name: 'reply_to', flag: 0x0200, type: 'shortstr' },
  /** A per-message TTL in milliseconds, written as a decimal string. */
  { name: 'expiration', flag: 0x0100, type: 'shortstr' },
  { name: 'message_id', flag: 0x0080, type: 'shortstr' },
  /** Seconds since 1970. */
  { name: 'timestamp', flag: 0x0040, type: 'timestamp' },
  { name: 'type', flag: 0x0020, type: 'shortstr' },
  { name: 'user_id', flag: 0x0010, type: 'shortstr' },
  { name: 'app_id', flag: 0x0008, type: 'shortstr' },
  { name: 'cluster_id', flag: 0x0004, type: 'shortstr' },
] as const satisfies readonly { name: string; flag: number; type: PropertyType }[];

type ValueOf<T extends PropertyType> = T extends 'shortstr' ? string : T extends 'table' ? FieldTable : number;
type Declared = (typeof BASIC_PROPERTIES)[number];
type PropertiesOf = { [P in Declared as P['name']]?: ValueOf<P['type']> };

/** Basic's content properties (all optional), in snake_case. */
export interface BasicProperties extends PropertiesOf {}

/** Basic is the only class with content, so the only one whose property layout is known. */
const BASIC_CLASS_ID = 60;
/** Class id (2), weight (2), body size (8). */
const HEADER_PREFIX_BYTES = 12;
/** Set when a second flags word follows: never by basic, whose 14 properties fit in one. */
const MORE_FLAGS = 0x0001;

export interface ContentHeader {
  class_id: number;
  body_size: number;
  properties: BasicProperties;
  /** The flags and property list exactly as received: a view into the payload (copy it to keep it long). */
  properties_raw: Buffer;
}

// ------------------------------------------------------------------ decoding

function bad_header(message: string): AmqpError {
  return new AmqpError(ReplyCode.SYNTAX_ERROR, `malformed content header: ${message}`);
}

function read_headers(payload: Buffer, at: number): { table: FieldTable; next: number } {
  try {
    return decode_table(payload, at);
  } catch (error) {
    if (error instanceof AmqpError) throw new AmqpError(error.code, `headers property: ${error.message}`);
    throw error;
  }
}

function decode_list(payload: Buffer, flags: number): BasicProperties {
  const properties: Record<string, unknown> = {};
  const end = payload.length;
  let at = HEADER_PREFIX_BYTES + 2;
  for (const { name, flag, type } of BASIC_PROPERTIES) {
    if ((flags & flag) === 0) continue;
    if (type === 'shortstr') {
      const bytes = at < end ? payload[at]! : 0;
      if (at + 1 + bytes > end) throw bad_header(`${name} runs past the end of the frame`);
      properties[name] = payload.toString('utf8', at + 1, at + 1 + bytes);
      at += 1 + bytes;
    } else if (type === 'octet') {
      if (at + 1 > end) throw bad_header(`${name} runs past the end of the frame`);
      properties[name] = payload[at++]!;
    } else if (type === 'timestamp') {
      if (at + 8 > end) throw bad_header(`${name} runs past the end of the frame`);
      const high = payload.readUInt32BE(at);
      if (high > 0x1fffff) throw bad_header(`${name} ${payload.readBigUInt64BE(at)} is too large`);
      properties[name] = high * 0x100000000 + payload.readUInt32BE(at + 4);
      at += 8;
    } else {
      const { table, next } = read_headers(payload, at);
      properties[name] = table;
      at = next;
    }
  }
  if (at !== end) throw bad_header(`${end - at} bytes after the last property`);
  return properties as BasicProperties;
}

/** Decodes a content header frame's payload. */
export function decode_content_header(payload: Buffer): ContentHeader {
  if (payload.length < HEADER_PREFIX_BYTES + 2) throw bad_header(`${payload.length} bytes are too few`);
  const class_id = payload.readUInt16BE(0);
  if (class_id !== BASIC_CLASS_ID) {
    throw new AmqpError(
      ReplyCode.UNEXPECTED_FRAME,
      `content header for class ${class_id}, but only basic (60) carries content`,
      class_id,
    );
  }
  const size_high = payload.readUInt32BE(4);
  if (size_high > 0x1fffff) throw bad_header(`body size ${payload.readBigUInt64BE(4)} is too large`);
  const body_size = size_high * 0x100000000 + payload.readUInt32BE(8);
  const flags = payload.readUInt16BE(HEADER_PREFIX_BYTES);
  if ((flags & MORE_FLAGS) !== 0) throw bad_header(`property flags 0x${flags.toString(16)} ask for a second word`);
  const properties = flags === 0 && payload.length === HEADER_PREFIX_BYTES + 2 ? {} : decode_list(payload, flags);
  return { class_id, body_size, properties, properties_raw: payload.subarray(HEADER_PREFIX_BYTES) };
}

/** Properties kept as received (the flags and list of `properties_raw`), decoded. */
export function decode_properties(raw: Buffer): BasicProperties {
  const payload = Buffer.alloc(HEADER_PREFIX_BYTES + raw.length);
  payload.writeUInt16BE(BASIC_CLASS_ID, 0);
  raw.copy(payload, HEADER_PREFIX_BYTES);
  return decode_content_header(payload).properties;
}

// ------------------------------------------------------------------ encoding

function shortstr_bytes(name: string, value: unknown): number {
  if (typeof value !== 'string') throw new TypeError(`property ${name} must be a string, got ${typeof value}`);
  const bytes = Buffer.byteLength(value, 'utf8');
  if (bytes > 0xff) throw new RangeError(`property ${name} of ${bytes} bytes exceeds a short string's 255`);
  return bytes;
}

function check_integer(name: string, value: unknown, max: number): void {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max) {
    throw new RangeError(`property ${name} must be an integer from 0 to ${max}, got ${String(value)}`);
  }
}

/** The list's size, with the headers table encoded on the way (written by `write_list`). */
function list_bytes(properties: BasicProperties, encoded: { headers: Buffer | null }): number {
  let bytes = 2;
  const values = properties as Record<string, unknown>;
  for (const { name, type } of BASIC_PROPERTIES) {
    const value = values[name];
    if (value === undefined || value === null) continue;
    if (type === 'shortstr') {
      bytes += 1 + shortstr_bytes(name, value);
    } else if (type === 'octet') {
      check_integer(name, value, 0xff);
      bytes += 1;
    } else if (type === 'timestamp') {
      check_integer(name, value, Number.MAX_SAFE_INTEGER);
      bytes += 8;
    } else {
      if (typeof value !== 'object' || Array.isArray(value) || Buffer.isBuffer(value)) {
        throw new TypeError(`property ${name} must be a field table`);
      }
      encoded.headers = encode_table(value as FieldTable);
      bytes += encoded.headers.length;
    }
  }
  return bytes;
}

function write_list(properties: BasicProperties, headers: Buffer | null, buf: Buffer, start: number): void {
  const values = properties as Record<string, unknown>;
  let flags = 0;
  let at = start + 2;
  for (const { name, flag, type } of BASIC_PROPERTIES) {
    const value = values[name];
    if (value === undefined || value === null) continue;
    flags |= flag;
    if (type === 'shortstr') {
      buf[at] = write_utf8(buf, value as string, at + 1);
      at += 1 + buf[at]!;
    } else if (type === 'octet') {
      buf[at++] = value as number;
    } else if (type === 'timestamp') {
      const high = Math.floor((value as number) / 0x100000000);
      buf.writeUInt32BE(high, at);
      buf.writeUInt32BE((value as number) - high * 0x100000000, at + 4);
      at += 8;
    } else {
      at += headers!.copy(buf, at);
    }
  }
  buf.writeUInt16BE(flags, start);
}

/** The property flags and list for `properties`: what a content header carries after the body size. */
export function encode_properties(properties: BasicProperties): Buffer {
  const encoded = { headers: null as Buffer | null };
  const buf = Buffer.allocUnsafe(list_bytes(properties, encoded));
  write_list(properties, encoded.headers, buf, 0);
  return buf;
}

/**
 * A content header payload after `head_bytes` left free and before `tail_bytes` left free, so a
 * frame writer can frame it without copying. `properties` may be raw flags and list to send as is.
 */
export function encode_content_header_with_room(
  class_id: number,
  body_size: number,
  properties: BasicProperties | Buffer,
  head_bytes: number,
  tail_bytes: number,
): Buffer {
  if (!Number.isSafeInteger(body_size) || body_size < 0) throw new RangeError(`body size ${body_size} is not valid`);
  const raw = Buffer.isBuffer(properties);
  if (raw && properties.length < 2) throw new RangeError('raw properties need at least the two flag bytes');
  const encoded = { headers: null as Buffer | null };
  const list_size = raw ? properties.length : list_bytes(properties, encoded);
  const buf = Buffer.allocUnsafe(head_bytes + HEADER_PREFIX_BYTES + list_size + tail_bytes);
  const at = head_bytes;
  buf.writeUInt16BE(class_id, at);
  buf.writeUInt16BE(0, at + 2); // weight: unused, always 0
  const size_high = Math.floor(body_size / 0x100000000);
  buf.writeUInt32BE(size_high, at + 4);
  buf.writeUInt32BE(body_size - size_high * 0x100000000, at + 8);
  if (raw) properties.copy(buf, at + HEADER_PREFIX_BYTES);
  else write_list(properties, encoded.headers, buf, at + HEADER_PREFIX_BYTES);
  return buf;
}

/** A content header frame's payload. */
export function encode_content_header(
  class_id: number,
  body_size: number,
  properties: BasicProperties | Buffer,
): Buffer {
  return encode_content_header_with_room(class_id, body_size, properties, 0, 0);
}
