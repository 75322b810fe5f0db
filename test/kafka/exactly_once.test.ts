// Exactly once through kafkajs transactions: a consume-transform-produce loop (its own process,
// test/support/eos_loop.ts, one small transaction per stored batch) over three partitions, killed
// with SIGKILL at random points 20 times, and the broker killed and restarted every fifth time; at
// the end the output topic, read read_committed, holds every input record exactly once.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Kafka, logLevel } from 'kafkajs';
import { start_broker_process, type BrokerProcess } from '../support/broker_process.ts';
import { random_from } from '../../bench/seeded_random.ts';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
const LOOP = path.join(import.meta.dirname, '..', 'support', 'eos_loop.ts');
const INPUT = 'eos-input';
const OUTPUT = 'eos-output';
const KILLS = 20;
/** Every this many kills of the loop, the broker is killed and restarted too. */
const BROKER_KILL_EVERY = 5;
/** Input records, written before the loop starts, in batches of INPUT_BATCH. */
const INPUT_RECORDS = 4_000;
const INPUT_BATCH = 10;
const FIRST_COMMIT_WAIT_MS = 5_000;
const DRAIN_MS_MAX = 60_000;

let broker: BrokerProcess;

before(async () => {
  broker = await start_broker_process({ args: ['--partitions', '3'] });
});

after(async () => {
  await broker?.stop();
});

const kafka = () =>
  new Kafka({
    brokers: [broker.bootstrap],
    clientId: 'eos-test',
    logLevel: logLevel.NOTHING,
    retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 },
  });

function start_loop(): ChildProcess {
  const loop = spawn(
    process.execPath,
    ['--import', 'tsx', LOOP, broker.bootstrap, INPUT, OUTPUT, 'eos-group', 'eos-loop'],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  loop.stdout!.resume();
  return loop;
}

/** Resolves once the loop has committed a transaction (it prints a line for each), or after `wait_ms`. */
function first_commit(loop: ChildProcess, wait_ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, wait_ms);
    loop.stdout!.once('data', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

async function write_input(): Promise<void> {
  const producer = kafka().producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  for (let n = 0; n < INPUT_RECORDS; n += INPUT_BATCH) {
    const messages = Array.from({ length: INPUT_BATCH }, (_, i) => ({ key: `k${n + i}`, value: `in-${n + i}` }));
    await producer.send({ topic: INPUT, acks: -1, messages });
  }
  await producer.disconnect();
}

/** `partition:offset` of every record of `topic` (values of the output, positions of the input). */
async function read_all(topic: string, read_uncommitted: boolean, positions: boolean, count: number, wait_ms: number) {
  const consumer = kafka().consumer({
    groupId: `eos-reader-${topic}-${Date.now()}`,
    readUncommitted: read_uncommitted,
  });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const seen: string[] = [];
  await consumer.run({
    eachMessage: async ({ partition, message }) =>
      void seen.push(positions ? `${partition}:${message.offset}` : message.value!.toString()),
  });
  const deadline = Date.now() + wait_ms;
  while (seen.length < count && Date.now() < deadline) await sleep(100);
  await sleep(500);
  await consumer.disconnect();
  return seen;
}

test('a transform loop killed 20 times, the broker 4 times: every input once in the output', async (t) => {
  const admin = kafka().admin();
  await admin.connect();
  await admin.createTopics({ topics: [INPUT, OUTPUT].map((topic) => ({ topic, numPartitions: 3 })) });
  await admin.disconnect();
  await write_input();
  const random = random_from(20261206);
  for (let kill_n = 1; kill_n <= KILLS; kill_n++) {
    const loop = start_loop();
    await first_commit(loop, FIRST_COMMIT_WAIT_MS);
    await sleep(Math.floor(random() * 300)); // somewhere in the transactions that follow
    await kill(loop);
    if (kill_n % BROKER_KILL_EVERY === 0) {
      const data_dir = broker.data_dir;
      await broker.kill();
      broker = await start_broker_process({ data_dir, args: ['--partitions', '3'] });
    }
  }
  const last = start_loop();
  try {
    const input = await read_all(INPUT, true, true, 0, 3_000);
    const output = await read_all(OUTPUT, false, false, input.length, DRAIN_MS_MAX);
    const counts = new Map<string, number>();
    for (const value of output) counts.set(value, (counts.get(value) ?? 0) + 1);
    assert.equal(input.length, INPUT_RECORDS);
    assert.deepEqual(
      [...counts].filter(([, n]) => n > 1).map(([v]) => v),
      [],
      'no input record twice in the output',
    );
    assert.deepEqual(
      input.filter((p) => !counts.has(p)),
      [],
      'every input record in the output',
    );
    assert.equal(counts.size, input.length, 'nothing in the output that is not an input record');
    // What the kills cut short: records of transactions that were aborted, in the topic but not read.
    const written = await read_all(OUTPUT, true, false, 0, 2_000);
    t.diagnostic(
      `${input.length} input records; ${written.length - output.length} output records aborted by the kills`,
    );
  } finally {
    await kill(last);
  }
});
