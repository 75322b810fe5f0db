// RabbitMQ's tutorials 1-6 as amqplib applications run them, unchanged, against a broker process:
// hello world, work queues (prefetch 1, manual ack, persistent messages), publish/subscribe on a
// fanout exchange, routing on a direct exchange, topics, and RPC with reply-to and correlation id
// over an exclusive server-named queue. Hello world also through the callback API.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import amqp from 'amqplib';
import amqp_callback from 'amqplib/callback_api';
import { start_broker_process, type BrokerProcess } from '../support/broker_process.ts';
import { until } from '../support/until.ts';

let broker: BrokerProcess;
let url: string;

before(async () => {
  broker = await start_broker_process();
  url = `amqp://guest:guest@${broker.amqp!}`;
});

after(async () => {
  await broker?.stop();
});

test('tutorial 1, hello world: sendToQueue, then consume with no-ack', async () => {
  const connection = await amqp.connect(url);
  const channel = await connection.createChannel();
  await channel.assertQueue('hello', { durable: false });
  channel.sendToQueue('hello', Buffer.from('Hello World!'));
  const received = await new Promise<string>((resolve) => {
    void channel.consume('hello', (message) => resolve(message!.content.toString()), { noAck: true });
  });
  assert.equal(received, 'Hello World!');
  await connection.close();
});

test('tutorial 1 through the callback API', async () => {
  const received = await new Promise<string>((resolve, reject) => {
    amqp_callback.connect(url, (error, connection) => {
      if (error) return reject(error);
      connection.createChannel((error2, channel) => {
        if (error2) return reject(error2);
        channel.assertQueue('hello-callback', { durable: false });
        channel.sendToQueue('hello-callback', Buffer.from('Hello callback!'));
        channel.consume(
          'hello-callback',
          (message) => {
            resolve(message!.content.toString());
            connection.close();
          },
          { noAck: true },
        );
      });
    });
  });
  assert.equal(received, 'Hello callback!');
});

test('tutorial 2, work queues: prefetch 1 and manual acks share tasks between two workers', async () => {
  const connection = await amqp.connect(url);
  const producer = await connection.createChannel();
  await producer.assertQueue('task_queue', { durable: true });
  const done: Record<string, string[]> = { a: [], b: [] };
  let acked = 0;
  for (const worker of ['a', 'b']) {
    const channel = await connection.createChannel();
    await channel.assertQueue('task_queue', { durable: true });
    await channel.prefetch(1);
    await channel.consume(
      'task_queue',
      (message) => {
        done[worker]!.push(message!.content.toString());
        setTimeout(() => {
          channel.ack(message!);
          acked++;
        }, 20); // a task takes a while
      },
      { noAck: false },
    );
  }
  for (let i = 0; i < 20; i++) producer.sendToQueue('task_queue', Buffer.from(`task ${i}`), { persistent: true });
  await until(() => acked === 20, 'all 20 tasks done and acknowledged');
  assert.ok(done.a!.length > 0 && done.b!.length > 0, `both workers took tasks: ${JSON.stringify(done)}`);
  const all = [...done.a!, ...done.b!].sort();
  assert.equal(new Set(all).size, 20, 'each task done once');
  await connection.close();
});

test('tutorial 3, publish/subscribe: a fanout exchange copies to every bound exclusive queue', async () => {
  const connection = await amqp.connect(url);
  const channel = await connection.createChannel();
  await channel.assertExchange('logs', 'fanout', { durable: false });
  const seen: string[][] = [[], []];
  for (const list of seen) {
    const q = await channel.assertQueue('', { exclusive: true });
    assert.match(q.queue, /^amq\.gen-/);
    await channel.bindQueue(q.queue, 'logs', '');
    await channel.consume(q.queue, (m) => list.push(m!.content.toString()), { noAck: true });
  }
  channel.publish('logs', '', Buffer.from('info: hello'));
  await until(() => seen.every((l) => l.length === 1), 'both subscribers got the log line');
  assert.deepEqual(seen, [['info: hello'], ['info: hello']]);
  await connection.close();
});

test('tutorial 4, routing: a direct exchange routes by severity', async () => {
  const connection = await amqp.connect(url);
  const channel = await connection.createChannel();
  await channel.assertExchange('direct_logs', 'direct', { durable: false });
  const errors = await channel.assertQueue('', { exclusive: true });
  await channel.bindQueue(errors.queue, 'direct_logs', 'error');
  const everything = await channel.assertQueue('', { exclusive: true });
  for (const severity of ['info', 'warning', 'error'])
    await channel.bindQueue(everything.queue, 'direct_logs', severity);
  const got: Record<string, string[]> = { errors: [], everything: [] };
  await channel.consume(errors.queue, (m) => got.errors!.push(m!.fields.routingKey), { noAck: true });
  await channel.consume(everything.queue, (m) => got.everything!.push(m!.fields.routingKey), { noAck: true });
  for (const severity of ['info', 'error', 'warning', 'debug'])
    channel.publish('direct_logs', severity, Buffer.from(severity));
  await until(() => got.everything!.length === 3 && got.errors!.length === 1, 'routed by severity');
  assert.deepEqual(got.errors, ['error']);
  assert.deepEqual(got.everything!.sort(), ['error', 'info', 'warning']);
  await connection.close();
});

test('tutorial 5, topics: * matches one word and # any number', async () => {
  const connection = await amqp.connect(url);
  const channel = await connection.createChannel();
  await channel.assertExchange('topic_logs', 'topic', { durable: false });
  const patterns = { kern: 'kern.*', critical: '*.critical', all: '#', deep: 'a.#.z' };
  const got: Record<string, string[]> = {};
  for (const [name, pattern] of Object.entries(patterns)) {
    const q = await channel.assertQueue('', { exclusive: true });
    await channel.bindQueue(q.queue, 'topic_logs', pattern);
    got[name] = [];
    await channel.consume(q.queue, (m) => got[name]!.push(m!.fields.routingKey), { noAck: true });
  }
  const keys = ['kern.critical', 'kern.info', 'cron.critical', 'kern.disk.critical', 'a.z', 'a.b.c.z'];
  for (const key of keys) channel.publish('topic_logs', key, Buffer.from(key));
  await until(() => got.all!.length === keys.length, 'every message reached #');
  await until(() => got.deep!.length === 2, 'a.#.z matched');
  // Each queue is delivered on its own: wait for every one before comparing (CI once compared early).
  await until(() => got.kern!.length === 2 && got.critical!.length === 2, 'kern.* and *.critical matched');
  assert.deepEqual(got.kern!.sort(), ['kern.critical', 'kern.info']);
  assert.deepEqual(got.critical!.sort(), ['cron.critical', 'kern.critical']);
  assert.deepEqual(got.deep!.sort(), ['a.b.c.z', 'a.z']);
  await connection.close();
});

test('tutorial 6, RPC: reply-to an exclusive queue, matched by correlation id', async () => {
  const server = await amqp.connect(url);
  const server_channel = await server.createChannel();
  await server_channel.assertQueue('rpc_queue', { durable: false });
  await server_channel.prefetch(1);
  const fib = (n: number): number => (n < 2 ? n : fib(n - 1) + fib(n - 2));
  await server_channel.consume('rpc_queue', (m) => {
    const n = Number(m!.content.toString());
    server_channel.sendToQueue(m!.properties.replyTo as string, Buffer.from(String(fib(n))), {
      correlationId: m!.properties.correlationId as string,
    });
    server_channel.ack(m!);
  });
  const client = await amqp.connect(url);
  const channel = await client.createChannel();
  const reply = await channel.assertQueue('', { exclusive: true });
  const answers = new Map<string, string>();
  await channel.consume(reply.queue, (m) => answers.set(m!.properties.correlationId as string, m!.content.toString()), {
    noAck: true,
  });
  for (const n of [10, 20, 30])
    channel.sendToQueue('rpc_queue', Buffer.from(String(n)), { correlationId: `id-${n}`, replyTo: reply.queue });
  await until(() => answers.size === 3, 'three replies');
  assert.deepEqual(Object.fromEntries(answers), { 'id-10': '55', 'id-20': '6765', 'id-30': '832040' });
  await client.close();
  await server.close();
});
