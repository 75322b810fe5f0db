// A share group reads only committed data (share.isolation.level read_committed, Sluice's default):
// kafkajs 2.2.4 transactional producers commit, abort and leave a transaction open on a broker
// process, and the SDK's queue consumer receives exactly the committed records — the open
// transaction's only once it commits, the aborted ones never, and no transaction marker: with a
// short lock and a delivery limit of 2, a marker handed out and never acknowledged would be
// dead-lettered within seconds.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { new_data_dir, start_broker_process, type BrokerProcess } from '../support/broker_process.ts';
import { Sluice, type QueueConsumer } from '../../src/sdk/index.ts';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';

const LOCK_MS = 1_000;
const SHARE_CONFIG = {
  shareGroups: {
    recordLockDurationMs: LOCK_MS,
    deliveryCountLimit: 2,
    retryBackoffMs: [100],
    heartbeatIntervalMs: 300,
  },
};
const TOPIC = 'share-tx';
const GROUP = 'tx-readers';

let data_dir: string;
let broker: BrokerProcess;
let kafka: Kafka;

before(async () => {
  data_dir = new_data_dir('share-transactions');
  const config_file = path.join(data_dir, 'sluice.json');
  fs.writeFileSync(config_file, JSON.stringify(SHARE_CONFIG));
  broker = await start_broker_process({ data_dir: path.join(data_dir, 'data'), args: ['--config', config_file] });
  kafka = new Kafka({
    brokers: [broker.bootstrap],
    clientId: 'share-transactions-test',
    logLevel: logLevel.NOTHING,
    retry: { retries: 5, initialRetryTime: 100 },
  });
});

after(async () => {
  await broker?.stop();
  fs.rmSync(data_dir, { recursive: true, force: true });
});

async function transactional(id: string): Promise<Producer> {
  const producer = kafka.producer({ transactionalId: id, idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  return producer;
}

const messages = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) => ({ key: `${prefix}-${i}`, value: `${prefix}-${i}` }));

async function until(condition: () => boolean, what: string, wait_ms = 20_000): Promise<void> {
  const deadline = Date.now() + wait_ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function queue_stats(): Promise<{ in_flight: number; available: number; dead_lettered: number }> {
  const response = await fetch(`http://${broker.http}/api/v1/queues/${GROUP}`);
  assert.equal(response.status, 200);
  return (await response.json()) as { in_flight: number; available: number; dead_lettered: number };
}

test('a share group receives exactly the committed records: an open transaction once it commits', async () => {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 2 }] });
  const producer = await transactional('share-tx-producer');
  const committed = await producer.transaction();
  await committed.send({ topic: TOPIC, messages: messages('committed', 10) });
  await committed.commit();
  const aborted = await producer.transaction();
  await aborted.send({ topic: TOPIC, messages: messages('aborted', 10) });
  await aborted.abort();
  const plain = kafka.producer();
  await plain.connect();
  await plain.send({ topic: TOPIC, messages: messages('plain', 4) });
  const late = await transactional('share-tx-late');
  const open = await late.transaction();
  await open.send({ topic: TOPIC, messages: messages('late', 6) });

  const received: string[] = [];
  const queue: QueueConsumer = new Sluice({ brokers: [broker.bootstrap], clientId: 'share-tx-reader' }).queueConsumer({
    groupId: GROUP,
    maxWaitTimeInMs: 200,
  });
  await queue.subscribe({ topics: [TOPIC] });
  await queue.run({ eachMessage: async ({ message }) => void received.push(message.value!.toString()) });
  try {
    await until(() => received.length >= 14, 'the committed and plain records');
    // Long enough for a lock to run out and a wrongly acquired record to come round again.
    await new Promise((resolve) => setTimeout(resolve, LOCK_MS + 500));
    assert.deepEqual(
      received.filter((v) => v.startsWith('late-')),
      [],
      'the open transaction waits for its end',
    );
    await open.commit();
    await until(() => received.length >= 20, 'the late transaction once committed');
    await new Promise((resolve) => setTimeout(resolve, 2 * LOCK_MS + 500));
    const expected = [...messages('committed', 10), ...messages('plain', 4), ...messages('late', 6)].map(
      (m) => m.value,
    );
    assert.deepEqual([...received].sort(), expected.sort(), 'each committed record once, no aborted one');
    const stats = await queue_stats();
    assert.deepEqual([stats.in_flight, stats.available, stats.dead_lettered], [0, 0, 0], 'markers are no records');
    const topics = await admin.listTopics();
    assert.ok(!topics.some((t) => t.endsWith('.dlq')), `no dead-letter topic: ${topics.join(', ')}`);
  } finally {
    await queue.disconnect();
    await Promise.all([producer.disconnect(), late.disconnect(), plain.disconnect(), admin.disconnect()]);
  }
});
