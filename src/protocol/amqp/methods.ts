// The AMQP 0-9-1 method codec: decode_method turns a method frame's payload into a typed
// DecodedMethod and encode_method does the reverse. Argument types are inferred from the
// declarations in method_declarations.ts, and each method's decoder and encoder are compiled from
// them once at load, so the hot path (basic.publish, basic.ack) is a loop over a small array.
import { AmqpError, ReplyCode } from './constants.ts';
import { decode_table, encode_table, type FieldTable } from './field_table.ts';
import { METHODS, type FieldType, type MethodSpec } from './method_declarations.ts';
import { write_utf8 } from './short_string.ts';

export { METHODS, type FieldSpec, type FieldType, type MethodSpec } from './method_declarations.ts';

// ------------------------------------------------------------------ types inferred from the declarations

type Declarations = (typeof METHODS)[number];
export type MethodName = Declarations['name'];
type FieldsOf<N extends MethodName> = Extract<Declarations, { readonly name: N }>['fields'][number];

type Decoded<T extends FieldType> = T extends 'shortstr'
  ? string
  : T extends 'longstr'
    ? Buffer
    : T extends 'bit'
      ? boolean
      : T extends 'table'
        ? FieldTable
        : number;
/** Long strings may be given as text, sent as its UTF-8 bytes. */
type Encodable<T extends FieldType> = T extends 'longstr' ? Buffer | string : Decoded<T>;

type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** The arguments of method `N` as decoded: every field present. */
export type MethodArgs<N extends MethodName> = Simplify<{ [F in FieldsOf<N> as F['name']]: Decoded<F['type']> }>;

/** The arguments `encode_method` takes for `N`: fields with a default may be left out. */
export type MethodInput<N extends MethodName> = Simplify<
  { [F in FieldsOf<N> as F extends { readonly default: unknown } ? never : F['name']]: Encodable<F['type']> } & {
    [F in FieldsOf<N> as F extends { readonly default: unknown } ? F['name'] : never]?: Encodable<F['type']>;
  }
>;

/** A decoded method; `switch (m.name)` narrows `m.args`. */
export type DecodedMethod = {
  [N in MethodName]: { name: N; class_id: number; method_id: number; args: MethodArgs<N> };
}[MethodName];

// ------------------------------------------------------------------ compiled codecs

const KIND = {
  octet: 0,
  short: 1,
  long: 2,
  longlong: 3,
  timestamp: 4,
  shortstr: 5,
  longstr: 6,
  bit: 7,
  table: 8,
} as const satisfies Record<FieldType, number>;

interface Op {
  readonly name: string;
  readonly kind: number;
  /** For a bit, its place in the shared octet (0 = low bit, and the one that reads or writes it). */
  readonly bit: number;
  readonly required: boolean;
  readonly fallback: unknown;
  readonly truncate: boolean;
}

interface Compiled {
  readonly spec: MethodSpec;
  readonly name: MethodName;
  readonly class_id: number;
  readonly method_id: number;
  readonly ops: readonly Op[];
}

function compile(spec: MethodSpec): Compiled {
  const ops: Op[] = [];
  let bit = 0;
  for (const f of spec.fields) {
    // Runs of bits share octets, eight to an octet; any other field ends the run.
    const place = f.type === 'bit' ? bit++ % 8 : 0;
    if (f.type !== 'bit') bit = 0;
    ops.push({
      name: f.name,
      kind: KIND[f.type],
      bit: place,
      required: !('default' in f),
      fallback: f.default,
      truncate: f.truncate === true,
    });
  }
  return { spec, name: spec.name as MethodName, class_id: spec.class_id, method_id: spec.method_id, ops };
}

const BY_ID = new Map<number, Compiled>();
const BY_NAME = new Map<string, Compiled>();
for (const spec of METHODS as readonly MethodSpec[]) {
  const compiled = compile(spec);
  BY_ID.set(spec.class_id * 0x10000 + spec.method_id, compiled);
  BY_NAME.set(spec.name, compiled);
}

/** The declaration of method `name`. */
export function method_spec(name: MethodName): MethodSpec {
  return BY_NAME.get(name)!.spec;
}

/** The declaration of the method with these ids, if there is one. */
export function find_method(class_id: number, method_id: number): MethodSpec | undefined {
  return BY_ID.get(class_id * 0x10000 + method_id)?.spec;
}

// ---- decoding

function bad_args(c: Compiled, message: string): AmqpError {
  return new AmqpError(ReplyCode.SYNTAX_ERROR, `${c.name}: ${message}`, c.class_id, c.method_id);
}

function truncated(c: Compiled, op: Op, at: number, end: number): AmqpError {
  return bad_args(c, `arguments truncated at ${op.name} (offset ${at} of ${end} bytes)`);
}

/** 64-bit values read as two halves: no BigInt per delivery tag, and the safe-integer check is free. */
function read_u64(c: Compiled, op: Op, buf: Buffer, at: number): number {
  const high = buf.readUInt32BE(at);
  if (high > 0x1fffff) {
    throw bad_args(c, `${op.name} ${buf.readBigUInt64BE(at)} is too large (limit 2^53 - 1)`);
  }
  return high * 0x100000000 + buf.readUInt32BE(at + 4);
}

function read_table(c: Compiled, op: Op, buf: Buffer, at: number): { table: FieldTable; next: number } {
  try {
    return decode_table(buf, at);
  } catch (error) {
    if (!(error instanceof AmqpError)) throw error;
    throw new AmqpError(error.code, `${c.name}.${op.name}: ${error.message}`, c.class_id, c.method_id);
  }
}

function decode_args(c: Compiled, buf: Buffer): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  const ops = c.ops;
  const end = buf.length;
  let at = 4;
  let bits = 0;
  for (let i = 0; i < ops.length; i++) {
    const op = ops[i]!;
    switch (op.kind) {
      case KIND.bit:
        if (op.bit === 0) {
          if (at >= end) throw truncated(c, op, at, end);
          bits = buf[at++]!;
        }
        args[op.name] = (bits & (1 << op.bit)) !== 0;
        break;
      case KIND.octet:
        if (at + 1 > end) throw truncated(c, op, at, end);
        args[op.name] = buf[at++]!;
        break;
      case KIND.short:
        if (at + 2 > end) throw truncated(c, op, at, end);
        args[op.name] = buf.readUInt16BE(at);
        at += 2;
        break;
      case KIND.long:
        if (at + 4 > end) throw truncated(c, op, at, end);
        args[op.name] = buf.readUInt32BE(at);
        at += 4;
        break;
      case KIND.longlong:
      case KIND.timestamp:
        if (at + 8 > end) throw truncated(c, op, at, end);
        args[op.name] = read_u64(c, op, buf, at);
        at += 8;
        break;
      case KIND.shortstr: {
        const bytes = at < end ? buf[at]! : 0;
        if (at + 1 + bytes > end) throw truncated(c, op, at, end);
        args[op.name] = buf.toString('utf8', at + 1, at + 1 + bytes);
        at += 1 + bytes;
        break;
      }
      case KIND.longstr: {
        const bytes = at + 4 <= end ? buf.readUInt32BE(at) : 0;
        if (at + 4 + bytes > end) throw truncated(c, op, at, end);
        // A view: the caller reads a response or secret at once and keeps nothing of it.
        args[op.name] = buf.subarray(at + 4, at + 4 + bytes);
        at += 4 + bytes;
        break;
      }
      default: {
        const { table, next } = read_table(c, op, buf, at);
        args[op.name] = table;
        at = next;
      }
    }
  }
  if (at !== end) throw bad_args(c, `${end - at} bytes after the last argument`);
  return args;
}

/** Decodes a method frame's payload: class id, method id, then the arguments. */
export function decode_method(payload: Buffer): DecodedMethod {
  if (payload.length < 4) {
    throw new AmqpError(ReplyCode.SYNTAX_ERROR, `method frame of ${payload.length} bytes has no class and method id`);
  }
  const class_id = payload.readUInt16BE(0);
  const method_id = payload.readUInt16BE(2);
  const c = BY_ID.get(class_id * 0x10000 + method_id);
  if (c === undefined) {
    throw new AmqpError(ReplyCode.NOT_IMPLEMENTED, `unknown method ${class_id}/${method_id}`, class_id, method_id);
  }
  return { name: c.name, class_id, method_id, args: decode_args(c, payload) } as DecodedMethod;
}

// ---- encoding

/** The longest prefix of `text` whose UTF-8 fits a shortstr, cut between characters. */
function truncate_utf8(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  let end = 255;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--;
  return bytes.toString('utf8', 0, end);
}

function value_of(c: Compiled, op: Op, args: Record<string, unknown>): unknown {
  const value = args[op.name];
  if (value !== undefined) {
    if (op.truncate && typeof value === 'string' && value.length > 85 && Buffer.byteLength(value) > 255) {
      return truncate_utf8(value);
    }
    return value;
  }
  if (op.required) throw new TypeError(`${c.name}: missing argument ${op.name}`);
  return op.fallback;
}

function shortstr_bytes(c: Compiled, op: Op, value: unknown): number {
  if (typeof value !== 'string') throw new TypeError(`${c.name}.${op.name} must be a string, got ${typeof value}`);
  const bytes = value.length === 0 ? 0 : Buffer.byteLength(value, 'utf8');
  if (bytes > 0xff) throw new RangeError(`${c.name}.${op.name} of ${bytes} bytes exceeds a short string's 255`);
  return bytes;
}

function longstr_bytes(c: Compiled, op: Op, value: unknown): number {
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8');
  if (Buffer.isBuffer(value)) return value.length;
  throw new TypeError(`${c.name}.${op.name} must be a Buffer or a string, got ${typeof value}`);
}

function table_of(c: Compiled, op: Op, value: unknown): Buffer {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || Buffer.isBuffer(value)) {
    throw new TypeError(`${c.name}.${op.name} must be a field table`);
  }
  return encode_table(value as FieldTable);
}

const FIXED_BYTES = [1, 2, 4, 8, 8] as const; // octet, short, long, longlong, timestamp

/** The arguments' encoded size, with the tables encoded on the way (written by `write_args`). */
function args_bytes(c: Compiled, args: Record<string, unknown>, tables: Buffer[]): number {
  let bytes = 0;
  for (const op of c.ops) {
    if (op.kind <= KIND.timestamp) bytes += FIXED_BYTES[op.kind]!;
    else if (op.kind === KIND.bit) bytes += op.bit === 0 ? 1 : 0;
    else if (op.kind === KIND.shortstr) bytes += 1 + shortstr_bytes(c, op, value_of(c, op, args));
    else if (op.kind === KIND.longstr) bytes += 4 + longstr_bytes(c, op, value_of(c, op, args));
    else {
      const table = table_of(c, op, value_of(c, op, args));
      tables.push(table);
      bytes += table.length;
    }
  }
  return bytes;
}

function write_u64(c: Compiled, op: Op, buf: Buffer, at: number, value: unknown): void {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${c.name}.${op.name} must be a safe non-negative integer, got ${String(value)}`);
  }
  const high = Math.floor(value / 0x100000000);
  buf.writeUInt32BE(high, at);
  buf.writeUInt32BE(value - high * 0x100000000, at + 4);
}

function write_args(c: Compiled, args: Record<string, unknown>, tables: Buffer[], buf: Buffer, at: number): number {
  let bits_at = 0;
  let table_index = 0;
  for (const op of c.ops) {
    const value = value_of(c, op, args);
    switch (op.kind) {
      case KIND.bit:
        if (op.bit === 0) buf[(bits_at = at++)] = 0;
        if (value) buf[bits_at]! |= 1 << op.bit;
        break;
      case KIND.octet:
        at = buf.writeUInt8(value as number, at);
        break;
      case KIND.short:
        at = buf.writeUInt16BE(value as number, at);
        break;
      case KIND.long:
        at = buf.writeUInt32BE(value as number, at);
        break;
      case KIND.longlong:
      case KIND.timestamp:
        write_u64(c, op, buf, at, value);
        at += 8;
        break;
      case KIND.shortstr:
        buf[at] = write_utf8(buf, value as string, at + 1);
        at += 1 + buf[at]!;
        break;
      case KIND.longstr: {
        const bytes =
          typeof value === 'string' ? buf.write(value, at + 4, 'utf8') : (value as Buffer).copy(buf, at + 4);
        buf.writeUInt32BE(bytes, at);
        at += 4 + bytes;
        break;
      }
      default:
        at += tables[table_index++]!.copy(buf, at);
    }
  }
  return at;
}

/**
 * Method `name` encoded after `head_bytes` left free and before `tail_bytes` left free, so a frame
 * writer can put the frame header and end around the payload without copying it.
 */
export function encode_method_with_room<N extends MethodName>(
  name: N,
  args: MethodArgs<N> | MethodInput<N>,
  head_bytes: number,
  tail_bytes: number,
): Buffer {
  const c = BY_NAME.get(name);
  if (c === undefined) throw new TypeError(`unknown method ${String(name)}`);
  const values = args as Record<string, unknown>;
  const tables: Buffer[] = [];
  const payload_bytes = 4 + args_bytes(c, values, tables);
  const buf = Buffer.allocUnsafe(head_bytes + payload_bytes + tail_bytes);
  buf.writeUInt16BE(c.class_id, head_bytes);
  buf.writeUInt16BE(c.method_id, head_bytes + 2);
  write_args(c, values, tables, buf, head_bytes + 4);
  return buf;
}

/** A method frame's payload: class id, method id, then the arguments. */
export function encode_method<N extends MethodName>(name: N, args: MethodArgs<N> | MethodInput<N>): Buffer {
  return encode_method_with_room(name, args, 0, 0);
}
