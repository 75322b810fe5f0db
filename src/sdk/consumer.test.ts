// The SDK consumer against an in-process broker: groups (exactly once across a rebalance, a member
// joining, restart from committed offsets), broadcast mode, seek and seekToTimestamp, pause and
// resume, a group shared with a kafkajs consumer, gzip batches from kafkajs; and the pieces on their
// own: assignors, the consumer protocol encodings, record decoding.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import zlib from 'node:zlib';
import { crc32c } from '@node-rs/crc32';
import { AssignerProtocol as KafkajsProtocol, CompressionTypes, Kafka, logLevel } from 'kafkajs';
import { Cluster, RETRY_DEFAULT } from './cluster.ts';
import { Consumer, type ConsumerConfig, type ConsumerRunConfig, type EachMessagePayload, type TopicPartitions } from './consumer.ts';
import { AssignerProtocol, PartitionAssigners, range_assign, round_robin_assign } from './assignors.ts';
import { decode_fetched } from './records.ts';
import { compress_record_batch } from '../protocol/compression.ts';
import { encode_record_batch, type BatchRecord } from '../protocol/record_batch.ts';
import { start_broker, type RunningBroker } from '../compose/start_broker.ts';
import { temp_dir } from '../../test/support/storage.ts';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';

const WAIT_MS_MAX = 15_000;
/** Short group timings so rebalances take a fraction of a second. */
const FAST: ConsumerConfig = { sessionTimeout: 6_000, rebalanceTimeout: 5_000, heartbeatInterval: 100, maxWaitTimeInMs: 100 };

interface Seen {
  member: string;
  topic: string;
  partition: number;
  offset: number;
  key: string;
  value: string;
}

async function until(condition: () => boolean, what: string, ms = WAIT_MS_MAX): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

class Harness {
  private readonly clusters: Cluster[] = [];
  private readonly consumers: Consumer[] = [];
  private readonly closers: Array<() => Promise<void>> = [];

  private constructor(
    readonly broker: RunningBroker,
    private readonly data_dir: string,
  ) {}

  static async start(name: string): Promise<Harness> {
    const data_dir = temp_dir(`sdk-consumer-${name}`);
    const broker = await start_broker({ data_dir, kafka: { host: '127.0.0.1', port: 0 }, auto_create_topics: false });
    return new Harness(broker, data_dir);
  }

  get bootstrap(): string {
    return `${this.broker.kafka_address.host}:${this.broker.kafka_address.port}`;
  }

  cluster(): Cluster {
    const cluster = new Cluster({ brokers: [this.bootstrap], client_id: 'sdk-consumer-test', retry: { ...RETRY_DEFAULT, retries: 5, initial_retry_ms: 50, max_retry_ms: 500 }, request_timeout_ms: 10_000, max_in_flight: 16 });
    this.clusters.push(cluster);
    return cluster;
  }

  /** Errors the consumers reported (CRASH events), checked at the end of each test. */
  readonly crashes: Array<{ error: unknown; restart: boolean }> = [];

  consumer(config: ConsumerConfig): Consumer {
    const consumer = new Consumer(this.cluster(), { ...FAST, ...config });
    consumer.on<{ error: unknown; restart: boolean }>(consumer.events.CRASH, ({ payload }) => void this.crashes.push(payload));
    this.consumers.push(consumer);
    return consumer;
  }

  /** A consumer subscribed and running, recording what it receives into `seen`. */
  async member(
    name: string,
    seen: Seen[],
    config: ConsumerConfig,
    topics: string[],
    options: { fromBeginning?: boolean; each?: (payload: EachMessagePayload) => Promise<void> | void; run?: Omit<ConsumerRunConfig, 'eachMessage' | 'eachBatch'> } = {},
  ): Promise<Consumer> {
    const consumer = this.consumer(config);
    await consumer.connect();
    await consumer.subscribe({ topics, fromBeginning: options.fromBeginning ?? true });
    await consumer.run({
      ...options.run,
      eachMessage: async (payload) => {
        const { topic, partition, message } = payload;
        seen.push({ member: name, topic, partition, offset: Number(message.offset), key: message.key?.toString() ?? '', value: message.value?.toString() ?? '' });
        await options.each?.(payload);
      },
    });
    return consumer;
  }

  kafka(client_id: string): Kafka {
    return new Kafka({ brokers: [this.bootstrap], clientId: client_id, logLevel: logLevel.NOTHING, retry: { retries: 10, initialRetryTime: 50 } });
  }

  /** No consumer reported an error, apart from those a test provokes on purpose. */
  assert_no_crashes(expected: RegExp | null = null): void {
    const unexpected = this.crashes.filter((c) => !expected || !expected.test(String(c.error)));
    assert.deepEqual(unexpected.map((c) => String(c.error)), [], 'errors reported by the consumers');
  }

  on_close(closer: () => Promise<void>): void {
    this.closers.push(closer);
  }

  async close(): Promise<void> {
    for (const closer of this.closers) await closer().catch(() => {});
    await Promise.all(this.consumers.map((c) => c.disconnect().catch(() => {})));
    for (const cluster of this.clusters) await cluster.close();
    await this.broker.close();
    fs.rmSync(this.data_dir, { recursive: true, force: true });
  }

  /** Appends one uncompressed batch to a partition directly. */
  async append(topic: string, partition: number, records: Array<{ key: string; value: string; timestamp_ms?: number }>): Promise<void> {
    const batch: BatchRecord[] = records.map((r) => ({ key: Buffer.from(r.key), value: Buffer.from(r.value), timestamp_ms: r.timestamp_ms ?? Date.now() }));
    await this.broker.broker.partitions.produce(topic, partition, encode_record_batch(batch), -1);
  }

  /** `count` messages `key-k:seq`, key k = i % keys, each key always in partition k % partitions. */
  async produce_keyed(topic: string, partitions: number, from: number, count: number, keys = 30): Promise<void> {
    const by_partition = new Map<number, Array<{ key: string; value: string }>>();
    for (let i = from; i < from + count; i++) {
      const k = i % keys;
      const partition = k % partitions;
      if (!by_partition.has(partition)) by_partition.set(partition, []);
      by_partition.get(partition)!.push({ key: `key-${k}`, value: `key-${k}:${Math.floor(i / keys)}` });
    }
    for (const [partition, records] of by_partition) await this.append(topic, partition, records);
  }
}

function expected_values(from: number, count: number, keys = 30): string[] {
  const out: string[] = [];
  for (let i = from; i < from + count; i++) out.push(`key-${i % keys}:${Math.floor(i / keys)}`);
  return out;
}

function assert_exactly_once(seen: Seen[], expected: string[]): void {
  const counts = new Map<string, number>();
  for (const s of seen) counts.set(s.value, (counts.get(s.value) ?? 0) + 1);
  const missing = expected.filter((v) => !counts.has(v));
  const duplicated = [...counts].filter(([, n]) => n > 1).map(([v]) => v);
  assert.deepEqual(missing, [], 'every message received');
  assert.deepEqual(duplicated, [], 'no message received twice');
  assert.equal(seen.length, expected.length);
}

function assert_key_order(seen: Seen[]): void {
  const last = new Map<string, number>();
  for (const s of seen) {
    const [key, seq] = s.value.split(':');
    const before = last.get(key!) ?? -1;
    assert.ok(Number(seq) > before, `${key} out of order: ${seq} after ${before}`);
    last.set(key!, Number(seq));
  }
}

function partitions_of(assignments: TopicPartitions[][]): string[] {
  return assignments.flatMap((a) => a.flatMap((t) => t.partitions.map((p) => `${t.topic}/${p}`))).sort();
}

/** True when the members' assignments are disjoint and together cover `count` partitions of `topic`. */
function covers(assignments: TopicPartitions[][], topic: string, count: number): boolean {
  const all = partitions_of(assignments);
  const wanted = Array.from({ length: count }, (_, p) => `${topic}/${p}`).sort();
  return JSON.stringify(all) === JSON.stringify(wanted);
}

// ------------------------------------------------------------------ groups

test('a group of two consumers receives every message of a 3-partition topic exactly once, in order per key', async () => {
  const h = await Harness.start('group');
  try {
    await h.broker.broker.topics.create('orders', 3);
    await h.produce_keyed('orders', 3, 0, 150);
    const seen: Seen[] = [];
    const config = { groupId: 'billing' };
    const [a, b] = await Promise.all([h.member('a', seen, config, ['orders']), h.member('b', seen, config, ['orders'])]);
    await until(() => covers([a.assignments(), b.assignments()], 'orders', 3), 'the group to settle on two members');
    await h.produce_keyed('orders', 3, 150, 150);
    await until(() => seen.length >= 300, 'all 300 messages');
    await sleep(300); // anything received twice would show up now
    assert_exactly_once(seen, expected_values(0, 300));
    assert_key_order(seen);
    const late = seen.slice(-150);
    assert.ok(late.some((s) => s.member === 'a') && late.some((s) => s.member === 'b'), 'both members consume once the group is settled');
    // What the group committed is everything.
    await Promise.all([a.disconnect(), b.disconnect()]);
    const committed = [0, 1, 2].map((p) => h.broker.broker.groups.committed('billing', 'orders', p)?.offset);
    const ends = [0, 1, 2].map((p) => h.broker.broker.topic_index.local_log('orders', p)!.high_watermark);
    assert.deepEqual(committed, ends, 'the committed offsets are the log ends after a graceful disconnect');
    h.assert_no_crashes();
  } finally {
    await h.close();
  }
});

test('a third member joining rebalances the group without losing a message', async () => {
  const h = await Harness.start('rebalance');
  try {
    await h.broker.broker.topics.create('events', 3);
    const seen: Seen[] = [];
    const revoked: string[] = [];
    const config = (name: string): ConsumerConfig => ({ groupId: 'workers', onPartitionsRevoked: (assignment) => void revoked.push(`${name}:${partitions_of([assignment]).join(',')}`) });
    const a = await h.member('a', seen, config('a'), ['events']);
    const b = await h.member('b', seen, config('b'), ['events']);
    await until(() => covers([a.assignments(), b.assignments()], 'events', 3), 'two members to settle');
    // Produce continuously while the third member joins.
    let produced = 0;
    let producing = true;
    const producer = (async () => {
      while (producing) {
        await h.produce_keyed('events', 3, produced, 15);
        produced += 15;
        await sleep(10);
      }
    })();
    await sleep(200);
    const c = await h.member('c', seen, config('c'), ['events']);
    await until(() => covers([a.assignments(), b.assignments(), c.assignments()], 'events', 3) && c.assignments().length > 0, 'three members to settle');
    await sleep(200);
    producing = false;
    await producer;
    await until(() => new Set(seen.map((s) => s.value)).size >= produced, `all ${produced} messages`);
    await sleep(300);
    assert_exactly_once(seen, expected_values(0, produced));
    assert_key_order(seen);
    assert.deepEqual(partitions_of([a.assignments(), b.assignments(), c.assignments()].filter((x) => x.length > 0)).length, 3);
    assert.ok([a, b, c].every((m) => m.assignments().flatMap((t) => t.partitions).length === 1), 'one partition each');
    assert.ok(revoked.some((r) => r.startsWith('a:')) && revoked.some((r) => r.startsWith('b:')), 'the old members were told of the revocation');
    assert.ok(seen.some((s) => s.member === 'c'), 'the new member consumes');
    h.assert_no_crashes();
  } finally {
    await h.close();
  }
});

test('a restarted consumer resumes from the committed offset (auto commit on disconnect, and commitOffsets)', async () => {
  const h = await Harness.start('restart');
  try {
    await h.broker.broker.topics.create('jobs', 3);
    await h.produce_keyed('jobs', 3, 0, 90);
    const first: Seen[] = [];
    const range = { groupId: 'jobs-group', partitionAssigners: [PartitionAssigners.range] };
    const c1 = h.consumer(range);
    const protocols: string[] = [];
    c1.on<{ groupProtocol: string }>(c1.events.GROUP_JOIN, ({ payload }) => void protocols.push(payload.groupProtocol));
    await c1.subscribe({ topic: 'jobs', fromBeginning: true });
    await c1.run({ eachMessage: async ({ partition, message }) => void first.push({ member: 'c1', topic: 'jobs', partition, offset: Number(message.offset), key: '', value: message.value!.toString() }) });
    assert.deepEqual(protocols, ['range']);
    await until(() => first.length >= 90, '90 messages');
    await c1.disconnect();
    await h.produce_keyed('jobs', 3, 90, 60);
    const second: Seen[] = [];
    const c2 = await h.member('c2', second, range, ['jobs']);
    await until(() => second.length >= 60, '60 new messages');
    await sleep(200);
    assert_exactly_once(second, expected_values(90, 60));

    // Manual commits: autoCommit off, offset 4 committed for partition 0; a restart starts there.
    await c2.stop();
    const manual = h.consumer({ groupId: 'manual' });
    await manual.subscribe({ topic: 'jobs', fromBeginning: true });
    const got: Seen[] = [];
    await manual.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) => void got.push({ member: 'm', topic: 'jobs', partition, offset: Number(message.offset), key: '', value: message.value!.toString() }),
    });
    await until(() => got.length >= 150, 'the whole topic');
    await manual.commitOffsets([{ topic: 'jobs', partition: 0, offset: '4' }]);
    await manual.disconnect();
    assert.equal(h.broker.broker.groups.committed('manual', 'jobs', 0)?.offset, 4, 'only the explicit commit is stored');
    assert.equal(h.broker.broker.groups.committed('manual', 'jobs', 1), undefined, 'nothing auto-committed');
    const again: Seen[] = [];
    await h.member('again', again, { groupId: 'manual' }, ['jobs']);
    await until(() => again.filter((s) => s.partition === 0).length >= 46, 'partition 0 from offset 4');
    assert.equal(Math.min(...again.filter((s) => s.partition === 0).map((s) => s.offset)), 4);
    h.assert_no_crashes();
  } finally {
    await h.close();
  }
});

// ------------------------------------------------------------------ broadcast mode

test('broadcast mode: two consumers without a group each receive everything', async () => {
  const h = await Harness.start('broadcast');
  try {
    await h.broker.broker.topics.create('news', 3);
    await h.produce_keyed('news', 3, 0, 120);
    const one: Seen[] = [];
    const two: Seen[] = [];
    const a = await h.member('one', one, {}, ['news']);
    const b = await h.member('two', two, {}, ['news'], { run: { partitionsConsumedConcurrently: 3 } });
    assert.equal(partitions_of([a.assignments()]).length, 3);
    assert.equal(partitions_of([b.assignments()]).length, 3);
    await until(() => one.length >= 120 && two.length >= 120, 'both to read the backlog');
    await h.produce_keyed('news', 3, 120, 30);
    await until(() => one.length >= 150 && two.length >= 150, 'both to read the new messages');
    await sleep(200);
    assert_exactly_once(one, expected_values(0, 150));
    assert_exactly_once(two, expected_values(0, 150));
    assert_key_order(one);
    assert_key_order(two);
    await assert.rejects(a.commitOffsets([{ topic: 'news', partition: 0, offset: '1' }]), /groupId/);
    // Without fromBeginning a consumer starts at the end.
    const late: Seen[] = [];
    await h.member('late', late, {}, ['news'], { fromBeginning: false });
    await h.produce_keyed('news', 3, 150, 3);
    await until(() => late.length >= 3, 'the messages produced after it started');
    await sleep(200);
    assert.deepEqual(late.map((s) => s.value).sort(), expected_values(150, 3).sort());
    h.assert_no_crashes();
  } finally {
    await h.close();
  }
});

// ------------------------------------------------------------------ seek, pause

test('seek and seekToTimestamp move the position; a seek before run applies at assignment', async () => {
  const h = await Harness.start('seek');
  try {
    await h.broker.broker.topics.create('ticks', 1);
    const base = 1_700_000_000_000;
    await h.append('ticks', 0, Array.from({ length: 20 }, (_, i) => ({ key: 'k', value: `v${i}`, timestamp_ms: base + i * 1000 })));
    const seen: Seen[] = [];
    const consumer = await h.member('s', seen, { groupId: 'seekers' }, ['ticks']);
    await until(() => seen.length >= 20, '20 messages');
    assert.deepEqual(seen.map((s) => s.offset), Array.from({ length: 20 }, (_, i) => i));

    consumer.seek({ topic: 'ticks', partition: 0, offset: '5' });
    await until(() => seen.length >= 35, 'offsets 5..19 again');
    assert.deepEqual(seen.slice(20).map((s) => s.offset), Array.from({ length: 15 }, (_, i) => 5 + i));

    await consumer.seekToTimestamp({ topic: 'ticks', partition: 0, timestamp: base + 12_000 - 500 });
    await until(() => seen.length >= 43, 'offsets 12..19 again');
    assert.deepEqual(seen.slice(35).map((s) => s.offset), Array.from({ length: 8 }, (_, i) => 12 + i));
    assert.equal(seen[35]!.value, 'v12');

    // Past the last timestamp: the position is the end; only new messages arrive.
    await consumer.seekToTimestamp({ topic: 'ticks', partition: 0, timestamp: base + 100_000 });
    await sleep(200);
    assert.equal(seen.length, 43);
    await h.append('ticks', 0, [{ key: 'k', value: 'v20' }]);
    await until(() => seen.length >= 44, 'the new message');
    assert.equal(seen[43]!.offset, 20);
    await consumer.disconnect();
    assert.equal(h.broker.broker.groups.committed('seekers', 'ticks', 0)?.offset, 21);

    // Broadcast mode, seek before run: reading starts at the sought offset.
    const early: Seen[] = [];
    const reader = h.consumer({});
    await reader.subscribe({ topic: 'ticks', fromBeginning: true });
    reader.seek({ topic: 'ticks', partition: 0, offset: 17 });
    await reader.run({ eachMessage: async ({ partition, message }) => void early.push({ member: 'r', topic: 'ticks', partition, offset: Number(message.offset), key: '', value: message.value!.toString() }) });
    await until(() => early.length >= 4, 'offsets 17..20');
    assert.deepEqual(early.map((s) => s.offset), [17, 18, 19, 20]);
    h.assert_no_crashes();
  } finally {
    await h.close();
  }
});

test('pause and resume, by topic partition and from inside a handler', async () => {
  const h = await Harness.start('pause');
  try {
    await h.broker.broker.topics.create('flow', 2);
    const seen: Seen[] = [];
    let resume_p1: (() => void) | null = null;
    const consumer = await h.member('p', seen, { groupId: 'pausers' }, ['flow'], {
      each: ({ partition, message, pause }) => {
        if (partition === 1 && message.value!.toString() === 'p1-stop') resume_p1 = pause();
      },
    });
    consumer.pause([{ topic: 'flow', partitions: [0] }]);
    assert.deepEqual(consumer.paused(), [{ topic: 'flow', partitions: [0] }]);
    await h.append('flow', 0, [{ key: 'a', value: 'p0-a' }, { key: 'a', value: 'p0-b' }]);
    await h.append('flow', 1, [{ key: 'b', value: 'p1-a' }]);
    await until(() => seen.length >= 1, 'the unpaused partition');
    await sleep(300);
    assert.deepEqual(seen.map((s) => s.value), ['p1-a'], 'nothing from the paused partition');
    consumer.resume([{ topic: 'flow', partitions: [0] }]);
    await until(() => seen.length >= 3, 'the resumed partition');
    assert.deepEqual(seen.slice(1).map((s) => s.value), ['p0-a', 'p0-b']);

    // pause() from the payload stops the partition right after that message.
    await h.append('flow', 1, [{ key: 'b', value: 'p1-stop' }, { key: 'b', value: 'p1-after' }]);
    await until(() => resume_p1 !== null, 'the handler to pause');
    await sleep(300);
    assert.deepEqual(seen.slice(3).map((s) => s.value), ['p1-stop']);
    assert.deepEqual(consumer.paused(), [{ topic: 'flow', partitions: [1] }]);
    resume_p1!();
    await until(() => seen.length >= 5, 'the message after the pause');
    assert.equal(seen[4]!.value, 'p1-after');

    // A whole topic.
    consumer.pause([{ topic: 'flow' }]);
    await h.append('flow', 0, [{ key: 'a', value: 'late-0' }]);
    await h.append('flow', 1, [{ key: 'b', value: 'late-1' }]);
    await sleep(300);
    assert.equal(seen.length, 5);
    consumer.resume([{ topic: 'flow' }]);
    await until(() => seen.length >= 7, 'both partitions after resuming the topic');
    h.assert_no_crashes();
  } finally {
    await h.close();
  }
});

test('a failing handler is retried from the failed message; stop() from inside a handler commits what is done', async () => {
  const h = await Harness.start('handler-error');
  try {
    await h.broker.broker.topics.create('work', 1);
    await h.append('work', 0, Array.from({ length: 10 }, (_, i) => ({ key: 'k', value: `w${i}` })));
    const offsets: number[] = [];
    const crashes: Array<{ restart: boolean }> = [];
    let failed = false;
    const consumer = h.consumer({ groupId: 'workers' });
    consumer.on<{ restart: boolean }>(consumer.events.CRASH, ({ payload }) => void crashes.push(payload));
    await consumer.subscribe({ topic: 'work', fromBeginning: true });
    let stopped: Promise<void> | null = null;
    let stop_wait_ms = -1;
    await consumer.run({
      eachMessage: async ({ message }) => {
        const offset = Number(message.offset);
        offsets.push(offset);
        if (offset === 3 && !failed) {
          failed = true;
          throw new Error('transient failure');
        }
        if (offset === 7) {
          // Must not wait for this very handler to finish (that would never end).
          const started = Date.now();
          await consumer.stop();
          stop_wait_ms = Date.now() - started;
          stopped = Promise.resolve();
        }
      },
    });
    await until(() => stopped !== null, 'the handler to stop the consumer');
    assert.ok(stop_wait_ms >= 0 && stop_wait_ms < 100, `stop() from a handler returns at once (${stop_wait_ms} ms)`);
    await until(() => h.broker.broker.groups.describe('workers').members.length === 0, 'the member to leave the group', 5_000);
    assert.equal(h.broker.broker.groups.committed('workers', 'work', 0)?.offset, 8, 'offsets up to the stop committed');
    assert.deepEqual(offsets, [0, 1, 2, 3, 3, 4, 5, 6, 7], 'offset 3 retried; nothing after the stop');
    assert.deepEqual(crashes.map((c) => c.restart), [true]);
    h.assert_no_crashes(/transient failure/);
  } finally {
    await h.close();
  }
});

test('static membership: a restarted member with the same groupInstanceId takes over without waiting for the session', async () => {
  const h = await Harness.start('static');
  try {
    await h.broker.broker.topics.create('cache', 2);
    await h.produce_keyed('cache', 2, 0, 20, 4);
    const seen: Seen[] = [];
    const config = { groupId: 'static', groupInstanceId: 'node-1', sessionTimeout: 20_000 };
    const s1 = await h.member('s1', seen, config, ['cache']);
    await until(() => seen.length >= 20, '20 messages');
    await s1.disconnect();
    assert.equal(h.broker.broker.groups.describe('static').members.length, 1, 'a static member stays in the group after it stops');
    await h.produce_keyed('cache', 2, 20, 10, 4);
    const started = Date.now();
    const s2 = await h.member('s2', seen, config, ['cache']);
    assert.ok(Date.now() - started < 5_000, 'no wait for the old session to expire');
    assert.equal(partitions_of([s2.assignments()]).length, 2);
    await until(() => seen.length >= 30, 'the 10 new messages');
    await sleep(200);
    assert_exactly_once(seen, expected_values(0, 30, 4));
    assert.equal(h.broker.broker.groups.describe('static').members.length, 1);
    h.assert_no_crashes();
  } finally {
    await h.close();
  }
});

test('eachBatch: unresolved messages are fetched again, resolved ones committed', async () => {
  const h = await Harness.start('each-batch');
  try {
    await h.broker.broker.topics.create('bulk', 1);
    await h.append('bulk', 0, Array.from({ length: 10 }, (_, i) => ({ key: 'k', value: `b${i}` })));
    const calls: string[][] = [];
    const uncommitted: unknown[] = [];
    const consumer = h.consumer({ groupId: 'batcher' });
    const crashes: unknown[] = [];
    consumer.on<{ error: unknown }>(consumer.events.CRASH, ({ payload }) => void crashes.push(payload.error));
    await consumer.subscribe({ topic: 'bulk', fromBeginning: true });
    await consumer.run({
      eachBatchAutoResolve: false,
      autoCommitInterval: null,
      eachBatch: async ({ batch, resolveOffset, uncommittedOffsets, commitOffsetsIfNecessary, isRunning, isStale }) => {
        assert.ok(isRunning() && !isStale());
        calls.push(batch.messages.map((m) => m.offset));
        assert.equal(batch.highWatermark, '10');
        if (calls.length === 1) {
          resolveOffset(batch.messages[4]!.offset); // the rest is left unresolved
          uncommitted.push(uncommittedOffsets());
          return;
        }
        for (const message of batch.messages) resolveOffset(message.offset);
        assert.equal(batch.offsetLag(), '0');
        assert.equal(batch.offsetLagLow(), '4');
        await commitOffsetsIfNecessary();
      },
    });
    await until(() => calls.length >= 2 && h.broker.broker.groups.committed('batcher', 'bulk', 0)?.offset === 10, 'the second batch and its commit');
    assert.deepEqual(calls, [Array.from({ length: 10 }, (_, i) => String(i)), ['5', '6', '7', '8', '9']]);
    assert.deepEqual(uncommitted, [{ topics: [{ topic: 'bulk', partitions: [{ partition: 0, offset: '5' }] }] }]);
    assert.deepEqual(crashes, [], 'no handler (assertion) failed');
    h.assert_no_crashes();
  } finally {
    await h.close();
  }
});

// ------------------------------------------------------------------ kafkajs interplay

test('an SDK consumer and a kafkajs consumer share a group with the round robin assignor, either one leading', async () => {
  const h = await Harness.start('kafkajs-group');
  try {
    await h.broker.broker.topics.create('shared', 4);
    const seen: Seen[] = [];
    let kafkajs_assignment: TopicPartitions[] = [];
    const start_kafkajs = async (group: string) => {
      const consumer = h.kafka('kafkajs-member').consumer({ groupId: group, sessionTimeout: 6_000, rebalanceTimeout: 5_000, heartbeatInterval: 100, maxWaitTimeInMs: 100 });
      h.on_close(() => consumer.disconnect());
      consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
        kafkajs_assignment = Object.entries(payload.memberAssignment).map(([topic, partitions]) => ({ topic, partitions: partitions as number[] }));
      });
      await consumer.connect();
      await consumer.subscribe({ topics: ['shared'], fromBeginning: true });
      await consumer.run({
        eachMessage: async ({ topic, partition, message }) => {
          seen.push({ member: 'kafkajs', topic, partition, offset: Number(message.offset), key: message.key!.toString(), value: message.value!.toString() });
        },
      });
      return consumer;
    };

    // The SDK consumer joins first and leads.
    let joins: Array<{ isLeader: boolean; groupProtocol: string }> = [];
    const sdk = h.consumer({ groupId: 'mixed' });
    sdk.on<{ isLeader: boolean; groupProtocol: string }>(sdk.events.GROUP_JOIN, ({ payload }) => void joins.push(payload));
    await sdk.subscribe({ topic: 'shared', fromBeginning: true });
    await sdk.run({ eachMessage: async ({ topic, partition, message }) => void seen.push({ member: 'sdk', topic, partition, offset: Number(message.offset), key: message.key!.toString(), value: message.value!.toString() }) });
    const kafkajs = await start_kafkajs('mixed');
    await until(() => covers([sdk.assignments(), kafkajs_assignment], 'shared', 4) && sdk.assignments().length > 0 && kafkajs_assignment.length > 0, 'the group to share the partitions');
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
    const sdk2 = h.consumer({ groupId: 'mixed' });
    sdk2.on<{ isLeader: boolean; groupProtocol: string }>(sdk2.events.GROUP_JOIN, ({ payload }) => void joins.push(payload));
    await sdk2.subscribe({ topic: 'shared', fromBeginning: true });
    await sdk2.run({ eachMessage: async ({ topic, partition, message }) => void seen.push({ member: 'sdk2', topic, partition, offset: Number(message.offset), key: message.key!.toString(), value: message.value!.toString() }) });
    await until(() => covers([sdk2.assignments(), kafkajs_assignment], 'shared', 4) && sdk2.assignments().length > 0, 'kafkajs to hand the SDK consumer its share');
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
    const messages = Array.from({ length: 50 }, (_, i) => ({ key: `k${i}`, value: `value ${i} `.repeat(20), headers: { trace: `t${i}`, dup: [`a${i}`, `b${i}`] } }));
    await producer.send({ topic: 'zipped', compression: CompressionTypes.GZIP, messages: messages.slice(0, 25) });
    await producer.send({ topic: 'zipped', compression: CompressionTypes.GZIP, messages: messages.slice(25) });
    await producer.disconnect();
    // The stored batches really are gzip (attributes codec 1).
    const stored = await h.broker.broker.topic_index.local_log('zipped', 0)!.read(0, 1 << 20);
    assert.ok(stored.batches.length >= 1 && (stored.batches[0]!.readInt16BE(21) & 7) === 1);

    // Batches in the other codecs, appended directly.
    for (const codec of ['snappy', 'lz4', 'zstd'] as const) {
      const batch = encode_record_batch([{ key: Buffer.from(`k-${codec}`), value: Buffer.from(`value ${codec}`), timestamp_ms: Date.now(), headers: [{ key: 'trace', value: Buffer.from(codec) }, { key: 'dup', value: Buffer.from('x') }, { key: 'dup', value: Buffer.from('y') }] }]);
      await h.broker.broker.partitions.produce('zipped', 0, await compress_record_batch(batch, codec), -1);
      messages.push({ key: `k-${codec}`, value: `value ${codec}`, headers: { trace: codec, dup: ['x', 'y'] } });
    }
    const got: Array<{ key: string; value: string; trace: string; dup: string[]; offset: string }> = [];
    const consumer = h.consumer({});
    await consumer.subscribe({ topic: 'zipped', fromBeginning: true });
    await consumer.run({
      eachBatch: async ({ batch }) => {
        for (const m of batch.messages) {
          got.push({ key: m.key!.toString(), value: m.value!.toString(), trace: String(m.headers.trace), dup: (m.headers.dup as Buffer[]).map(String), offset: m.offset });
        }
      },
    });
    await until(() => got.length >= 53, '53 messages');
    assert.deepEqual(got.map((g) => g.key), messages.map((m) => m.key));
    assert.deepEqual(got.map((g) => g.value), messages.map((m) => m.value));
    assert.deepEqual(got.map((g) => g.trace), messages.map((m) => m.headers.trace));
    assert.deepEqual(got.map((g) => g.dup), messages.map((m) => m.headers.dup));
    assert.deepEqual(got.map((g) => g.offset), messages.map((_, i) => String(i)));
    h.assert_no_crashes();
  } finally {
    await h.close();
  }
});

// ------------------------------------------------------------------ the pieces

test('assignors: round robin and range as Java assigns, encodings readable by kafkajs and back', () => {
  const partitions = new Map([['a', 3], ['b', 2]]);
  const members = [
    { memberId: 'm2', topics: ['a', 'b'] },
    { memberId: 'm1', topics: ['a', 'b'] },
  ];
  const plain = (result: Map<string, Record<string, number[]>>) => JSON.parse(JSON.stringify(Object.fromEntries(result))) as unknown;
  assert.deepEqual(plain(round_robin_assign(members, partitions)), { m2: { a: [1], b: [0] }, m1: { a: [0, 2], b: [1] } });
  assert.deepEqual(plain(range_assign(members, partitions)), { m2: { a: [2], b: [1] }, m1: { a: [0, 1], b: [0] } });
  // A member not subscribed to a topic gets none of it.
  const mixed = round_robin_assign([{ memberId: 'x', topics: ['a'] }, { memberId: 'y', topics: ['a', 'b'] }], partitions);
  assert.deepEqual(plain(mixed), { x: { a: [0, 2] }, y: { a: [1], b: [0, 1] } });

  const metadata = AssignerProtocol.MemberMetadata.encode({ version: 0, topics: ['a', 'b'] });
  assert.deepEqual(KafkajsProtocol.MemberMetadata.decode(metadata), { version: 0, topics: ['a', 'b'], userData: Buffer.alloc(0) });
  const theirs = KafkajsProtocol.MemberMetadata.encode({ version: 0, topics: ['t'], userData: Buffer.alloc(0) });
  assert.deepEqual(AssignerProtocol.MemberMetadata.decode(theirs)?.topics, ['t']);
  const assignment = AssignerProtocol.MemberAssignment.encode({ version: 0, assignment: { a: [0, 2], b: [1] } });
  assert.deepEqual(KafkajsProtocol.MemberAssignment.decode(assignment)?.assignment, { a: [0, 2], b: [1] });
  const back = KafkajsProtocol.MemberAssignment.encode({ version: 0, assignment: { t: [3] }, userData: Buffer.alloc(0) });
  assert.deepEqual({ ...AssignerProtocol.MemberAssignment.decode(back)?.assignment }, { t: [3] });
  // Java's v1 subscription adds owned partitions after the user data: ignored.
  const v1 = Buffer.concat([AssignerProtocol.MemberMetadata.encode({ version: 1, topics: ['a'] }), Buffer.from([0, 0, 0, 0])]);
  assert.deepEqual(AssignerProtocol.MemberMetadata.decode(v1)?.topics, ['a']);
  assert.equal(AssignerProtocol.MemberAssignment.decode(Buffer.alloc(0)), null);
});

/** Rewrites an uncompressed batch as a gzip batch (records section compressed, CRC recomputed). */
function gzip_batch(batch: Buffer): Buffer {
  const records = zlib.gzipSync(batch.subarray(61));
  const out = Buffer.concat([batch.subarray(0, 61), records]);
  out.writeInt32BE(out.length - 12, 8);
  out.writeInt16BE(out.readInt16BE(21) | 1, 21);
  out.writeUInt32BE(crc32c(out.subarray(21)), 17);
  return out;
}

function with_base_offset(batch: Buffer, offset: number): Buffer {
  const out = Buffer.from(batch);
  out.writeBigInt64BE(BigInt(offset), 0);
  return out;
}

test('record decoding: offsets below the fetch offset and control batches skipped, partial batches left, codecs', async () => {
  const record = (i: number): BatchRecord => ({ key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}`), timestamp_ms: 1000 + i });
  const first = with_base_offset(gzip_batch(encode_record_batch([0, 1, 2, 3].map(record))), 10);
  const control = with_base_offset(encode_record_batch([{ key: Buffer.from([0, 0, 0, 0]), value: Buffer.from([0, 0, 0, 0, 0, 0]), timestamp_ms: 2000 }], { attributes: 0x30, producer_id: 7, producer_epoch: 0 }), 14);
  const last = with_base_offset(encode_record_batch([4, 5].map(record)), 15);
  const set = Buffer.concat([first, control, last, last.subarray(0, 30)]);
  const fetched = await decode_fetched(set, 12);
  assert.deepEqual(fetched.messages.map((m) => [m.offset, m.value!.toString(), m.timestamp]), [['12', 'v2', '1002'], ['13', 'v3', '1003'], ['15', 'v4', '1004'], ['16', 'v5', '1005']]);
  assert.equal(fetched.next_offset, 17, 'after the last whole batch; the cut one is fetched again');

  // Only a control batch: no messages, the position moves past it.
  const only_control = await decode_fetched(control, 14);
  assert.deepEqual(only_control, { messages: [], next_offset: 15 });

  // Aborted transactions are dropped under read_committed.
  const txn = with_base_offset(encode_record_batch([6, 7].map(record), { attributes: 0x10, producer_id: 9, producer_epoch: 0, base_sequence: 0 }), 20);
  const abort = with_base_offset(encode_record_batch([{ key: Buffer.from([0, 0, 0, 1]), value: Buffer.from([0, 0, 0, 0, 0, 0]), timestamp_ms: 2000 }], { attributes: 0x30, producer_id: 9, producer_epoch: 0 }), 22);
  const after = with_base_offset(encode_record_batch([8].map(record)), 23);
  const committed_view = await decode_fetched(Buffer.concat([txn, abort, after]), 20, { aborted_transactions: [{ producer_id: 9, first_offset: 20 }] });
  assert.deepEqual(committed_view.messages.map((m) => m.offset), ['23']);
  const uncommitted_view = await decode_fetched(Buffer.concat([txn, abort, after]), 20);
  assert.deepEqual(uncommitted_view.messages.map((m) => m.offset), ['20', '21', '23']);

  // A corrupted batch fails its CRC; a codec id beyond zstd is refused.
  const corrupt = Buffer.from(last);
  corrupt[corrupt.length - 1]! ^= 0xff;
  await assert.rejects(decode_fetched(corrupt, 0), /CRC/);
  const unknown = Buffer.from(last);
  unknown.writeInt16BE(5, 21);
  unknown.writeUInt32BE(crc32c(unknown.subarray(21)), 17);
  await assert.rejects(decode_fetched(unknown, 0), /unknown compression codec 5/);

  // snappy, lz4 and zstd through compression.ts.
  for (const codec of ['snappy', 'lz4', 'zstd'] as const) {
    const batch = with_base_offset(await compress_record_batch(encode_record_batch([0, 1, 2].map(record)), codec), 30);
    assert.equal(batch.readInt16BE(21) & 7, { snappy: 2, lz4: 3, zstd: 4 }[codec]);
    const decoded = await decode_fetched(batch, 31);
    assert.deepEqual(decoded.messages.map((m) => [m.offset, m.key!.toString(), m.value!.toString()]), [['31', 'k1', 'v1'], ['32', 'k2', 'v2']], codec);
  }
});
