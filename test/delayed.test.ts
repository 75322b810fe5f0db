// Delayed delivery against a real broker process: messages produced with deliverAt (the
// `sluice-deliver-at` header) reach a consumer group and a share group only when due, never early;
// pending delays survive kill -9 of the broker; a malformed delay header is refused to kafkajs.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { Kafka, logLevel } from 'kafkajs';
import { start_broker_process, type BrokerProcess } from './support/broker_process.ts';
import { Sluice } from '../src/sdk/index.ts';

const WAIT_MS_MAX = 60_000;
let broker: BrokerProcess;

before(async () => {
  broker = await start_broker_process();
});

after(async () => {
  await broker?.stop();
  if (broker) fs.rmSync(broker.data_dir, { recursive: true, force: true });
});

const client = () =>
  new Sluice({
    brokers: [broker.bootstrap],
    clientId: 'delayed-test',
    retry: { retries: 20, initialRetryTime: 100, maxRetryTime: 1_000 },
  });

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + WAIT_MS_MAX;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function percentile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

/** Sends `count` messages due between `from_ms` and `to_ms` from now; returns value -> due time. */
async function send_delayed(
  topic: string,
  count: number,
  from_ms: number,
  to_ms: number,
): Promise<Map<string, number>> {
  const producer = client().producer();
  await producer.connect();
  const due = new Map<string, number>();
  const now = Date.now();
  const messages = Array.from({ length: count }, (_, i) => {
    const at = now + from_ms + Math.floor(((to_ms - from_ms) * i) / count);
    due.set(`${topic}-${i}`, at);
    return { key: `k${i % 16}`, value: `${topic}-${i}`, deliverAt: at };
  });
  for (let i = 0; i < messages.length; i += 500) await producer.send({ topic, messages: messages.slice(i, i + 500) });
  await producer.disconnect();
  return due;
}

test('delayed messages reach a consumer group and a share group only when due, never early', async () => {
  const sluice = client();
  const admin = sluice.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'reminders', numPartitions: 2 }] });
  await admin.disconnect();
  const due = await send_delayed('reminders', 2_000, 1_000, 5_000);
  const lateness: number[] = [];
  const early: string[] = [];
  const seen_by_group = new Set<string>();
  const consumer = sluice.consumer({ groupId: 'reminder-readers', maxWaitTimeInMs: 50 });
  await consumer.subscribe({ topics: ['reminders'], fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => {
      const value = message.value!.toString();
      const late = Date.now() - due.get(value)!;
      if (late < 0) early.push(`${value} ${late} ms`);
      lateness.push(late);
      seen_by_group.add(value);
    },
  });
  const seen_by_queue = new Set<string>();
  const queue = sluice.queueConsumer({ groupId: 'reminder-workers', maxWaitTimeInMs: 50 });
  await queue.subscribe({ topics: ['reminders'] });
  await queue.run({
    concurrency: 8,
    eachMessage: async ({ message }) => {
      const value = message.value!.toString();
      if (Date.now() < due.get(value)!) early.push(`${value} (queue)`);
      seen_by_queue.add(value);
    },
  });
  await until(() => seen_by_group.size === 2_000 && seen_by_queue.size === 2_000, 'every reminder in both groups');
  await consumer.disconnect();
  await queue.disconnect();
  assert.deepEqual(early, [], 'nothing early');
  lateness.sort((a, b) => a - b);
  const figures = {
    p50: percentile(lateness, 0.5),
    p99: percentile(lateness, 0.99),
    max: lateness[lateness.length - 1]!,
  };
  process.stderr.write(
    `lateness of 2,000 delayed messages over 1-5 s, seen by a consumer group: ` +
      `p50 ${figures.p50} ms, p99 ${figures.p99} ms, max ${figures.max} ms\n`,
  );
  assert.ok(figures.p99 < 1_000, `p99 lateness ${figures.p99} ms`);
});

test('kill -9 of the broker with delays pending: after the restart each message arrives once, none early', async () => {
  const due = await send_delayed('alarms', 1_000, 2_000, 4_000);
  const port = broker.port;
  await broker.kill();
  broker = await start_broker_process({ data_dir: broker.data_dir, port });
  const counts = new Map<string, number>();
  const early: string[] = [];
  const consumer = client().consumer({ groupId: 'alarm-readers', maxWaitTimeInMs: 50 });
  await consumer.subscribe({ topics: ['alarms'], fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => {
      const value = message.value!.toString();
      if (Date.now() < due.get(value)!) early.push(value);
      counts.set(value, (counts.get(value) ?? 0) + 1);
    },
  });
  await until(() => counts.size === 1_000, 'all 1,000 alarms');
  await new Promise((resolve) => setTimeout(resolve, 300));
  await consumer.disconnect();
  assert.deepEqual(early, []);
  assert.deepEqual(
    [...counts.values()].filter((n) => n !== 1),
    [],
    'each once',
  );
});

test('a malformed delay header is refused to its sender (kafkajs: INVALID_RECORD); other clients go on', async () => {
  const kafka = new Kafka({
    brokers: [broker.bootstrap],
    clientId: 'bad-delay',
    logLevel: logLevel.NOTHING,
    retry: { retries: 0 },
  });
  const producer = kafka.producer();
  await producer.connect();
  await assert.rejects(
    producer.send({ topic: 'bad-delays', messages: [{ value: 'x', headers: { 'sluice-delay-ms': 'soon' } }] }),
    (error: Error & { type?: string }) =>
      error.type === 'INVALID_RECORD' || /INVALID_RECORD|invalid/i.test(error.message),
  );
  await producer.send({ topic: 'bad-delays', messages: [{ value: 'fine', headers: { 'sluice-delay-ms': '0' } }] });
  await producer.disconnect();
  const values: string[] = [];
  const consumer = client().consumer({ maxWaitTimeInMs: 50 });
  await consumer.subscribe({ topics: ['bad-delays'], fromBeginning: true });
  await consumer.run({ eachMessage: async ({ message }) => void values.push(message.value!.toString()) });
  await until(() => values.length === 1, 'the good message');
  await new Promise((resolve) => setTimeout(resolve, 200));
  await consumer.disconnect();
  assert.deepEqual(values, ['fine']);
});
