// Log compaction against a broker process (cleanup.policy=compact): a record without a key is
// refused (INVALID_RECORD) and the broker goes on; 1,000,000 records over 10,000 keys, with
// tombstones, are compacted to each live key's latest value; the broker is killed (kill -9) ten
// times while the cleaner works on new updates, and after every restart each key reads as a
// subsequence of what was written to it that ends with its latest write; in the end, with every
// segment closed, exactly the latest value of each live key is left and no deleted key. The CLI's
// topic describe and the metrics show the cleaner's progress.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';
import { SLUICE_CLI } from '../support/cli.ts';
import { new_data_dir, start_broker_process, type BrokerProcess } from '../support/broker_process.ts';
import { free_port } from '../support/etcd.ts';
import { Sluice } from '../../src/sdk/index.ts';

const TOPIC = 'kv';
const KEYS = 10_000;
const FIRST_RECORDS = 1_000_000;
const ROUND_RECORDS = 20_000;
const KILLS = 10;
/** One record in this many is a tombstone. */
const TOMBSTONE_EVERY = 40;

let data_dir: string;
let port: number;
let broker: BrokerProcess;
/** Each key's writes in order (null: a tombstone). */
const written = new Map<string, Array<string | null>>();

async function start(): Promise<BrokerProcess> {
  return start_broker_process({ data_dir, port, args: ['--cleaner-interval-ms', '200', '--log-level', 'info'] });
}

before(async () => {
  data_dir = new_data_dir('compaction');
  port = await free_port();
  broker = await start();
});

after(async () => {
  await broker.stop();
});

function sluice(): Sluice {
  return new Sluice({ brokers: [broker.bootstrap], clientId: 'compaction' });
}

/** Writes `count` records over the keys (a tombstone now and then), in sends of 1,000. */
async function write(count: number, round: number): Promise<void> {
  const producer = sluice().producer();
  await producer.connect();
  try {
    for (let sent = 0; sent < count; sent += 1_000) {
      const messages = Array.from({ length: Math.min(1_000, count - sent) }, (_, i) => {
        const n = sent + i;
        const key = `key-${(n * 7919 + round * 31) % KEYS}`;
        const value = n % TOMBSTONE_EVERY === 0 ? null : `r${round}-${n}`;
        const list = written.get(key) ?? [];
        list.push(value);
        written.set(key, list);
        return { key, value };
      });
      await producer.send({ topic: TOPIC, acks: -1, messages });
    }
  } finally {
    await producer.disconnect();
  }
}

/** Every record of the topic, by key in offset order, read up to its end. */
async function read_back(): Promise<Map<string, Array<string | null>>> {
  const client = sluice();
  const admin = client.admin();
  await admin.connect();
  const [end] = await admin.fetchTopicOffsets(TOPIC);
  await admin.disconnect();
  const last = Number(end!.high) - 1;
  const read = new Map<string, Array<string | null>>();
  const consumer = client.consumer({ maxWaitTimeInMs: 100 });
  let done!: () => void;
  const reached = new Promise<void>((resolve) => (done = resolve));
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
  await consumer.run({
    eachBatch: async ({ batch }) => {
      for (const m of batch.messages) {
        const key = m.key!.toString();
        const list = read.get(key) ?? [];
        list.push(m.value === null ? null : m.value.toString());
        read.set(key, list);
        if (Number(m.offset) >= last) done();
      }
    },
  });
  try {
    await reached;
  } finally {
    await consumer.disconnect();
  }
  return read;
}

/** Each key's reads are a subsequence of its writes that ends with its latest write (or nothing, once deleted). */
function check_consistent(read: Map<string, Array<string | null>>, where: string): void {
  for (const [key, writes] of written) {
    const got = read.get(key) ?? [];
    let at = 0;
    for (const value of got) {
      while (at < writes.length && writes[at] !== value) at++;
      assert.ok(at < writes.length, `${where}: ${key} read ${value} out of order or never written`);
      at++;
    }
    const latest = writes.at(-1);
    if (got.length > 0 || latest !== null) assert.equal(got.at(-1), latest, `${where}: ${key} lost its latest write`);
  }
}

test('a record without a key is refused with INVALID_RECORD; the broker goes on', async () => {
  const kafka = new Kafka({ clientId: 'keyless', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const configs = [
    { name: 'cleanup.policy', value: 'compact' },
    { name: 'segment.bytes', value: String(1024 * 1024) },
    { name: 'min.cleanable.dirty.ratio', value: '0.1' },
    { name: 'delete.retention.ms', value: '0' },
  ];
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 1, configEntries: configs }] });
  await admin.disconnect();
  const producer = kafka.producer({ retry: { retries: 0 } });
  await producer.connect();
  await assert.rejects(producer.send({ topic: TOPIC, messages: [{ value: 'no key' }] }), { type: 'INVALID_RECORD' });
  await producer.send({ topic: TOPIC, messages: [{ key: 'first', value: 'kept' }] });
  await producer.disconnect();
  written.set('first', ['kept']);
});

test(
  '1,000,000 records over 10,000 keys, compacted through ten kill -9s: the latest value of each live key',
  { timeout: 240_000 },
  async () => {
    await write(FIRST_RECORDS, 0);
    let compacted_while_killed = 0;
    for (let round = 1; round <= KILLS; round++) {
      await write(ROUND_RECORDS, round);
      await new Promise((resolve) => setTimeout(resolve, 100 + Math.random() * 500));
      compacted_while_killed += (broker.output().match(/segment compacted/g) ?? []).length;
      await broker.kill();
      broker = await start();
      check_consistent(await read_back(), `after kill ${round}`);
    }
    assert.ok(compacted_while_killed > 0, 'the cleaner swapped segments in before some kills');
    // Every segment closed: a segment.ms of 1 rolls at the next append.
    const admin = sluice().admin();
    await admin.connect();
    await admin.incrementalAlterConfigs({
      resources: [{ type: 2, name: TOPIC, configEntries: [{ name: 'segment.ms', value: '1', operation: 'SET' }] }],
    });
    await admin.disconnect();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const producer = sluice().producer();
    await producer.connect();
    await producer.send({ topic: TOPIC, acks: -1, messages: [{ key: 'roll', value: 'last' }] });
    await producer.disconnect();
    written.set('roll', ['last']);
    const deadline = Date.now() + 60_000;
    let read = await read_back();
    const wrong = () =>
      [...written].filter(([key, writes]) => {
        const latest = writes.at(-1);
        return latest === null ? read.has(key) : read.get(key)?.length !== 1 || read.get(key)![0] !== latest;
      });
    while (wrong().length > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      read = await read_back();
    }
    check_consistent(read, 'at the end');
    const left = wrong().map(([key, writes]) => `${key}: wrote …${writes.slice(-3)}, read ${read.get(key)}`);
    assert.deepEqual(left.slice(0, 5), [], `${left.length} keys are not exactly their latest value`);
  },
);

test('sluice topic describe and the metrics show the dirty ratio and what the cleaner did', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [
    ...SLUICE_CLI,
    'topic',
    'describe',
    TOPIC,
    '--json',
    '--bootstrap',
    broker.bootstrap,
  ]);
  const [partition] = JSON.parse(stdout).partitions;
  assert.ok(partition.compaction, stdout);
  assert.ok(partition.compaction.dirtyRatio >= 0 && partition.compaction.dirtyRatio <= 1);
  assert.ok(partition.compaction.firstDirtyOffset > 0);
  const metrics = await (await fetch(`http://${broker.http}/metrics`)).text();
  assert.match(metrics, /sluice_log_cleaner_dirty_ratio\{topic="kv",partition="0"\} [\d.]+/);
  assert.match(metrics, /sluice_log_cleaner_bytes_total\{topic="kv",partition="0",direction="read"\} \d+/);
});
