// What AMQP acknowledgements promise, against broker processes: 100,000 persistent messages
// published with confirms while the broker is killed with kill -9 are all in the queue exactly once
// after the restart (each confirmed one at least; none twice); a consumer whose connection dies
// with messages unacknowledged sees them go to another consumer marked redelivered; and one store
// serves both protocols (kafkajs reads what amqplib published, amqplib consumes what kafkajs wrote);
// a burst of publishes is confirmed a stored batch at a time, with `multiple`.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import amqp from 'amqplib';
import { Kafka, logLevel } from 'kafkajs';
import { new_data_dir, start_broker_process, type BrokerProcess } from '../support/broker_process.ts';
import { until } from '../support/until.ts';
import { RawAmqp } from '../support/amqp_raw.ts';
import { content_frames, method_frame } from '../../src/protocol/amqp/frame_writer.ts';

const MESSAGES = 100_000;
const CONFIRM_WINDOW = 2_000;
const brokers: BrokerProcess[] = [];

after(async () => {
  for (const b of brokers) await b.stop();
});

async function start(data_dir?: string): Promise<BrokerProcess> {
  const broker = await start_broker_process(data_dir ? { data_dir } : {});
  brokers.push(broker);
  return broker;
}

/** Publishes until the connection breaks; returns the ids confirmed. */
async function publish_until_killed(broker: BrokerProcess, kill_after: number): Promise<Set<number>> {
  const connection = await amqp.connect(`amqp://guest:guest@${broker.amqp!}`);
  connection.on('error', () => undefined);
  const channel = await connection.createConfirmChannel();
  channel.on('error', () => undefined);
  await channel.assertQueue('confirmed', { durable: true });
  const confirmed = new Set<number>();
  let killed = false;
  try {
    for (let i = 0; i < MESSAGES; i += CONFIRM_WINDOW) {
      const window: Array<Promise<number>> = [];
      for (let id = i; id < Math.min(MESSAGES, i + CONFIRM_WINDOW); id++) {
        window.push(
          new Promise((resolve, reject) => {
            channel.sendToQueue('confirmed', Buffer.from(String(id)), { persistent: true }, (error) =>
              error ? reject(error as Error) : resolve(id),
            );
          }),
        );
      }
      for (const result of await Promise.allSettled(window))
        if (result.status === 'fulfilled') confirmed.add(result.value);
      if (!killed && confirmed.size >= kill_after) {
        killed = true;
        void broker.kill();
      }
    }
  } catch {
    // the connection went with the broker
  }
  return confirmed;
}

test('kill -9 under confirmed publishing: after the restart every confirmed message is there, none twice', async () => {
  const data_dir = new_data_dir('amqp-confirms');
  const first = await start(data_dir);
  const confirmed = await publish_until_killed(first, MESSAGES / 2);
  await first.kill();
  assert.ok(confirmed.size >= MESSAGES / 2, `${confirmed.size} confirmed before the kill`);
  const second = await start(data_dir);
  const connection = await amqp.connect(`amqp://guest:guest@${second.amqp!}`);
  const channel = await connection.createChannel();
  const declared = await channel.checkQueue('confirmed');
  const seen = new Map<number, number>();
  await channel.prefetch(1_000);
  await channel.consume('confirmed', (m) => {
    const id = Number(m!.content.toString());
    seen.set(id, (seen.get(id) ?? 0) + 1);
    channel.ack(m!);
  });
  await until(() => seen.size >= declared.messageCount, `${declared.messageCount} messages read back`, 120_000);
  const missing = [...confirmed].filter((id) => !seen.has(id));
  const twice = [...seen].filter(([, n]) => n > 1);
  assert.deepEqual(missing.slice(0, 10), [], `${missing.length} confirmed messages missing`);
  assert.deepEqual(twice.slice(0, 10), [], 'no message stored twice');
  await connection.close();
});

test('a consumer whose connection dies hands its unacknowledged messages to another, marked redelivered', async () => {
  const broker = await start();
  const url = `amqp://guest:guest@${broker.amqp!}`;
  const producer = await amqp.connect(url);
  const channel = await producer.createConfirmChannel();
  await channel.assertQueue('work', { durable: true });
  for (let i = 0; i < 10; i++) channel.sendToQueue('work', Buffer.from(`job ${i}`), { persistent: true });
  await channel.waitForConfirms();
  // No heartbeats on the doomed connection: its timers would keep the test process alive.
  const doomed = await amqp.connect(`${url}?heartbeat=0`);
  doomed.on('error', () => undefined);
  const held = await doomed.createChannel();
  await held.prefetch(10);
  const taken: string[] = [];
  await held.consume('work', (m) => taken.push(m!.content.toString()));
  await until(() => taken.length === 10, 'the first consumer holds all ten');
  (doomed as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
  const survivor = await amqp.connect(url);
  const second = await survivor.createChannel();
  const again: Array<{ body: string; redelivered: boolean; count: unknown }> = [];
  await second.consume('work', (m) => {
    const count = m!.properties.headers?.['x-delivery-count'];
    again.push({ body: m!.content.toString(), redelivered: m!.fields.redelivered, count });
    second.ack(m!);
  });
  await until(() => again.length === 10, 'all ten redelivered');
  assert.deepEqual(again.map((m) => m.body).sort(), taken.sort());
  assert.ok(
    again.every((m) => m.redelivered),
    'each marked redelivered',
  );
  assert.deepEqual(
    again.map((m) => m.count),
    again.map(() => 1),
    'x-delivery-count: one delivery before this one',
  );
  await survivor.close();
  await producer.close();
});

test('one store, two protocols: kafkajs reads what amqplib published; amqplib consumes kafkajs records', async () => {
  const broker = await start();
  const url = `amqp://guest:guest@${broker.amqp!}`;
  const connection = await amqp.connect(url);
  const channel = await connection.createConfirmChannel();
  await channel.assertQueue('orders', { durable: true });
  channel.sendToQueue('orders', Buffer.from('from amqp'), {
    persistent: true,
    contentType: 'text/plain',
    correlationId: 'c-1',
    headers: { tenant: 'acme', attempt: 2 },
  });
  await channel.waitForConfirms();
  const kafka = new Kafka({ brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: 'reader' });
  await consumer.connect();
  await consumer.subscribe({ topic: 'orders', fromBeginning: true });
  const read = await new Promise<{ key: string | null; value: string; headers: Record<string, string> }>((resolve) => {
    void consumer.run({
      eachMessage: async ({ message }) => {
        const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, String(v)]));
        resolve({ key: message.key?.toString() ?? null, value: message.value!.toString(), headers });
      },
    });
  });
  await consumer.disconnect();
  assert.equal(read.value, 'from amqp');
  assert.equal(read.key, 'orders', 'the routing key is the key');
  assert.equal(read.headers['tenant'], 'acme');
  assert.equal(read.headers['attempt'], '2');
  assert.equal(read.headers['amqp.content-type'], 'text/plain');
  assert.equal(read.headers['amqp.correlation-id'], 'c-1');

  const producer = kafka.producer();
  await producer.connect();
  await producer.send({
    topic: 'events',
    messages: [{ key: 'k1', value: 'from kafka', headers: { source: 'kafkajs' } }],
  });
  await producer.disconnect();
  await channel.assertQueue('events', { durable: true }); // a Kafka topic taken as a queue
  const got = await new Promise<amqp.ConsumeMessage>((resolve) => {
    void channel.consume('events', (m) => {
      channel.ack(m!);
      resolve(m!);
    });
  });
  assert.equal(got.content.toString(), 'from kafka');
  assert.equal(got.fields.routingKey, 'k1');
  assert.equal(String(got.properties.headers?.['source']), 'kafkajs');
  await connection.close();
});

test('a burst of confirmed publishes gets multiple acks, every delivery tag once and in order', async () => {
  const broker = await start();
  const c = await RawAmqp.open(broker.amqp!);
  try {
    c.send(1, 'queue.declare', { queue: 'burst', durable: true });
    await c.expect('queue.declare-ok');
    c.send(1, 'confirm.select', {});
    await c.expect('confirm.select-ok');
    const PUBLISHES = 500;
    const frames: Buffer[] = [];
    for (let i = 0; i < PUBLISHES; i++) {
      frames.push(method_frame(1, 'basic.publish', { exchange: '', routing_key: 'burst' }));
      frames.push(...content_frames(1, 60, Buffer.from(`m${i}`), { delivery_mode: 2 }, 131_072));
    }
    c.write(Buffer.concat(frames)); // one write: the broker reads the burst in a few turns
    let through = 0;
    let acks = 0;
    while (through < PUBLISHES) {
      const ack = await c.expect('basic.ack');
      acks++;
      // Each ack covers exactly the tags after the previous one: never one twice, none skipped.
      if (ack.args.multiple) assert.ok(ack.args.delivery_tag > through);
      else assert.equal(ack.args.delivery_tag, through + 1);
      through = ack.args.delivery_tag;
    }
    assert.equal(through, PUBLISHES);
    // One frame per stored batch, not one per message (each was once a frame of its own).
    assert.ok(acks < PUBLISHES / 10, `${acks} basic.ack frames for ${PUBLISHES} publishes`);
  } finally {
    c.close();
  }
});
