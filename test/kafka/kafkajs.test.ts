// kafkajs 2.2.4 against a real broker process: admin, an idempotent gzip producer, a consumer group
// that grows from two to three members, and a restart that keeps data and committed offsets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { CompressionTypes, Kafka, logLevel, type Consumer, type EachMessagePayload } from 'kafkajs';
import { start_broker_process, type BrokerProcess } from '../support/broker_process.ts';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
const TOPIC = 'orders';
const GROUP = 'order-workers';
const KEYS = 100;
const WAIT_MS_MAX = 60_000;

interface Seen {
  key: string;
  seq: number;
  partition: number;
  offset: number;
  member: string;
}

function kafka_for(broker: BrokerProcess, client_id: string): Kafka {
  return new Kafka({
    brokers: [broker.bootstrap],
    clientId: client_id,
    logLevel: logLevel.NOTHING,
    retry: { retries: 10, initialRetryTime: 100 },
  });
}

async function send_range(kafka: Kafka, from: number, to: number): Promise<void> {
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  for (let start = from; start < to; start += 500) {
    const messages = [];
    for (let i = start; i < Math.min(to, start + 500); i++) {
      const key = `key-${i % KEYS}`;
      messages.push({ key, value: `${key}:${Math.floor(i / KEYS)}` });
    }
    await producer.send({ topic: TOPIC, acks: -1, compression: CompressionTypes.GZIP, messages });
  }
  await producer.disconnect();
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + WAIT_MS_MAX;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function member(kafka: Kafka, name: string, seen: Seen[]): Promise<Consumer> {
  const consumer = kafka.consumer({
    groupId: GROUP,
    sessionTimeout: 10_000,
    heartbeatInterval: 500,
    maxWaitTimeInMs: 200,
  });
  await consumer.connect();
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ partition, message }: EachMessagePayload) => {
      const [key, seq] = message.value!.toString().split(':');
      assert.equal(message.key!.toString(), key);
      seen.push({ key: key!, seq: Number(seq), partition, offset: Number(message.offset), member: name });
    },
  });
  return consumer;
}

function check_order_per_key(seen: Seen[]): void {
  const last = new Map<string, number>();
  for (const record of seen) {
    const before = last.get(record.key) ?? -1;
    assert.ok(record.seq > before || record.seq <= before, 'sequence parsed');
    last.set(record.key, Math.max(before, record.seq));
  }
  // Strict order per key within what each member consumed of each partition.
  const by_stream = new Map<string, number[]>();
  for (const record of seen) {
    const stream = `${record.member}/${record.key}`;
    if (!by_stream.has(stream)) by_stream.set(stream, []);
    by_stream.get(stream)!.push(record.seq);
  }
  for (const [stream, seqs] of by_stream) {
    for (let i = 1; i < seqs.length; i++)
      assert.ok(seqs[i]! > seqs[i - 1]!, `${stream} out of order: ${seqs[i - 1]} then ${seqs[i]}`);
  }
}

test(
  'kafkajs: topics, idempotent gzip producer, a growing consumer group, and a restart',
  { timeout: 240_000 },
  async () => {
    let broker = await start_broker_process();
    try {
      let kafka = kafka_for(broker, 'kafkajs-test');
      const admin = kafka.admin();
      await admin.connect();
      assert.equal(
        await admin.createTopics({ waitForLeaders: true, topics: [{ topic: TOPIC, numPartitions: 3 }] }),
        true,
      );
      const metadata = await admin.fetchTopicMetadata({ topics: [TOPIC] });
      assert.equal(metadata.topics[0]!.partitions.length, 3);
      // A single broker moves nothing: the listing of reassignments in progress is empty.
      assert.deepEqual(await admin.listPartitionReassignments({ topics: [{ topic: TOPIC, partitions: [0, 1, 2] }] }), {
        topics: [],
      });
      assert.deepEqual(await admin.listPartitionReassignments({}), { topics: [] });
      await admin.disconnect();

      await send_range(kafka, 0, 10_000);

      // Two members share the work; each message arrives exactly once, in order per key.
      const seen: Seen[] = [];
      const a = await member(kafka, 'a', seen);
      const b = await member(kafka, 'b', seen);
      await until(() => seen.length >= 10_000, '10,000 messages');
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.equal(seen.length, 10_000, 'no message twice');
      assert.equal(new Set(seen.map((s) => `${s.partition}/${s.offset}`)).size, 10_000);
      check_order_per_key(seen);

      // A third member joins: after the rebalance the three keep up with new messages, losing none.
      const c = await member(kafka, 'c', seen);
      await send_range(kafka, 10_000, 13_000);
      await until(
        () => new Set(seen.map((s) => `${s.partition}/${s.offset}`)).size >= 13_000,
        'the 3,000 messages after the join',
      );
      const distinct = new Set(seen.map((s) => `${s.key}:${s.seq}`));
      assert.equal(distinct.size, 13_000, 'every message arrived');
      const duplicates = seen.length - new Set(seen.map((s) => `${s.partition}/${s.offset}`)).size;
      assert.ok(duplicates <= 3_000, `duplicates only for uncommitted work around the rebalance (${duplicates})`);
      check_order_per_key(seen);
      await Promise.all([a.disconnect(), b.disconnect(), c.disconnect()]);

      // Restart the broker on the same port and data: data and committed offsets are intact.
      assert.equal(await broker.stop(), 0, 'clean shutdown on SIGTERM');
      broker = await start_broker_process({ data_dir: broker.data_dir, port: broker.port });
      kafka = kafka_for(broker, 'kafkajs-test-2');
      const admin2 = kafka.admin();
      await admin2.connect();
      const ends = await admin2.fetchTopicOffsets(TOPIC);
      assert.equal(
        ends.reduce((sum, p) => sum + Number(p.high), 0),
        13_000,
      );
      const committed = await admin2.fetchOffsets({ groupId: GROUP, topics: [TOPIC] });
      for (const p of committed[0]!.partitions) {
        assert.equal(
          p.offset,
          ends.find((e) => e.partition === p.partition)!.high,
          `partition ${p.partition} committed up to its end`,
        );
      }
      await admin2.disconnect();
      const after: Seen[] = [];
      const d = await member(kafka, 'd', after);
      await send_range(kafka, 13_000, 13_100);
      await until(() => after.length >= 100, 'messages after the restart');
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal(after.length, 100, 'the group resumes from its committed offsets');
      await d.disconnect();
    } finally {
      await broker.stop();
      fs.rmSync(broker.data_dir, { recursive: true, force: true });
    }
  },
);

test('kafkajs sees Kafka errors for bad requests, and the broker carries on', { timeout: 120_000 }, async () => {
  const broker = await start_broker_process({ args: ['--no-auto-create'] });
  try {
    const kafka = new Kafka({
      brokers: [broker.bootstrap],
      clientId: 'kafkajs-errors',
      logLevel: logLevel.NOTHING,
      retry: { retries: 1, initialRetryTime: 50 },
    });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({
      topics: [{ topic: 'small', numPartitions: 1, configEntries: [{ name: 'max.message.bytes', value: '1000' }] }],
    });
    await assert.rejects(
      admin.createTopics({ topics: [{ topic: 'bad/name', numPartitions: 1 }] }),
      (error: { type?: string; errors?: Array<{ type: string }> }) =>
        JSON.stringify(error).includes('INVALID_TOPIC_EXCEPTION'),
    );
    await assert.rejects(
      admin.createTopics({ topics: [{ topic: 'replicated', numPartitions: 1, replicationFactor: 3 }] }),
      (error: unknown) => JSON.stringify(error).includes('INVALID_REPLICATION_FACTOR'),
    );
    const producer = kafka.producer({ allowAutoTopicCreation: false });
    await producer.connect();
    await assert.rejects(producer.send({ topic: 'missing', messages: [{ value: 'x' }] }), (error: Error) =>
      /does not host this topic-partition|UNKNOWN_TOPIC/.test(`${error.message} ${JSON.stringify(error)}`),
    );
    await assert.rejects(producer.send({ topic: 'small', messages: [{ value: 'y'.repeat(5000) }] }), (error: Error) =>
      /larger than|MESSAGE_TOO_LARGE/i.test(`${error.message} ${JSON.stringify(error)}`),
    );
    // Nothing was stored by the refused sends, and the same producer still works.
    await producer.send({ topic: 'small', messages: [{ value: 'fits' }] });
    const offsets = await admin.fetchTopicOffsets('small');
    assert.equal(offsets[0]!.high, '1');
    assert.deepEqual((await admin.listTopics()).filter((t) => !t.startsWith('__')).sort(), ['small']);
    await producer.disconnect();
    await admin.disconnect();
  } finally {
    await broker.stop();
    fs.rmSync(broker.data_dir, { recursive: true, force: true });
  }
});
