// Ordered parallel processing per key (run({ concurrency, orderBy: 'key' })) against an in-process
// broker: every message once, per-key order, the concurrency bound and the speed-up; and a consumer
// killed part way through (in a process of its own), after which a new member of the group receives
// everything not finished and repeats nothing below the committed watermark.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Cluster, RETRY_DEFAULT } from './cluster.ts';
import { Consumer, type ConsumerConfig } from './consumer.ts';
import { encode_record_batch } from '../protocol/record_batch.ts';
import { start_broker, type RunningBroker } from '../compose/start_broker.ts';
import { temp_dir } from '../../test/support/storage.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const WAIT_MS_MAX = 20_000;
const FAST: ConsumerConfig = {
  sessionTimeout: 6_000,
  rebalanceTimeout: 5_000,
  heartbeatInterval: 100,
  maxWaitTimeInMs: 100,
};
const TOPIC = 'orders';
const PARTITIONS = 3;
const KEYS = 50;
const COUNT = 2_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean, what: string, ms = WAIT_MS_MAX): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(20);
  }
}

interface Setup {
  broker: RunningBroker;
  bootstrap: string;
  cluster(): Cluster;
  close(): Promise<void>;
}

async function setup(name: string): Promise<Setup> {
  const data_dir = temp_dir(`sdk-ordered-${name}`);
  const broker = await start_broker({ data_dir, kafka: { host: '127.0.0.1', port: 0 }, auto_create_topics: false });
  const bootstrap = `${broker.kafka_address.host}:${broker.kafka_address.port}`;
  const clusters: Cluster[] = [];
  return {
    broker,
    bootstrap,
    cluster: () => {
      const cluster = new Cluster({
        brokers: [bootstrap],
        client_id: 'sdk-ordered-test',
        retry: { ...RETRY_DEFAULT, retries: 5, initial_retry_ms: 50, max_retry_ms: 500 },
        request_timeout_ms: 10_000,
        max_in_flight: 16,
      });
      clusters.push(cluster);
      return cluster;
    },
    close: async () => {
      for (const cluster of clusters) await cluster.close();
      await broker.close();
      fs.rmSync(data_dir, { recursive: true, force: true });
    },
  };
}

/** COUNT messages `key-k:seq` over KEYS keys; key k always in partition k % PARTITIONS. */
async function produce(broker: RunningBroker): Promise<void> {
  await broker.broker.topics.create(TOPIC, PARTITIONS);
  const by_partition = new Map<number, Array<{ key: string; value: string }>>();
  for (let i = 0; i < COUNT; i++) {
    const k = i % KEYS;
    const partition = k % PARTITIONS;
    if (!by_partition.has(partition)) by_partition.set(partition, []);
    by_partition.get(partition)!.push({ key: `key-${k}`, value: `key-${k}:${Math.floor(i / KEYS)}` });
  }
  for (const [partition, records] of by_partition) {
    // A few batches per partition, as separate produce requests would leave them.
    for (let i = 0; i < records.length; i += 100) {
      const batch = records
        .slice(i, i + 100)
        .map((r) => ({ key: Buffer.from(r.key), value: Buffer.from(r.value), timestamp_ms: Date.now() }));
      await broker.broker.partitions.produce(TOPIC, partition, encode_record_batch(batch), -1);
    }
  }
}

function assert_key_order(values: string[], what: string): void {
  const last = new Map<string, number>();
  for (const value of values) {
    const [key, seq] = value.split(':');
    const before = last.get(key!) ?? -1;
    assert.ok(Number(seq) > before, `${what}: ${key} out of order: ${seq} after ${before}`);
    last.set(key!, Number(seq));
  }
}

test('orderBy key, concurrency 16, 2,000 messages, 50 keys: once each, key order, 4x faster than serial', async (t) => {
  const s = await setup('parallel');
  try {
    await produce(s.broker);
    const consumer = new Consumer(s.cluster(), { ...FAST, groupId: 'parallel' });
    const crashes: unknown[] = [];
    consumer.on<{ error: unknown }>(consumer.events.CRASH, ({ payload }) => void crashes.push(payload.error));
    const values: string[] = [];
    const running_keys = new Set<string>();
    const overlaps: string[] = [];
    let in_flight = 0;
    let max_in_flight = 0;
    let handler_ms = 0;
    let first_start = 0;
    let last_end = 0;
    await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
    await consumer.run({
      concurrency: 16,
      orderBy: 'key',
      eachMessage: async ({ message }) => {
        const started = performance.now();
        first_start ||= started;
        const key = message.key!.toString();
        if (running_keys.has(key)) overlaps.push(`${key} at ${message.offset}`);
        running_keys.add(key);
        in_flight++;
        max_in_flight = Math.max(max_in_flight, in_flight);
        values.push(message.value!.toString());
        await sleep(Math.floor(Math.random() * 6));
        in_flight--;
        running_keys.delete(key);
        const ended = performance.now();
        handler_ms += ended - started;
        last_end = ended;
      },
    });
    await until(() => values.length >= COUNT, `all ${COUNT} messages`);
    await sleep(300); // anything received twice would show up now
    await consumer.disconnect();

    assert.equal(values.length, COUNT);
    assert.equal(new Set(values).size, COUNT, 'every message once');
    assert.deepEqual(overlaps, [], 'no two messages of one key at once');
    assert_key_order(values, 'parallel');
    assert.ok(max_in_flight <= 16, `at most 16 in flight (${max_in_flight})`);
    assert.ok(max_in_flight >= 8, `real parallelism (${max_in_flight} at most in flight)`);
    const wall = last_end - first_start;
    t.diagnostic(
      `wall ${wall.toFixed(0)} ms, handlers one after the other ${handler_ms.toFixed(0)} ms, ` +
        `at most ${max_in_flight} in flight`,
    );
    // handler_ms is what the same handlers take one after the other.
    assert.ok(wall < handler_ms / 4, `wall time ${wall.toFixed(0)} ms, sequential ${handler_ms.toFixed(0)} ms`);
    const committed = [0, 1, 2].map((p) => s.broker.broker.groups.committed('parallel', TOPIC, p)?.offset);
    const ends = [0, 1, 2].map((p) => s.broker.broker.topic_index.local_log(TOPIC, p)!.high_watermark);
    assert.deepEqual(committed, ends, 'everything committed after a graceful disconnect');
    assert.deepEqual(crashes.map(String), []);
  } finally {
    await s.close();
  }
});

/**
 * Runs the ordered consumer in a process of its own, with `hang`'s handler never finishing, and
 * kills it once it handled 800 messages: the messages whose handlers started and finished.
 */
async function run_and_kill(s: Setup, group: string, instance: string, hang: string) {
  const script = path.join(ROOT, 'test', 'support', 'ordered_consumer_process.ts');
  const child = spawn(process.execPath, ['--import', 'tsx', script, s.bootstrap, group, instance, TOPIC, hang], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const started = new Set<string>();
  const done = new Set<string>();
  let stderr = '';
  let pending = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout.on('data', (chunk: Buffer) => {
    pending += chunk.toString();
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const line of lines) {
      const [kind, partition, offset] = line.split(' ');
      if (kind === 'S') started.add(`${partition}/${offset}`);
      if (kind === 'D') done.add(`${partition}/${offset}`);
    }
  });
  try {
    await until(() => done.size >= 800 || child.exitCode !== null, 'the child to handle 800 messages');
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
  return { started, done, stderr };
}

/** A new member of `group` with the killed one's instance id, until it received `expected` messages. */
async function take_over(s: Setup, group: string, instance: string, expected: number) {
  const consumer = new Consumer(s.cluster(), {
    ...FAST,
    groupId: group,
    groupInstanceId: instance,
    sessionTimeout: 20_000,
  });
  const received: Array<{ id: string; value: string; partition: number; offset: number }> = [];
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
  await consumer.run({
    concurrency: 16,
    orderBy: 'key',
    eachMessage: async ({ partition, message }) => {
      received.push({
        id: `${partition}/${message.offset}`,
        value: message.value!.toString(),
        partition,
        offset: Number(message.offset),
      });
      await sleep(Math.floor(Math.random() * 3));
    },
  });
  await until(() => received.length >= expected, `the ${expected} messages from the watermark on`);
  await sleep(300);
  await consumer.disconnect();
  return received;
}

/**
 * What the killed consumer left: the hanging handler unfinished, other keys of its partition past
 * it, commits made while handlers ran, and none past a message whose handler did not finish.
 */
function check_killed_consumer(
  started: Set<string>,
  done: Set<string>,
  watermark: number[],
  hang_offset: number,
): void {
  assert.ok(
    started.has(`0/${hang_offset}`) && !done.has(`0/${hang_offset}`),
    'the hanging handler started and never finished',
  );
  assert.ok(
    [...done].filter((id) => id.startsWith('0/') && Number(id.slice(2)) > hang_offset).length > 50,
    'other keys of partition 0 went on past it',
  );
  assert.ok(watermark[0]! <= hang_offset, `partition 0 committed ${watermark[0]}, past the unfinished ${hang_offset}`);
  assert.ok(
    watermark.some((w) => w > 0),
    `commits happened while handlers ran (${watermark.join(', ')})`,
  );
  // The committed watermark never passes a message whose handler did not finish.
  for (let p = 0; p < PARTITIONS; p++) {
    for (let offset = 0; offset < watermark[p]!; offset++) {
      assert.ok(done.has(`${p}/${offset}`), `${p}/${offset} committed but its handler did not finish`);
    }
  }
}

test(
  'a consumer killed mid-way loses nothing: the next member gets every unfinished message ' +
    'and repeats only those past the committed watermark',
  async (t) => {
    const s = await setup('crash');
    try {
      await produce(s.broker);
      const group = 'crashing';
      const instance = 'worker-1'; // static membership: the new member takes over without waiting for the session
      // This message's handler never finishes in the killed consumer: key-0 (partition 0) stops there
      // while the other keys of partition 0 go on, so partition 0's watermark must stay at it.
      const HANG = 'key-0:5';
      const hang_offset = 5 * 17; // partition 0 holds keys 0, 3, …, 48: 17 messages per round of 50
      const { started, done, stderr } = await run_and_kill(s, group, instance, HANG);
      assert.ok(done.size >= 800, `the child handled ${done.size} messages before it was killed; stderr:\n${stderr}`);
      await sleep(50); // the last buffered lines
      const unfinished_started = [...started].filter((id) => !done.has(id));

      const watermark = [0, 1, 2].map((p) => s.broker.broker.groups.committed(group, TOPIC, p)?.offset ?? 0);
      check_killed_consumer(started, done, watermark, hang_offset);

      const ends = [0, 1, 2].map((p) => s.broker.broker.topic_index.local_log(TOPIC, p)!.high_watermark);
      const expected = ends.reduce((sum, end, p) => sum + end - watermark[p]!, 0);
      const received = await take_over(s, group, instance, expected);

      const ids = received.map((r) => r.id);
      assert.equal(new Set(ids).size, ids.length, 'the new member receives each message once');
      assert.equal(ids.length, expected, 'exactly the messages from the committed watermark on');
      // No loss: everything the killed consumer did not finish reaches the new member.
      const all = ends.flatMap((end, p) => Array.from({ length: end }, (_, offset) => `${p}/${offset}`));
      const got = new Set(ids);
      const lost = all.filter((id) => !done.has(id) && !got.has(id));
      assert.deepEqual(lost, [], 'no message lost');
      for (const id of unfinished_started) {
        assert.ok(got.has(id), `${id} was running at the crash and is handled again`);
      }
      assert.ok(
        received.some((r) => r.value === HANG),
        'the message that hung is handled by the new member',
      );
      // Repeats: only messages past the watermark (handled ahead of it by other keys).
      const repeated = received.filter((r) => done.has(r.id));
      t.diagnostic(
        `killed after ${done.size} done (${unfinished_started.length} running); watermarks ${watermark.join(', ')}; ` +
          `${received.length} received again, ${repeated.length} of them repeats`,
      );
      for (const r of repeated) {
        assert.ok(
          r.offset >= watermark[r.partition]!,
          `${r.id} repeated below the watermark ${watermark[r.partition]}`,
        );
      }
      assert_key_order(
        received.map((r) => r.value),
        'after the crash',
      );
      assert.equal(
        s.broker.broker.groups.committed(group, TOPIC, 0)?.offset,
        ends[0],
        'the new member committed everything',
      );
    } finally {
      await s.close();
    }
  },
);

test(
  'orderBy key: a failing handler stops its partition at that message, nothing is committed past it, ' +
    'the retry repeats only it',
  async () => {
    const s = await setup('failure');
    try {
      await s.broker.broker.topics.create('jobs', 2);
      for (let p = 0; p < 2; p++) {
        const batch = Array.from({ length: 60 }, (_, i) => ({
          key: Buffer.from(`k${i % 6}`),
          value: Buffer.from(`k${i % 6}:${Math.floor(i / 6)}`),
          timestamp_ms: Date.now(),
        }));
        await s.broker.broker.partitions.produce('jobs', p, encode_record_batch(batch), -1);
      }
      const consumer = new Consumer(s.cluster(), { ...FAST, groupId: 'failing' });
      const crashes: Array<{ error: unknown; restart: boolean }> = [];
      consumer.on<{ error: unknown; restart: boolean }>(
        consumer.events.CRASH,
        ({ payload }) => void crashes.push(payload),
      );
      const calls = new Map<string, number>();
      const values = new Map<number, string[]>([
        [0, []],
        [1, []],
      ]);
      const FAILED = 20; // partition 0, key k2
      let committed_at_retry: number | undefined = -1;
      const done_0 = new Set<number>();
      let done_past_before_retry = 0;
      await consumer.subscribe({ topic: 'jobs', fromBeginning: true });
      await consumer.run({
        concurrency: 4,
        orderBy: 'key',
        autoCommitThreshold: 1,
        eachMessage: async ({ partition, message }) => {
          const id = `${partition}/${message.offset}`;
          const n = (calls.get(id) ?? 0) + 1;
          calls.set(id, n);
          if (partition === 0 && Number(message.offset) === FAILED) {
            if (n === 1) {
              await sleep(30); // messages of other keys past it finish meanwhile
              throw new Error('transient failure');
            }
            committed_at_retry = s.broker.broker.groups.committed('failing', 'jobs', 0)?.offset;
            done_past_before_retry = [...done_0].filter((o) => o > FAILED).length;
          }
          await sleep(Math.floor(Math.random() * 3));
          values.get(partition)!.push(message.value!.toString());
          if (partition === 0) done_0.add(Number(message.offset));
        },
      });
      await until(() => values.get(0)!.length + values.get(1)!.length >= 120, 'all 120 messages');
      await sleep(300);
      await consumer.disconnect();

      assert.ok(
        committed_at_retry !== -1 && (committed_at_retry ?? 0) <= FAILED,
        `nothing committed past the failed offset before its retry (${committed_at_retry})`,
      );
      assert.ok(done_past_before_retry > 0, 'messages of other keys past the failed one were done before its retry');
      const repeated = [...calls].filter(([, n]) => n > 1).map(([id]) => id);
      assert.deepEqual(
        repeated,
        [`0/${FAILED}`],
        'only the failed message runs again (those of other keys done past it are not repeated)',
      );
      assert.equal(calls.size, 120);
      assert_key_order(values.get(0)!, 'partition 0');
      assert_key_order(values.get(1)!, 'partition 1');
      assert.equal(s.broker.broker.groups.committed('failing', 'jobs', 0)?.offset, 60);
      assert.equal(s.broker.broker.groups.committed('failing', 'jobs', 1)?.offset, 60);
      assert.equal(crashes.length, 1);
      assert.match(String(crashes[0]!.error), /a consumer handler failed: transient failure/);
      assert.equal(crashes[0]!.restart, true);
    } finally {
      await s.close();
    }
  },
);

test(
  'orderBy key: disconnect() waits for the handlers running, commits only what is done below ' +
    'the first unfinished offset',
  async () => {
    const s = await setup('disconnect');
    try {
      await s.broker.broker.topics.create('slow', 1);
      const batch = Array.from({ length: 200 }, (_, i) => ({
        key: Buffer.from(`k${i % 10}`),
        value: Buffer.from(`k${i % 10}:${Math.floor(i / 10)}`),
        timestamp_ms: Date.now(),
      }));
      await s.broker.broker.partitions.produce('slow', 0, encode_record_batch(batch), -1);
      const done = new Set<number>();
      let running = 0;
      const consumer = new Consumer(s.cluster(), { ...FAST, groupId: 'stopping' });
      await consumer.subscribe({ topic: 'slow', fromBeginning: true });
      await consumer.run({
        concurrency: 8,
        orderBy: 'key',
        eachMessage: async ({ message }) => {
          running++;
          await sleep(5 + Math.floor(Math.random() * 30));
          done.add(Number(message.offset));
          running--;
        },
      });
      // Handlers finish out of order: wait for the first 40 offsets, not just any 40.
      const prefix_done = () => {
        let offset = 0;
        while (done.has(offset)) offset++;
        return offset;
      };
      await until(() => prefix_done() >= 40, 'offsets 0-39 done');
      await consumer.disconnect();
      assert.equal(running, 0, 'no handler runs after disconnect()');
      const committed = s.broker.broker.groups.committed('stopping', 'slow', 0)?.offset ?? 0;
      assert.equal(committed, prefix_done(), 'the commit is the first offset not done');
      assert.ok(committed >= 40 && committed < 200, `committed ${committed}`);

      // The next run starts there and repeats only what was done past it.
      const again: number[] = [];
      const next = new Consumer(s.cluster(), { ...FAST, groupId: 'stopping' });
      await next.subscribe({ topic: 'slow', fromBeginning: true });
      await next.run({
        concurrency: 8,
        orderBy: 'key',
        eachMessage: async ({ message }) => void again.push(Number(message.offset)),
      });
      await until(() => again.length >= 200 - committed, 'the rest');
      await sleep(200);
      await next.disconnect();
      assert.deepEqual(
        [...again].sort((a, b) => a - b),
        Array.from({ length: 200 - committed }, (_, i) => committed + i),
      );
    } finally {
      await s.close();
    }
  },
);
