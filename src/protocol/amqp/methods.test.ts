// Methods: every declaration round-trips, amqplib's encoder and decoder agree with ours in both
// directions, bits pack as the spec says, and bad payloads end in the right AmqpError.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { amqplib_defs, amqplib_id, our_field_name, seeded_random } from './amqplib_test_support.ts';
import { AmqpError, ReplyCode } from './constants.ts';
import type { FieldTable } from './field_table.ts';
import {
  METHODS,
  decode_method,
  encode_method,
  find_method,
  method_spec,
  type DecodedMethod,
  type FieldSpec,
  type MethodName,
  type MethodSpec,
} from './methods.ts';

const SPECS = METHODS as readonly MethodSpec[];

type Args = Record<string, unknown>;

/** A value for a field of `type`, varied by `random`. */
function sample_value(type: FieldSpec['type'], random: () => number): unknown {
  const below = (n: number) => Math.floor(random() * n);
  switch (type) {
    case 'octet':
      return below(256);
    case 'short':
      return below(0x10000);
    case 'long':
      return below(0x100000000);
    case 'longlong':
    case 'timestamp':
      return [0, 1, 2 ** 32, Number.MAX_SAFE_INTEGER, below(2 ** 53)][below(5)];
    case 'shortstr':
      return ['', 'q', 'amq.topic', 'ünïcødé ☃', 'x'.repeat(255)][below(5)];
    case 'longstr':
      return Buffer.from([0, ...Array.from({ length: below(40) }, () => below(256))]);
    case 'bit':
      return random() < 0.5;
    case 'table':
      // Integer tags differ between amqplib and us below 2^31 (b, s, I against I), so none of those.
      return below(2) === 0 ? {} : { 'x-big': 2 ** 40, name: 'tab', nested: { on: true, list: [0.5, 'a'] } };
  }
}

function sample_args(spec: MethodSpec, random: () => number): Args {
  return Object.fromEntries(spec.fields.map((f) => [f.name, sample_value(f.type, random)]));
}

test('the declarations: unique ids and names, content methods marked', () => {
  const ids = new Set(SPECS.map((s) => s.class_id * 0x10000 + s.method_id));
  const names = new Set(SPECS.map((s) => s.name));
  assert.equal(ids.size, SPECS.length);
  assert.equal(names.size, SPECS.length);
  assert.equal(SPECS.length, 64);
  const content = SPECS.filter((s) => s.content).map((s) => s.name);
  assert.deepEqual(content, ['basic.publish', 'basic.return', 'basic.deliver', 'basic.get-ok']);
  assert.equal(method_spec('exchange.unbind-ok').method_id, 51);
  assert.equal(find_method(60, 40)?.name, 'basic.publish');
  assert.equal(find_method(60, 999), undefined);
});

test('every method round-trips through our encoder and decoder', () => {
  const random = seeded_random(11);
  for (const spec of SPECS) {
    for (let round = 0; round < 8; round++) {
      const args = sample_args(spec, random);
      const payload = encode_method(spec.name as MethodName, args as never);
      const decoded = decode_method(payload);
      assert.equal(decoded.name, spec.name);
      assert.equal(decoded.class_id, spec.class_id);
      assert.equal(decoded.method_id, spec.method_id);
      assert.deepEqual(decoded.args, args, spec.name);
      assert.deepEqual(encode_method(decoded.name, decoded.args as never), payload, `${spec.name} re-encoded`);
    }
  }
});

/** Our arguments under amqplib's names, for its encoder. */
function to_amqplib(spec: MethodSpec, args: Args): Args {
  const info = amqplib_defs.info(amqplib_id(spec.class_id, spec.method_id));
  return Object.fromEntries(info.args.map((arg) => [arg.name, args[our_field_name(info.name, arg.name)]]));
}

/** amqplib's decoded arguments under our names. */
function from_amqplib(spec: MethodSpec, fields: Args): Args {
  const info = amqplib_defs.info(amqplib_id(spec.class_id, spec.method_id));
  return Object.fromEntries(info.args.map((arg) => [our_field_name(info.name, arg.name), fields[arg.name]]));
}

test('amqplib decodes every method we encode, and we decode every method it encodes', () => {
  const random = seeded_random(12);
  for (const spec of SPECS) {
    const id = amqplib_id(spec.class_id, spec.method_id);
    const info = amqplib_defs.info(id);
    assert.deepEqual(
      info.args.map((arg) => our_field_name(info.name, arg.name)),
      spec.fields.map((f) => f.name),
      `${spec.name} has amqplib's fields in amqplib's order`,
    );
    for (let round = 0; round < 8; round++) {
      const args = sample_args(spec, random);
      const ours = encode_method(spec.name as MethodName, args as never);
      assert.deepEqual(
        from_amqplib(spec, amqplib_defs.decode(id, ours.subarray(4))),
        args,
        `${spec.name} ours→amqplib`,
      );
      const frame = amqplib_defs.encodeMethod(id, 3, to_amqplib(spec, args));
      const payload = frame.subarray(7, frame.length - 1);
      assert.deepEqual(decode_method(payload).args, args, `${spec.name} amqplib→ours`);
      assert.deepEqual(payload, ours, `${spec.name} same bytes`);
    }
  }
});

test('consecutive bits share an octet, low bit first', () => {
  const payload = encode_method('queue.declare', {
    queue: 'q',
    passive: true,
    durable: false,
    exclusive: true,
    auto_delete: false,
    nowait: true,
  });
  // ids 0032 000a, ticket 0000, "q", bits 0b10101, empty table
  assert.deepEqual(payload, Buffer.from('0032000a' + '0000' + '0171' + '15' + '00000000', 'hex'));
  const nack = encode_method('basic.nack', { delivery_tag: 2 ** 40 + 5, multiple: false, requeue: true });
  assert.deepEqual(nack, Buffer.from('003c0078' + '0000010000000005' + '02', 'hex'));
  const open = encode_method('connection.open', { virtual_host: '/' });
  assert.deepEqual(open, Buffer.from('000a0028' + '012f' + '00' + '00', 'hex'));
});

test('switch on the decoded name narrows the arguments', () => {
  const describe = (m: DecodedMethod): string => {
    switch (m.name) {
      case 'basic.publish':
        return `${m.args.exchange}/${m.args.routing_key}${m.args.mandatory ? '!' : ''}`;
      case 'basic.ack':
        return `ack ${m.args.delivery_tag}${m.args.multiple ? '+' : ''}`;
      case 'connection.start-ok':
        return `${m.args.mechanism} ${m.args.response.length}`;
      default:
        return m.name;
    }
  };
  assert.equal(
    describe(decode_method(encode_method('basic.publish', { exchange: 'e', routing_key: 'k', mandatory: true }))),
    'e/k!',
  );
  assert.equal(describe(decode_method(encode_method('basic.ack', { delivery_tag: 9, multiple: true }))), 'ack 9+');
  const start_ok = { client_properties: {}, mechanism: 'PLAIN', response: '\0guest\0guest', locale: 'en_US' };
  assert.equal(describe(decode_method(encode_method('connection.start-ok', start_ok))), 'PLAIN 12');
  assert.equal(describe(decode_method(encode_method('tx.select', {}))), 'tx.select');
});

function assert_amqp_error(run: () => unknown, code: number, pattern: RegExp, ids?: [number, number]): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof AmqpError, `an AmqpError, not ${String(error)}`);
    assert.equal(error.code, code);
    assert.match(error.message, pattern);
    if (ids) assert.deepEqual([error.class_id, error.method_id], ids);
    return true;
  });
}

test('unknown methods are NOT_IMPLEMENTED, short payloads SYNTAX_ERROR', () => {
  assert_amqp_error(() => decode_method(Buffer.from('003c03e7', 'hex')), 540, /^unknown method 60\/999$/, [60, 999]);
  assert_amqp_error(() => decode_method(Buffer.from('001e000a00', 'hex')), 540, /unknown method 30\/10/);
  assert_amqp_error(() => decode_method(Buffer.from('003c', 'hex')), 502, /has no class and method id/);
});

test('every truncation of every method is a SYNTAX_ERROR naming the method', () => {
  const random = seeded_random(13);
  for (const spec of SPECS) {
    const payload = encode_method(spec.name as MethodName, sample_args(spec, random) as never);
    for (let length = 4; length < payload.length; length++) {
      assert_amqp_error(
        () => decode_method(payload.subarray(0, length)),
        ReplyCode.SYNTAX_ERROR,
        new RegExp(`^${spec.name.replace('.', '\\.')}`),
        [spec.class_id, spec.method_id],
      );
    }
    const longer = Buffer.concat([payload, Buffer.from([0])]);
    assert_amqp_error(() => decode_method(longer), ReplyCode.SYNTAX_ERROR, /1 bytes after the last argument/);
  }
});

test('garbage inside arguments: a bad table, a delivery tag past 2^53', () => {
  const declare = encode_method('queue.declare', { queue: 'q', arguments: { a: 1 } });
  const bad_tag = Buffer.from(declare);
  bad_tag[bad_tag.length - 5] = 0x7a; // the 'I' of entry a becomes 'z'
  assert_amqp_error(
    () => decode_method(bad_tag),
    502,
    /^queue\.declare\.arguments: .*unknown field type tag 0x7a/,
    [50, 10],
  );
  const ack = Buffer.from('003c0050' + '0020000000000000' + '00', 'hex');
  assert_amqp_error(() => decode_method(ack), 502, /delivery_tag 9007199254740992 is too large/, [60, 80]);
});

test('fuzz: 2,000 random payloads never throw anything but AmqpError', () => {
  const random = seeded_random(14);
  for (let i = 0; i < 2000; i++) {
    const spec = SPECS[Math.floor(random() * SPECS.length)]!;
    const bytes = Buffer.alloc(4 + Math.floor(random() * 48));
    for (let j = 4; j < bytes.length; j++) bytes[j] = Math.floor(random() * 256);
    if (i % 3 === 0) {
      bytes.writeUInt32BE(Math.floor(random() * 0x100000000), 0);
    } else {
      bytes.writeUInt16BE(spec.class_id, 0);
      bytes.writeUInt16BE(spec.method_id, 2);
    }
    try {
      decode_method(bytes);
    } catch (error) {
      if (!(error instanceof AmqpError)) assert.fail(`${String(error)} for ${bytes.toString('hex')}`);
    }
  }
});

test('encoding: defaults fill optional fields, required ones must be given, reply texts are cut to fit', () => {
  const deliver = encode_method('basic.deliver', {
    consumer_tag: 'c',
    delivery_tag: 1,
    exchange: '',
    routing_key: 'q',
  });
  assert.equal((decode_method(deliver).args as Args).redelivered, false);
  assert.throws(
    () => encode_method('basic.deliver', { consumer_tag: 'c', exchange: '', routing_key: 'q' } as never),
    /basic\.deliver: missing argument delivery_tag/,
  );
  assert.throws(() => encode_method('queue.declare', { queue: 'q'.repeat(256) }), RangeError);
  assert.throws(() => encode_method('basic.ack', { delivery_tag: -1 }), RangeError);
  assert.throws(() => encode_method('basic.ack', { delivery_tag: 2 ** 53 }), RangeError);
  assert.throws(() => encode_method('basic.qos', { prefetch_count: 70000 }), RangeError);
  assert.throws(
    () => encode_method('queue.declare', { queue: 'q', arguments: [] as unknown as FieldTable }),
    TypeError,
  );
  const text = 'é'.repeat(200); // 400 bytes
  const close = decode_method(
    encode_method('channel.close', { reply_code: 406, reply_text: text, class_id: 50, method_id: 10 }),
  );
  assert.equal(close.name, 'channel.close');
  const reply_text = (close.args as Args).reply_text as string;
  assert.equal(reply_text, 'é'.repeat(127));
  assert.equal(Buffer.byteLength(reply_text), 254);
});

test('long strings: given as text or bytes, decoded as bytes', () => {
  const start = encode_method('connection.start', {
    server_properties: { product: 'sluice' },
    mechanisms: 'PLAIN AMQPLAIN',
    locales: Buffer.from('en_US'),
  });
  const decoded = decode_method(start);
  assert.equal(decoded.name, 'connection.start');
  if (decoded.name !== 'connection.start') return;
  assert.deepEqual(decoded.args, {
    version_major: 0,
    version_minor: 9,
    server_properties: { product: 'sluice' },
    mechanisms: Buffer.from('PLAIN AMQPLAIN'),
    locales: Buffer.from('en_US'),
  });
  const theirs = amqplib_defs.decode(amqplib_id(10, 10), start.subarray(4));
  assert.equal((theirs.mechanisms as Buffer).toString(), 'PLAIN AMQPLAIN');
});
