// AMQP field tables and arrays (client/server properties, declare and bind arguments, message
// headers) in the type tags RabbitMQ and every common client use, which are not the ones the 0-9-1
// spec lists (rabbitmq-website, amqp-0-9-1-errata §3). Decoding checks every length against the
// bytes it has, so hostile input ends in an AmqpError, never a read past the end or a RangeError.
import { AmqpError, ReplyCode } from './constants.ts';

/** A decimal as the wire carries it: `value` / 10^`scale`; a class so it cannot be taken for a table. */
export class Decimal {
  constructor(
    readonly scale: number,
    readonly value: number,
  ) {}
}

export type FieldValue =
  boolean | number | bigint | string | Buffer | Date | null | Decimal | FieldValue[] | FieldTable;

export type FieldTable = { [name: string]: FieldValue };

const TAG = {
  BOOL: 0x74, // t
  INT8: 0x62, // b
  UINT8: 0x42, // B
  INT16: 0x73, // s
  UINT16: 0x75, // u
  INT32: 0x49, // I
  UINT32: 0x69, // i
  INT64: 0x6c, // l
  FLOAT: 0x66, // f
  DOUBLE: 0x64, // d
  DECIMAL: 0x44, // D
  LONGSTR: 0x53, // S
  ARRAY: 0x41, // A
  TIMESTAMP: 0x54, // T
  TABLE: 0x46, // F
  VOID: 0x56, // V
  BYTES: 0x78, // x
} as const;

/** Deeper nesting than any real header needs; the limit keeps hostile input off the stack's end. */
const DEPTH_MAX = 64;

// ------------------------------------------------------------------ decoding

// The buffer and read position of the decode under way. Decoding is synchronous and never
// re-entered from outside, so a module-level cursor spares a {value, next} pair for every value.
const EMPTY = Buffer.alloc(0);
let current: Buffer = EMPTY;
let pos = 0;

function malformed(message: string): AmqpError {
  return new AmqpError(ReplyCode.SYNTAX_ERROR, `malformed field table: ${message}`);
}

function need(end: number, bytes: number, what: string): void {
  if (pos + bytes > end) {
    throw malformed(`${what} needs ${bytes} bytes at offset ${pos} but only ${Math.max(0, end - pos)} remain`);
  }
}

/** Reads the u32 length at `pos`, checks that many bytes follow and returns where they end. */
function sized(end: number, what: string): number {
  need(end, 4, `the length of ${what}`);
  const length = current.readUInt32BE(pos);
  pos += 4;
  need(end, length, what);
  return pos + length;
}

/** Assigns even the key '__proto__' as an own entry: a plain assignment would replace the prototype. */
function set_entry(table: FieldTable, key: string, value: FieldValue): void {
  if (key === '__proto__') {
    Object.defineProperty(table, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    table[key] = value;
  }
}

function read_entries(end: number, depth: number): FieldTable {
  if (depth > DEPTH_MAX) throw malformed(`tables nested deeper than ${DEPTH_MAX}`);
  const buf = current;
  const table: FieldTable = {};
  while (pos < end) {
    const key_bytes = buf[pos]!;
    pos += 1;
    need(end, key_bytes, 'a field name');
    const key = buf.toString('utf8', pos, pos + key_bytes);
    pos += key_bytes;
    set_entry(table, key, read_value(end, depth));
  }
  return table;
}

function read_array(end: number, depth: number): FieldValue[] {
  if (depth > DEPTH_MAX) throw malformed(`arrays nested deeper than ${DEPTH_MAX}`);
  const values: FieldValue[] = [];
  while (pos < end) values.push(read_value(end, depth));
  return values;
}

function read_fixed(tag: number, end: number): FieldValue {
  const buf = current;
  const at = pos;
  switch (tag) {
    case TAG.BOOL:
      need(end, 1, 'a bool');
      pos += 1;
      return buf[at] !== 0;
    case TAG.INT8:
      need(end, 1, 'an int8');
      pos += 1;
      return buf.readInt8(at);
    case TAG.UINT8:
      need(end, 1, 'a uint8');
      pos += 1;
      return buf[at]!;
    case TAG.INT16:
      need(end, 2, 'an int16');
      pos += 2;
      return buf.readInt16BE(at);
    case TAG.UINT16:
      need(end, 2, 'a uint16');
      pos += 2;
      return buf.readUInt16BE(at);
    case TAG.INT32:
      need(end, 4, 'an int32');
      pos += 4;
      return buf.readInt32BE(at);
    case TAG.UINT32:
      need(end, 4, 'a uint32');
      pos += 4;
      return buf.readUInt32BE(at);
    case TAG.INT64: {
      need(end, 8, 'an int64');
      pos += 8;
      const big = buf.readBigInt64BE(at);
      const small = Number(big);
      return Number.isSafeInteger(small) ? small : big;
    }
    case TAG.FLOAT:
      need(end, 4, 'a float');
      pos += 4;
      return buf.readFloatBE(at);
    case TAG.DOUBLE:
      need(end, 8, 'a double');
      pos += 8;
      return buf.readDoubleBE(at);
    case TAG.DECIMAL:
      need(end, 5, 'a decimal');
      pos += 5;
      return new Decimal(buf[at]!, buf.readUInt32BE(at + 1));
    case TAG.TIMESTAMP:
      need(end, 8, 'a timestamp');
      pos += 8;
      return new Date(Number(buf.readBigUInt64BE(at)) * 1000);
    default:
      throw malformed(`unknown field type tag 0x${tag.toString(16).padStart(2, '0')} at offset ${at - 1}`);
  }
}

function read_value(end: number, depth: number): FieldValue {
  need(end, 1, 'a field type tag');
  const buf = current;
  const tag = buf[pos]!;
  pos += 1;
  switch (tag) {
    case TAG.VOID:
      return null;
    case TAG.LONGSTR: {
      const value_end = sized(end, 'a long string');
      const value = buf.toString('utf8', pos, value_end);
      pos = value_end;
      return value;
    }
    case TAG.BYTES: {
      const value_end = sized(end, 'a byte array');
      // A copy: a view would pin the whole network chunk for as long as the header is kept.
      const value = Buffer.from(buf.subarray(pos, value_end));
      pos = value_end;
      return value;
    }
    case TAG.TABLE:
      return read_entries(sized(end, 'a nested table'), depth + 1);
    case TAG.ARRAY:
      return read_array(sized(end, 'an array'), depth + 1);
    default:
      return read_fixed(tag, end);
  }
}

/** The table at `offset` of `buf` (u32 length, then entries) and the offset just past it. */
export function decode_table(buf: Buffer, offset: number): { table: FieldTable; next: number } {
  if (!Number.isInteger(offset) || offset < 0) throw malformed(`bad offset ${offset}`);
  current = buf;
  pos = offset;
  try {
    const end = sized(buf.length, 'a field table');
    return { table: read_entries(end, 0), next: end };
  } finally {
    current = EMPTY; // so no reference to a network chunk outlives the call
  }
}

/** The entries filling all of `buf`, with no length prefix (AMQPLAIN's login response). */
export function decode_table_body(buf: Buffer): FieldTable {
  current = buf;
  pos = 0;
  try {
    return read_entries(buf.length, 0);
  } finally {
    current = EMPTY;
  }
}

// ------------------------------------------------------------------ encoding

/** A growing output buffer; tables are small and their size is only known once written. */
class TableWriter {
  buf = Buffer.allocUnsafe(256);
  at = 0;

  room(bytes: number): number {
    const at = this.at;
    if (at + bytes > this.buf.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, at + bytes));
      this.buf.copy(grown, 0, 0, at);
      this.buf = grown;
    }
    this.at = at + bytes;
    return at;
  }

  // Each write takes its offset from room() before touching buf, which room() may have replaced.
  u8(value: number): void {
    const at = this.room(1);
    this.buf[at] = value;
  }

  u32(value: number): void {
    const at = this.room(4);
    this.buf.writeUInt32BE(value, at);
  }

  i32(value: number): void {
    const at = this.room(4);
    this.buf.writeInt32BE(value, at);
  }

  i64(value: bigint): void {
    const at = this.room(8);
    this.buf.writeBigInt64BE(value, at);
  }

  u64(value: bigint): void {
    const at = this.room(8);
    this.buf.writeBigUInt64BE(value, at);
  }

  f64(value: number): void {
    const at = this.room(8);
    this.buf.writeDoubleBE(value, at);
  }

  utf8(value: string): number {
    const bytes = Buffer.byteLength(value, 'utf8');
    const at = this.room(bytes);
    this.buf.write(value, at, 'utf8');
    return bytes;
  }

  bytes(value: Uint8Array): void {
    const at = this.room(value.length);
    this.buf.set(value, at);
  }

  /** Starts a u32-length-prefixed section; `close_sized` fills the length in. */
  open_sized(): number {
    return this.room(4);
  }

  close_sized(length_at: number): void {
    this.buf.writeUInt32BE(this.at - length_at - 4, length_at);
  }

  result(): Buffer {
    const bytes = this.buf.subarray(0, this.at);
    // Headers get stored with messages: don't keep a mostly empty growth buffer alive for each.
    return this.at * 2 < this.buf.length ? Buffer.from(bytes) : bytes;
  }
}

function is_plain_object(value: object): boolean {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function write_number(w: TableWriter, value: number): void {
  if (Number.isInteger(value) && value >= -0x80000000 && value <= 0x7fffffff) {
    w.u8(TAG.INT32);
    w.i32(value);
  } else if (Number.isSafeInteger(value)) {
    w.u8(TAG.INT64);
    w.i64(BigInt(value));
  } else {
    w.u8(TAG.DOUBLE);
    w.f64(value);
  }
}

function write_object(w: TableWriter, value: object, depth: number): void {
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) {
    w.u8(TAG.BYTES);
    w.u32(value.length);
    w.bytes(value);
  } else if (value instanceof Date) {
    const seconds = Math.floor(value.getTime() / 1000);
    if (!(seconds >= 0)) throw new RangeError(`timestamp ${String(value)} is not a time after 1970`);
    w.u8(TAG.TIMESTAMP);
    w.u64(BigInt(seconds));
  } else if (value instanceof Decimal) {
    const { scale, value: digits } = value;
    if (!Number.isInteger(scale) || scale < 0 || scale > 0xff || !Number.isInteger(digits) || digits < 0) {
      throw new RangeError(`decimal needs a scale of 0-255 and a uint32 value, got ${scale} and ${digits}`);
    }
    w.u8(TAG.DECIMAL);
    w.u8(scale);
    w.u32(digits);
  } else if (Array.isArray(value)) {
    w.u8(TAG.ARRAY);
    const length_at = w.open_sized();
    for (const item of value) write_value(w, item as FieldValue | undefined, depth + 1);
    w.close_sized(length_at);
  } else if (is_plain_object(value)) {
    w.u8(TAG.TABLE);
    write_sized_entries(w, value as FieldTable, depth + 1);
  } else {
    throw new TypeError(`cannot put a ${value.constructor?.name ?? 'object'} in a field table`);
  }
}

function write_value(w: TableWriter, value: FieldValue | undefined, depth: number): void {
  if (depth > DEPTH_MAX) throw new TypeError(`field values nested deeper than ${DEPTH_MAX} (a cycle?)`);
  switch (typeof value) {
    case 'boolean':
      w.u8(TAG.BOOL);
      w.u8(value ? 1 : 0);
      return;
    case 'number':
      return write_number(w, value);
    case 'bigint':
      w.u8(TAG.INT64);
      w.i64(value);
      return;
    case 'string': {
      w.u8(TAG.LONGSTR);
      const length_at = w.open_sized();
      w.utf8(value);
      w.close_sized(length_at);
      return;
    }
    case 'undefined':
      w.u8(TAG.VOID);
      return;
    case 'object':
      if (value === null) w.u8(TAG.VOID);
      else write_object(w, value, depth);
      return;
    default:
      throw new TypeError(`cannot put a ${typeof value} in a field table`);
  }
}

function write_entries(w: TableWriter, table: FieldTable, depth: number): void {
  for (const key of Object.keys(table)) {
    const key_at = w.room(1);
    const key_bytes = w.utf8(key);
    if (key_bytes > 0xff) throw new RangeError(`field name of ${key_bytes} bytes exceeds 255: ${key.slice(0, 40)}…`);
    w.buf[key_at] = key_bytes;
    write_value(w, table[key], depth);
  }
}

function write_sized_entries(w: TableWriter, table: FieldTable, depth: number): void {
  const length_at = w.open_sized();
  write_entries(w, table, depth);
  w.close_sized(length_at);
}

/** `table` with its u32 length prefix, types inferred from the JavaScript values. */
export function encode_table(table: FieldTable): Buffer {
  const w = new TableWriter();
  write_sized_entries(w, table, 0);
  return w.result();
}

/** The entries of `table` with no length prefix (as AMQPLAIN's login response carries them). */
export function encode_table_body(table: FieldTable): Buffer {
  const w = new TableWriter();
  write_entries(w, table, 0);
  return w.result();
}

// ------------------------------------------------------------------ reading and comparing values

const DECIMAL_INTEGER = /^[+-]?\d+$/;

/**
 * An x-argument as an integer: clients send numbers with whatever integer tag they like (and some
 * send strings), so all of those count; undefined for anything else, fractions and unsafe
 * integers included.
 */
export function as_integer(value: FieldValue | undefined): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) ? value : undefined;
  if (typeof value === 'bigint') {
    const small = Number(value);
    return Number.isSafeInteger(small) ? small : undefined;
  }
  if (typeof value === 'string' && DECIMAL_INTEGER.test(value.trim())) {
    const parsed = Number(value.trim());
    return Number.isSafeInteger(parsed) ? parsed : undefined;
  }
  return undefined;
}

function numbers_equal(a: number | bigint, b: number | bigint): boolean {
  if (typeof a === typeof b) return a === b || (a !== a && b !== b); // NaN equals NaN here
  const [n, big] = typeof a === 'number' ? [a, b as bigint] : [b as number, a as bigint];
  return Number.isInteger(n) && BigInt(n) === big;
}

function values_equal(a: FieldValue | undefined, b: FieldValue | undefined): boolean {
  if (a === b) return true;
  if (a === null || a === undefined || b === null || b === undefined) return (a ?? null) === (b ?? null);
  const kind_a = typeof a;
  const kind_b = typeof b;
  if ((kind_a === 'number' || kind_a === 'bigint') && (kind_b === 'number' || kind_b === 'bigint')) {
    return numbers_equal(a as number | bigint, b as number | bigint);
  }
  if (kind_a !== 'object' || kind_b !== 'object') return false;
  if (Buffer.isBuffer(a) || Buffer.isBuffer(b)) return Buffer.isBuffer(a) && Buffer.isBuffer(b) && a.equals(b);
  if (a instanceof Date || b instanceof Date) {
    return a instanceof Date && b instanceof Date && Object.is(a.getTime(), b.getTime());
  }
  if (a instanceof Decimal || b instanceof Decimal) {
    return a instanceof Decimal && b instanceof Decimal && a.scale === b.scale && a.value === b.value;
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => values_equal(item, b[i]));
  }
  return tables_equal(a as FieldTable, b as FieldTable);
}

/**
 * Whether two tables hold the same entries, whatever their key order and whichever integer tags
 * carried the numbers: what "equivalent arguments" means when a queue or exchange is redeclared.
 */
export function tables_equal(a: FieldTable, b: FieldTable): boolean {
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => Object.hasOwn(b, key) && values_equal(a[key], b[key]));
}
