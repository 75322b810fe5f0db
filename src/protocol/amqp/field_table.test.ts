// Field tables: every RabbitMQ type tag decodes, our encoding round-trips, amqplib reads what we
// write and we read what it writes, and malformed input only ever ends in an AmqpError.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { amqplib_codec, amqplib_encode_table, seeded_random } from './amqplib_test_support.ts';
import { AmqpError, ReplyCode } from './constants.ts';
import {
  Decimal,
  as_integer,
  decode_table,
  decode_table_body,
  encode_table,
  encode_table_body,
  tables_equal,
  type FieldTable,
} from './field_table.ts';

/** A table's bytes: the u32 length, then the entries given as hex. */
function table_bytes(entries_hex: string): Buffer {
  const entries = Buffer.from(entries_hex.replace(/\s+/g, ''), 'hex');
  const length = Buffer.alloc(4);
  length.writeUInt32BE(entries.length);
  return Buffer.concat([length, entries]);
}

/** One entry named "k" (shortstr 01 6b) with tag `tag` and the value bytes `value_hex`. */
function entry(tag: string, value_hex: string): string {
  return '016b' + Buffer.from(tag).toString('hex') + value_hex;
}

test('every type tag decodes to its value', () => {
  const cases: Array<[string, string, unknown]> = [
    ['t', '01', true],
    ['t', '00', false],
    ['b', 'ff', -1],
    ['B', 'ff', 255],
    ['s', '8000', -32768],
    ['u', 'ffff', 65535],
    ['I', 'fffffffe', -2],
    ['i', 'ffffffff', 4294967295],
    ['l', 'fffffffffffffff6', -10],
    ['l', '001fffffffffffff', Number.MAX_SAFE_INTEGER],
    ['l', '7fffffffffffffff', 0x7fffffffffffffffn],
    ['l', '8000000000000000', -0x8000000000000000n],
    ['f', '3fc00000', 1.5],
    ['d', '400921fb54442d18', Math.PI],
    ['D', '02000004d2', new Decimal(2, 1234)],
    ['S', '00000005' + Buffer.from('héll').toString('hex'), 'héll'],
    ['A', '0000000a' + '4900000001' + '5300000000', [1, '']],
    ['T', '000000005f5e1000', new Date(1_600_000_000_000)],
    ['F', '00000007' + '0161' + '56' + '0162' + '7401', { a: null, b: true }],
    ['V', '', null],
    ['x', '00000003' + '00ff10', Buffer.from([0, 0xff, 0x10])],
  ];
  for (const [tag, value_hex, expected] of cases) {
    const bytes = table_bytes(entry(tag, value_hex));
    const { table, next } = decode_table(bytes, 0);
    assert.deepEqual(table, { k: expected }, `tag ${tag} ${value_hex}`);
    assert.equal(next, bytes.length);
  }
});

const EVERYTHING: FieldTable = {
  yes: true,
  no: false,
  small: 7,
  negative: -123456,
  int32_max: 0x7fffffff,
  int32_min: -0x80000000,
  above_int32: 0x80000000,
  safe_max: Number.MAX_SAFE_INTEGER,
  safe_min: Number.MIN_SAFE_INTEGER,
  big: 0x7fffffffffffffffn,
  big_negative: -0x8000000000000000n,
  fraction: 2.5,
  unsafe: 1e300,
  text: 'naïve ☃ text',
  empty: '',
  bytes: Buffer.from([1, 2, 3, 0xff]),
  when: new Date(1_700_000_000_000),
  decimal: new Decimal(3, 4_294_967_295),
  nothing: null,
  list: [1, 'two', [3, [4]], { five: 5 }, null, false, Buffer.alloc(0)],
  nested: { deeper: { deepest: { x: 'y' } }, '': 'empty key' },
};

test('our encoding round-trips every inferred type', () => {
  const bytes = encode_table(EVERYTHING);
  const { table, next } = decode_table(bytes, 0);
  assert.equal(next, bytes.length);
  assert.deepEqual(table, EVERYTHING);
  assert.deepEqual(decode_table_body(encode_table_body(EVERYTHING)), EVERYTHING);
  assert.deepEqual(decode_table(encode_table({}), 0), { table: {}, next: 4 });
});

test('encoding picks I for int32, l for other safe integers and bigints, d for the rest', () => {
  const tag_of = (value: number | bigint) => String.fromCharCode(encode_table({ k: value })[4 + 2]!);
  assert.equal(tag_of(0), 'I');
  assert.equal(tag_of(-0x80000000), 'I');
  assert.equal(tag_of(0x80000000), 'l');
  assert.equal(tag_of(-(2 ** 40)), 'l');
  assert.equal(tag_of(5n), 'l');
  assert.equal(tag_of(0.5), 'd');
  assert.equal(tag_of(2 ** 60), 'd');
  assert.equal(tag_of(Number.NaN), 'd');
  const undefined_value = encode_table({ k: undefined } as unknown as FieldTable);
  assert.deepEqual(decode_table(undefined_value, 0).table, { k: null });
});

test('decode at an offset and the key __proto__ stays an own entry', () => {
  const table = encode_table(JSON.parse('{"__proto__": {"polluted": 1}, "a": 1}') as FieldTable);
  const bytes = Buffer.concat([Buffer.from('xyz'), table, Buffer.from('tail')]);
  const { table: decoded, next } = decode_table(bytes, 3);
  assert.equal(next, 3 + table.length);
  assert.equal(Object.getPrototypeOf(decoded), Object.prototype);
  assert.deepEqual(Object.keys(decoded), ['__proto__', 'a']);
  assert.deepEqual(Object.getOwnPropertyDescriptor(decoded, '__proto__')?.value, { polluted: 1 });
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

/** What amqplib's decoder gives for a value of ours. */
function as_amqplib_decodes(value: unknown): unknown {
  if (value instanceof Date) return { '!': 'timestamp', value: value.getTime() / 1000 };
  if (value instanceof Decimal) return { '!': 'decimal', value: { places: value.scale, digits: value.value } };
  if (typeof value === 'bigint') return Number(value);
  if (Array.isArray(value)) return value.map(as_amqplib_decodes);
  if (value !== null && typeof value === 'object' && !Buffer.isBuffer(value)) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, as_amqplib_decodes(v)]));
  }
  return value;
}

test('amqplib decodes the tables we encode', () => {
  const bytes = encode_table(EVERYTHING);
  const theirs = amqplib_codec.decodeFields(bytes.subarray(4));
  assert.deepEqual(theirs, as_amqplib_decodes(EVERYTHING));
});

test('we decode the tables amqplib encodes, explicit types included', () => {
  const theirs = {
    text: 'hello ☃',
    byte: 5,
    short: 1000,
    int: 100000,
    long: 2 ** 40,
    double: 0.25,
    yes: true,
    nothing: null,
    buffer: Buffer.from('raw'),
    list: ['a', 1, [true]],
    nested: { inner: { x: -1 } },
    float: { '!': 'float', value: 1.5 },
    uint8: { '!': 'uint8', value: 200 },
    uint16: { '!': 'uint16', value: 60000 },
    uint32: { '!': 'uint32', value: 4000000000 },
    int16: { '!': 'int16', value: -2 },
    timestamp: { '!': 'timestamp', value: 1_700_000_000 },
    decimal: { '!': 'decimal', value: { places: 2, digits: 314 } },
  };
  const { table } = decode_table(amqplib_encode_table(theirs), 0);
  assert.deepEqual(table, {
    ...theirs,
    float: 1.5,
    uint8: 200,
    uint16: 60000,
    uint32: 4000000000,
    int16: -2,
    timestamp: new Date(1_700_000_000_000),
    decimal: new Decimal(2, 314),
  });
});

function assert_malformed(bytes: Buffer, pattern: RegExp, offset = 0): void {
  assert.throws(
    () => decode_table(bytes, offset),
    (error: unknown) =>
      error instanceof AmqpError && error.code === ReplyCode.SYNTAX_ERROR && pattern.test(error.message),
    bytes.toString('hex'),
  );
}

test('malformed tables throw SYNTAX_ERROR with a clear message', () => {
  assert_malformed(Buffer.from('0000', 'hex'), /length of a field table/);
  assert_malformed(Buffer.from('00000010', 'hex'), /a field table needs 16 bytes/);
  assert_malformed(table_bytes(entry('z', '')), /unknown field type tag 0x7a/);
  assert_malformed(table_bytes('05616263'), /a field name needs 5 bytes/);
  assert_malformed(table_bytes('016b'), /a field type tag/);
  assert_malformed(table_bytes(entry('I', '0000')), /an int32 needs 4 bytes/);
  assert_malformed(table_bytes(entry('S', 'ffffffff')), /a long string needs 4294967295 bytes/);
  assert_malformed(table_bytes(entry('F', '00000003' + '016b49')), /int32/);
  assert_malformed(table_bytes(entry('A', '00000001' + '49')), /int32/);
  assert_malformed(encode_table({}), /bad offset/, -1);
  assert_malformed(encode_table({}), /length of a field table/, 2);
  let deep: FieldTable = { x: 1 };
  for (let i = 0; i < 200; i++) deep = { d: deep };
  assert.throws(() => encode_table(deep), /nested deeper/);
  let nested_bytes = table_bytes('');
  for (let i = 0; i < 100; i++) nested_bytes = table_bytes('0164' + '46' + nested_bytes.toString('hex'));
  assert_malformed(nested_bytes, /nested deeper than 64/);
});

test('encoding refuses what no table can hold', () => {
  assert.throws(() => encode_table({ ['k'.repeat(256)]: 1 }), RangeError);
  assert.throws(() => encode_table({ k: new Date(-1000) }), RangeError);
  assert.throws(() => encode_table({ k: new Decimal(256, 1) }), RangeError);
  assert.throws(() => encode_table({ k: new Map() as unknown as FieldTable }), TypeError);
  assert.throws(() => encode_table({ k: (() => 1) as unknown as FieldTable }), TypeError);
  const cyclic: FieldTable = {};
  cyclic.self = cyclic;
  assert.throws(() => encode_table(cyclic), /nested deeper/);
});

/** Throws unless `run` returns or throws an AmqpError. */
function only_amqp_errors(run: () => unknown, input: Buffer): void {
  try {
    run();
  } catch (error) {
    if (!(error instanceof AmqpError)) assert.fail(`${String(error)} for ${input.toString('hex')}`);
  }
}

test('fuzz: 2,000 random and mutated buffers never throw anything but AmqpError', () => {
  const random = seeded_random(7);
  const valid = encode_table(EVERYTHING);
  for (let i = 0; i < 2000; i++) {
    let bytes: Buffer;
    if (i % 2 === 0) {
      bytes = Buffer.alloc(Math.floor(random() * 64));
      for (let j = 0; j < bytes.length; j++) bytes[j] = Math.floor(random() * 256);
      if (i % 4 === 0 && bytes.length >= 4) bytes.writeUInt32BE(bytes.length - 4, 0);
    } else {
      bytes = Buffer.from(valid.subarray(0, Math.floor(random() * (valid.length + 1))));
      for (let flips = 0; flips < 3 && bytes.length > 0; flips++) {
        bytes[Math.floor(random() * bytes.length)] = Math.floor(random() * 256);
      }
    }
    only_amqp_errors(() => decode_table(bytes, 0), bytes);
    only_amqp_errors(() => decode_table_body(bytes), bytes);
  }
});

test('as_integer reads x-arguments sent with any integer type, or as text', () => {
  assert.equal(as_integer(60000), 60000);
  assert.equal(as_integer(-5), -5);
  assert.equal(as_integer(12n), 12);
  assert.equal(as_integer(' 42 '), 42);
  assert.equal(as_integer('-7'), -7);
  assert.equal(as_integer(1.5), undefined);
  assert.equal(as_integer('1.5'), undefined);
  assert.equal(as_integer('0x10'), undefined);
  assert.equal(as_integer(''), undefined);
  assert.equal(as_integer(2n ** 60n), undefined);
  assert.equal(as_integer(true), undefined);
  assert.equal(as_integer(null), undefined);
  assert.equal(as_integer(undefined), undefined);
});

test('tables_equal ignores key order and integer tags, and nothing else', () => {
  const a: FieldTable = { 'x-max-length': 10, 'x-queue-type': 'quorum', nested: { b: [1, 2], a: true } };
  const b: FieldTable = { nested: { a: true, b: [1n, 2] }, 'x-queue-type': 'quorum', 'x-max-length': 10n };
  assert.ok(tables_equal(a, b));
  assert.ok(tables_equal({}, {}));
  assert.ok(
    tables_equal(
      { d: new Date(5000), x: Buffer.from('a'), n: null },
      { n: null, x: Buffer.from('a'), d: new Date(5000) },
    ),
  );
  assert.ok(tables_equal({ v: new Decimal(1, 2), nan: Number.NaN }, { v: new Decimal(1, 2), nan: Number.NaN }));
  assert.ok(!tables_equal({ a: 1 }, { a: 2 }));
  assert.ok(!tables_equal({ a: 1 }, { a: '1' }));
  assert.ok(!tables_equal({ a: 1 }, { b: 1 }));
  assert.ok(!tables_equal({ a: 1 }, { a: 1, b: null }));
  assert.ok(!tables_equal({ a: null }, { a: false }));
  assert.ok(!tables_equal({ a: 1.5 }, { a: 1n }));
  assert.ok(!tables_equal({ a: [1] }, { a: [1, 2] }));
  assert.ok(!tables_equal({ a: [1] }, { a: { 0: 1 } }));
  assert.ok(!tables_equal({ a: Buffer.from('a') }, { a: 'a' }));
  assert.ok(!tables_equal({ a: new Decimal(1, 2) }, { a: new Decimal(2, 2) }));
  assert.ok(!tables_equal({ a: new Date(1) }, { a: 1 }));
});
