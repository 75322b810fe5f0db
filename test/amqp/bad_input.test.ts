// Bad input over AMQP against a broker process: each gets the protocol's channel or connection
// exception with a reply text (a Kafka record whose AMQP properties are unusable is delivered
// without them), the broker stays up, another connection publishing with confirms
// meanwhile is unaffected, and what it had confirmed is all there at the end.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import amqp from 'amqplib';
import { Kafka, logLevel } from 'kafkajs';
import { start_broker_process, type BrokerProcess } from '../support/broker_process.ts';
import { RawAmqp } from '../support/amqp_raw.ts';
import { method_frame, content_frames, frame } from '../../src/protocol/amqp/frame_writer.ts';
import { PROTOCOL_HEADER } from '../../src/protocol/amqp/constants.ts';

let broker: BrokerProcess;
let url: string;
/** A healthy connection publishing beside the bad ones. */
let bystander: amqp.ConfirmChannel;
let bystander_connection: amqp.ChannelModel;
let confirmed = 0;

before(async () => {
  broker = await start_broker_process();
  url = `amqp://guest:guest@${broker.amqp!}`;
  bystander_connection = await amqp.connect(url);
  bystander = await bystander_connection.createConfirmChannel();
  await bystander.assertQueue('bystander', { durable: true });
});

after(async () => {
  await bystander_connection?.close().catch(() => undefined);
  await broker?.stop();
});

/** Publishes 50 confirmed messages on the bystander connection. */
async function bystander_publishes(): Promise<void> {
  for (let i = 0; i < 50; i++)
    bystander.sendToQueue('bystander', Buffer.from(`m${confirmed + i}`), { persistent: true });
  await bystander.waitForConfirms();
  confirmed += 50;
}

async function channel_error(
  run: (channel: amqp.Channel) => Promise<unknown> | void,
): Promise<{ code: number; classId?: number; methodId?: number; message: string }> {
  const connection = await amqp.connect(url);
  const channel = await connection.createChannel();
  const closed = new Promise<{ code: number; classId?: number; methodId?: number; message: string }>((resolve) =>
    channel.once('error', resolve),
  );
  await Promise.resolve(run(channel)).catch(() => undefined);
  const error = await closed;
  const again = await connection.createChannel(); // the connection outlives a channel exception
  await again.checkExchange('amq.direct');
  await connection.close();
  await bystander_publishes();
  return error;
}

test('passive declare of a missing queue: 404 NOT_FOUND on queue.declare', async () => {
  const error = await channel_error((ch) => ch.checkQueue('no-such-queue'));
  assert.equal(error.code, 404);
  assert.equal(error.classId, 50);
  assert.equal(error.methodId, 10);
  assert.match(error.message, /no queue 'no-such-queue'/);
});

test('re-declaring a queue with other flags or arguments: 406 PRECONDITION_FAILED', async () => {
  const connection = await amqp.connect(url);
  const channel = await connection.createChannel();
  await channel.assertQueue('declared-once', { durable: true, arguments: { 'x-max-length': 10 } });
  await connection.close();
  const flags = await channel_error((ch) => ch.assertQueue('declared-once', { durable: false }));
  assert.equal(flags.code, 406);
  assert.match(flags.message, /inequivalent arg 'durable'/);
  const args = await channel_error((ch) =>
    ch.assertQueue('declared-once', { durable: true, arguments: { 'x-max-length': 20 } }),
  );
  assert.equal(args.code, 406);
  const exchange = await channel_error(async (ch) => {
    await ch.assertExchange('typed', 'direct');
    await ch.assertExchange('typed', 'fanout');
  });
  assert.equal(exchange.code, 406);
});

test('publishing to a missing exchange, an unknown queue argument, an amq. name: their own codes', async () => {
  const publish = await channel_error((ch) => void ch.publish('no-such-exchange', 'k', Buffer.from('x')));
  assert.equal(publish.code, 404);
  assert.equal(publish.classId, 60);
  const argument = await channel_error((ch) => ch.assertQueue('typo', { arguments: { 'x-max-lenght': 1 } }));
  assert.equal(argument.code, 406);
  assert.match(argument.message, /unknown queue argument 'x-max-lenght'/);
  const reserved = await channel_error((ch) => ch.assertQueue('amq.mine'));
  assert.equal(reserved.code, 403);
});

test('an unknown delivery tag and a double ack: 406 PRECONDITION_FAILED', async () => {
  const connection = await amqp.connect(url);
  const setup = await connection.createConfirmChannel();
  await setup.assertQueue('acked-twice', { durable: true });
  setup.sendToQueue('acked-twice', Buffer.from('once'));
  await setup.waitForConfirms();
  await connection.close();
  const error = await channel_error(async (ch) => {
    const message = await ch.get('acked-twice');
    assert.ok(message, 'the message is there');
    ch.ack(message);
    ch.ack(message);
  });
  assert.equal(error.code, 406);
  assert.match(error.message, /unknown delivery tag/);
});

test('a wrong password is refused with ACCESS_REFUSED, and a wrong protocol header gets ours back', async () => {
  await assert.rejects(amqp.connect(`amqp://guest:nope@${broker.amqp!}`), /ACCESS_REFUSED/);
  await assert.rejects(amqp.connect(`amqp://someone:guest@${broker.amqp!}`), /ACCESS_REFUSED/);
  const raw = await RawAmqp.connect(broker.amqp!);
  raw.write(Buffer.from('AMQP\x00\x00\x08\x00'));
  await raw.until_closed();
  assert.deepEqual(raw.raw, PROTOCOL_HEADER);
  const http = await RawAmqp.connect(broker.amqp!);
  http.write(Buffer.from('GET / HTTP/1.1\r\n\r\n'));
  await http.until_closed();
  await bystander_publishes();
});

test('a frame above frame_max, a bad frame end, an unknown method: connection exceptions', async () => {
  const big = await RawAmqp.open(broker.amqp!, 4096);
  big.write(frame(1, 1, Buffer.alloc(5000)));
  const close = await big.expect('connection.close');
  assert.equal(close.args.reply_code, 501);
  await big.until_closed();

  const end = await RawAmqp.open(broker.amqp!);
  const bad = method_frame(1, 'basic.qos', { prefetch_size: 0, prefetch_count: 1, global: false });
  bad[bad.length - 1] = 0;
  end.write(bad);
  assert.equal((await end.expect('connection.close')).args.reply_code, 501);

  const unknown = await RawAmqp.open(broker.amqp!);
  const payload = Buffer.from([0, 60, 3, 231]); // basic, method 999
  unknown.write(frame(1, 1, payload));
  assert.equal((await unknown.expect('connection.close')).args.reply_code, 540);

  const closed = await RawAmqp.open(broker.amqp!);
  closed.send(2, 'basic.qos', { prefetch_size: 0, prefetch_count: 1, global: false }); // channel 2 never opened
  assert.equal((await closed.expect('connection.close')).args.reply_code, 504);

  const body = await RawAmqp.open(broker.amqp!);
  body.write(frame(3, 1, Buffer.from('no header'))); // content body without a publish
  assert.equal((await body.expect('connection.close')).args.reply_code, 505);
  await bystander_publishes();
});

test('a publish with confirms written one byte at a time is confirmed', async () => {
  const raw = await RawAmqp.open(broker.amqp!);
  raw.send(1, 'queue.declare', { queue: 'bytewise', durable: true, arguments: {} });
  await raw.expect('queue.declare-ok');
  raw.send(1, 'confirm.select', { nowait: false });
  await raw.expect('confirm.select-ok');
  const bytes = Buffer.concat([
    method_frame(1, 'basic.publish', { exchange: '', routing_key: 'bytewise' }),
    ...content_frames(1, 60, Buffer.from('split at every byte'), { delivery_mode: 2, headers: { n: 1 } }, 4096),
  ]);
  for (const byte of bytes) {
    raw.write(Buffer.from([byte]));
    await new Promise((resolve) => setImmediate(resolve));
  }
  const ack = await raw.expect('basic.ack');
  assert.equal(ack.args.delivery_tag, 1);
  raw.send(1, 'basic.get', { queue: 'bytewise', no_ack: true });
  const got = await raw.expect('basic.get-ok');
  assert.equal(got.args.routing_key, 'bytewise');
  raw.close();
});

test('kafka_record_with_unusable_amqp_properties: delivered over AMQP without them, and the next one too', async () => {
  const kafka = new Kafka({ brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
  const producer = kafka.producer();
  await producer.connect();
  // A Kafka producer forging the headers an AMQP publish is stored with, and one with headers
  // larger than the frame_max the client takes.
  const forged = { 'amqp.exchange': '', 'amqp.properties': Buffer.from([0xff, 0xfc, 0x01]) };
  const huge = { big: 'x'.repeat(200_000) };
  await producer.send({
    topic: 'forged-props',
    messages: [
      { key: 'a', value: 'forged', headers: forged },
      { key: 'b', value: 'huge', headers: huge },
      { key: 'c', value: 'plain' },
    ],
  });
  await producer.disconnect();
  const connection = await amqp.connect(url);
  const channel = await connection.createChannel();
  await channel.assertQueue('forged-props', { durable: true });
  const got: amqp.ConsumeMessage[] = [];
  await new Promise<void>((resolve) => {
    void channel.consume('forged-props', (m) => {
      got.push(m!);
      channel.ack(m!);
      if (got.length === 3) resolve();
    });
  });
  await connection.close();
  assert.deepEqual(
    got.map((m) => m.content.toString()),
    ['forged', 'huge', 'plain'],
  );
  assert.equal(typeof got[0]!.properties.headers?.['amqp.properties'], 'string', 'kept as a Kafka header');
  assert.match(String(got[1]!.properties.headers?.['x-sluice-properties-dropped']), /frame_max/);
  await bystander_publishes();
});

test('the bystander connection lost nothing it had confirmed', async () => {
  const connection = await amqp.connect(url);
  const channel = await connection.createChannel();
  const bodies = new Set<string>();
  for (let m = await channel.get('bystander', { noAck: true }); m; m = await channel.get('bystander', { noAck: true }))
    bodies.add(m.content.toString());
  assert.equal(bodies.size, confirmed);
  assert.ok(confirmed >= 400, `the bystander published throughout (${confirmed})`);
  await connection.close();
});
