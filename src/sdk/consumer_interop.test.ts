// The SDK consumer with kafkajs against an in-process broker: a group shared with a kafkajs
// consumer (either one leading), and gzip batches produced by kafkajs (snappy, lz4 and zstd too).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CompressionTypes } from 'kafkajs';
import type { TopicPartitions } from './consumer.ts';
import { compress_record_batch } from '../protocol/compression.ts';
import { encode_record_batch } from '../protocol/record_batch.ts';
import {
  Harness,
  assert_exactly_once,
  covers,
  expected_values,
  partitions_of,
  sleep,
  until,
  type Seen,
} from './consumer_test_support.ts';

// ------------------------------------------------------------------ kafkajs interplay

type Join = { isLeader: boolean; groupProtocol: string };

/** An eachMessage handler (of either client) recording what `member` receives into `seen`. */
function recorder(member: string, seen: Seen[]) {
  return async ({ topic, partition, message }: { topic: string; partition: number; message: RecordedMessage }) =>
    void seen.push({
      member,
      topic,
      partition,
      offset: Number(message.offset),
      key: message.key!.toString(),
      value: message.value!.toString(),
    });
}

interface RecordedMessage {
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
}

/** A kafkajs member of `group` reading 'shared'; `on_assignment` gets each assignment it joins with. */
async function start_kafkajs(h: Harness, group: string, seen: Seen[], on_assignment: (a: TopicPartitions[]) => void) {
  const consumer = h.kafka('kafkajs-member').consumer({
    groupId: group,
    sessionTimeout: 6_000,
    rebalanceTimeout: 5_000,
    heartbeatInterval: 100,
    maxWaitTimeInMs: 100,
  });
  h.on_close(() => consumer.disconnect());
  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    on_assignment(
      Object.entries(payload.memberAssignment).map(([topic, partitions]) => ({
        topic,
        partitions: partitions as number[],
      })),
    );
  });
  await consumer.connect();
  await consumer.subscribe({ topics: ['shared'], fromBeginning: true });
  await consumer.run({ eachMessage: recorder('kafkajs', seen) });
  return consumer;
}

/** An SDK member of group 'mixed' reading 'shared', its joins recorded into `joins`. */
async function start_sdk(h: Harness, member: string, seen: Seen[], joins: Join[]) {
  const sdk = h.consumer({ groupId: 'mixed' });
  sdk.on<Join>(sdk.events.GROUP_JOIN, ({ payload }) => void joins.push(payload));
  await sdk.subscribe({ topic: 'shared', fromBeginning: true });
  await sdk.run({ eachMessage: recorder(member, seen) });
  return sdk;
}

test('an SDK and a kafkajs consumer share a group with the round robin assignor, either one leading', async () => {
  const h = await Harness.start('kafkajs-group');
  try {
    await h.broker.broker.topics.create('shared', 4);
    const seen: Seen[] = [];
    let kafkajs_assignment: TopicPartitions[] = [];
    const track = (assignment: TopicPartitions[]) => (kafkajs_assignment = assignment);

    // The SDK consumer joins first and leads.
    let joins: Join[] = [];
    const sdk = await start_sdk(h, 'sdk', seen, joins);
    const kafkajs = await start_kafkajs(h, 'mixed', seen, track);
    await until(
      () =>
        covers([sdk.assignments(), kafkajs_assignment], 'shared', 4) &&
        sdk.assignments().length > 0 &&
        kafkajs_assignment.length > 0,
      'the group to share the partitions',
    );
    assert.equal(joins.at(-1)!.groupProtocol, 'RoundRobinAssigner', 'the protocol both offer');
    assert.equal(joins.at(-1)!.isLeader, true);
    assert.deepEqual(partitions_of([sdk.assignments()]).length, 2);
    await h.produce_keyed('shared', 4, 0, 200, 40);
    await until(() => seen.length >= 200, '200 messages');
    await sleep(300);
    assert_exactly_once(seen, expected_values(0, 200, 40));
    assert.ok(seen.some((s) => s.member === 'sdk') && seen.some((s) => s.member === 'kafkajs'));

    // kafkajs leads: it is alone first, then an SDK consumer joins.
    await sdk.disconnect();
    kafkajs_assignment = [];
    await until(() => covers([kafkajs_assignment], 'shared', 4), 'kafkajs to take every partition');
    joins = [];
    const sdk2 = await start_sdk(h, 'sdk2', seen, joins);
    await until(
      () => covers([sdk2.assignments(), kafkajs_assignment], 'shared', 4) && sdk2.assignments().length > 0,
      'kafkajs to hand the SDK consumer its share',
    );
    assert.equal(joins.at(-1)!.isLeader, false, 'kafkajs leads');
    await h.produce_keyed('shared', 4, 200, 200, 40);
    await until(() => seen.length >= 400, '400 messages');
    await sleep(300);
    assert_exactly_once(seen, expected_values(0, 400, 40));
    assert.ok(seen.slice(200).some((s) => s.member === 'sdk2'));
    await kafkajs.disconnect();
    h.assert_no_crashes();
  } finally {
    await h.close();
  }
});

test('gzip batches produced by kafkajs are decoded, headers and keys included; snappy, lz4 and zstd too', async () => {
  const h = await Harness.start('gzip');
  try {
    await h.broker.broker.topics.create('zipped', 1);
    const producer = h.kafka('gzip-producer').producer();
    await producer.connect();
    const messages = Array.from({ length: 50 }, (_, i) => ({
      key: `k${i}`,
      value: `value ${i} `.repeat(20),
      headers: { trace: `t${i}`, dup: [`a${i}`, `b${i}`] },
    }));
    await producer.send({ topic: 'zipped', compression: CompressionTypes.GZIP, messages: messages.slice(0, 25) });
    await producer.send({ topic: 'zipped', compression: CompressionTypes.GZIP, messages: messages.slice(25) });
    await producer.disconnect();
    // The stored batches really are gzip (attributes codec 1).
    const stored = await h.broker.broker.topic_index.local_log('zipped', 0)!.read(0, 1 << 20);
    assert.ok(stored.batches.length >= 1 && (stored.batches[0]!.readInt16BE(21) & 7) === 1);

    // Batches in the other codecs, appended directly.
    for (const codec of ['snappy', 'lz4', 'zstd'] as const) {
      const batch = encode_record_batch([
        {
          key: Buffer.from(`k-${codec}`),
          value: Buffer.from(`value ${codec}`),
          timestamp_ms: Date.now(),
          headers: [
            { key: 'trace', value: Buffer.from(codec) },
            { key: 'dup', value: Buffer.from('x') },
            { key: 'dup', value: Buffer.from('y') },
          ],
        },
      ]);
      await h.broker.broker.partitions.produce('zipped', 0, await compress_record_batch(batch, codec), -1);
      messages.push({ key: `k-${codec}`, value: `value ${codec}`, headers: { trace: codec, dup: ['x', 'y'] } });
    }
    const got: Array<{ key: string; value: string; trace: string; dup: string[]; offset: string }> = [];
    const consumer = h.consumer({});
    await consumer.subscribe({ topic: 'zipped', fromBeginning: true });
    await consumer.run({
      eachBatch: async ({ batch }) => {
        for (const m of batch.messages) {
          got.push({
            key: m.key!.toString(),
            value: m.value!.toString(),
            trace: String(m.headers.trace),
            dup: (m.headers.dup as Buffer[]).map(String),
            offset: m.offset,
          });
        }
      },
    });
    await until(() => got.length >= 53, '53 messages');
    assert.deepEqual(
      got.map((g) => g.key),
      messages.map((m) => m.key),
    );
    assert.deepEqual(
      got.map((g) => g.value),
      messages.map((m) => m.value),
    );
    assert.deepEqual(
      got.map((g) => g.trace),
      messages.map((m) => m.headers.trace),
    );
    assert.deepEqual(
      got.map((g) => g.dup),
      messages.map((m) => m.headers.dup),
    );
    assert.deepEqual(
      got.map((g) => g.offset),
      messages.map((_, i) => String(i)),
    );
    h.assert_no_crashes();
  } finally {
    await h.close();
  }
});
