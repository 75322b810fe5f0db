// The queue model against a real broker process: share groups through the SDK's queue consumer
// (ShareGroupHeartbeat, ShareFetch, ShareAcknowledge). Competing consumers, a consumer killed
// with records in flight, a poison message dead-lettered with its origin, and a broker killed with
// kill -9 while consumers work.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { new_data_dir, start_broker_process, type BrokerProcess } from './support/broker_process.ts';
import { Sluice, type QueueConsumer } from '../src/sdk/index.ts';
import { SLUICE_CLI } from './support/cli.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const LOCK_MS = 1_500;
const DELIVERY_LIMIT = 3;
const SHARE_CONFIG = {
  shareGroups: {
    recordLockDurationMs: LOCK_MS,
    deliveryCountLimit: DELIVERY_LIMIT,
    retryBackoffMs: [100],
    sessionTimeoutMs: 3_000,
    heartbeatIntervalMs: 300,
  },
};
const WAIT_MS_MAX = 60_000;

let data_dir: string;
let config_file: string;
let broker: BrokerProcess;

before(async () => {
  data_dir = new_data_dir('queues');
  config_file = path.join(data_dir, 'sluice.json');
  fs.writeFileSync(config_file, JSON.stringify(SHARE_CONFIG));
  broker = await start_broker_process({ data_dir: path.join(data_dir, 'data'), args: ['--config', config_file] });
});

after(async () => {
  await broker?.stop();
  fs.rmSync(data_dir, { recursive: true, force: true });
});

const client = () =>
  new Sluice({
    brokers: [broker.bootstrap],
    clientId: 'queue-test',
    retry: { retries: 20, initialRetryTime: 100, maxRetryTime: 1_000 },
  });

async function until(condition: () => boolean, what: string, wait_ms = WAIT_MS_MAX): Promise<void> {
  const deadline = Date.now() + wait_ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function create_and_fill(topic: string, count: number, value = (i: number) => `${topic}-${i}`): Promise<void> {
  const sluice = client();
  const admin = sluice.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
  await admin.disconnect();
  const producer = sluice.producer();
  await producer.connect();
  for (let i = 0; i < count; i += 1000) {
    await producer.send({
      topic,
      messages: Array.from({ length: Math.min(1000, count - i) }, (_, j) => ({
        key: `k${(i + j) % 10}`,
        value: value(i + j),
      })),
    });
  }
  await producer.disconnect();
}

test('four queue consumers on one partition share 10,000 messages; each is accepted exactly once', async () => {
  await create_and_fill('shared', 10_000);
  const handled = new Map<string, number>();
  const per_consumer = [0, 0, 0, 0];
  const consumers: QueueConsumer[] = [];
  for (let c = 0; c < 4; c++) {
    const queue = client().queueConsumer({ groupId: 'sharers', maxRecords: 200 });
    await queue.subscribe({ topics: ['shared'] });
    await queue.run({
      concurrency: 4,
      eachMessage: async ({ message, deliveryCount }) => {
        assert.equal(deliveryCount, 1);
        const value = message.value!.toString();
        handled.set(value, (handled.get(value) ?? 0) + 1);
        per_consumer[c]!++;
      },
    });
    consumers.push(queue);
  }
  await until(() => handled.size === 10_000, '10,000 messages handled');
  await Promise.all(consumers.map((q) => q.disconnect()));
  assert.deepEqual(
    [...handled.values()].filter((n) => n !== 1),
    [],
    'no message handled twice',
  );
  assert.ok(
    per_consumer.every((n) => n > 0),
    `every consumer got work: ${per_consumer.join(', ')}`,
  );
  // Everything was accepted: a new member of the group finds nothing.
  const late = client().queueConsumer({ groupId: 'sharers', maxWaitTimeInMs: 100 });
  let extra = 0;
  await late.subscribe({ topics: ['shared'] });
  await late.run({ eachMessage: async () => void extra++ });
  await new Promise((resolve) => setTimeout(resolve, 500));
  await late.disconnect();
  assert.equal(extra, 0);
});

test('a consumer killed with messages in flight: they reach another consumer after the lock timeout', async () => {
  await create_and_fill('orphans', 200);
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(ROOT, 'test', 'support', 'queue_consumer_process.ts'),
      broker.bootstrap,
      'rescuers',
      'orphans',
      '50',
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await until(() => (output.match(/^A /gm) ?? []).length === 50, 'the doomed consumer holding 50 records');
  const orphaned = new Set((output.match(/^A (\d+)$/gm) ?? []).map((line) => Number(line.slice(2))));
  child.kill('SIGKILL');
  await exited;
  const killed_at = Date.now();

  const received = new Map<number, { deliveries: number; at: number }>();
  const queue = client().queueConsumer({ groupId: 'rescuers', maxWaitTimeInMs: 100 });
  await queue.subscribe({ topics: ['orphans'] });
  await queue.run({
    concurrency: 8,
    eachMessage: async ({ message, deliveryCount }) =>
      void received.set(Number(message.offset), { deliveries: deliveryCount, at: Date.now() }),
  });
  await until(() => received.size === 200, 'all 200 messages');
  await queue.disconnect();
  for (const offset of orphaned) {
    const got = received.get(offset)!;
    assert.equal(got.deliveries, 2, `offset ${offset} is a second delivery`);
    assert.ok(
      got.at - killed_at >= LOCK_MS - 1_000,
      `offset ${offset} came back after the lock timeout (${got.at - killed_at} ms after the kill)`,
    );
  }
  assert.equal([...received.values()].filter((r) => r.deliveries === 1).length, 150);
});

/** A share group whose handler accepts every message but the poison, which it always fails. */
async function run_failing_handler(): Promise<{ attempts: number[]; accepted: string[]; queue: QueueConsumer }> {
  const attempts: number[] = [];
  const accepted: string[] = [];
  const queue = client().queueConsumer({ groupId: 'payers', maxWaitTimeInMs: 100 });
  await queue.subscribe({ topics: ['payments'] });
  await queue.run({
    eachMessage: async ({ message, deliveryCount }) => {
      if (message.value!.toString() === 'poison') {
        attempts.push(deliveryCount);
        throw new Error(`card declined (attempt ${deliveryCount})`);
      }
      accepted.push(message.value!.toString());
    },
  });
  return { attempts, accepted, queue };
}

/** The dead letters of payments.payers.dlq, read with a broadcast consumer once there is one. */
async function read_dead_letter(): Promise<Array<{ value: string; headers: Record<string, string> }>> {
  const letters: Array<{ value: string; headers: Record<string, string> }> = [];
  const sluice = client();
  const reader = sluice.consumer({ maxWaitTimeInMs: 100 });
  let dlq_exists = false;
  const admin = sluice.admin();
  await admin.connect();
  for (let i = 0; i < 200 && !dlq_exists; i++) {
    dlq_exists = (await admin.listTopics()).includes('payments.payers.dlq');
    if (!dlq_exists) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await admin.disconnect();
  assert.ok(dlq_exists, 'payments.payers.dlq exists');
  await reader.subscribe({ topics: ['payments.payers.dlq'], fromBeginning: true });
  await reader.run({
    eachMessage: async ({ message }) => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(message.headers ?? {})) headers[k] = String(v);
      letters.push({ value: message.value!.toString(), headers });
    },
  });
  await until(() => letters.length === 1, 'the dead letter', 20_000);
  await reader.disconnect();
  return letters;
}

/** The CLI lists, peeks and redrives the dead letter (once: a second redrive sends nothing), then purges. */
async function assert_cli_redrives_once(): Promise<void> {
  const listed = JSON.parse((await cli(['dlq', 'list', '--json'])).stdout) as Array<{
    topic: string;
    messages: number;
    origin: string;
    group: string;
  }>;
  assert.deepEqual(
    listed.find((r) => r.topic === 'payments.payers.dlq'),
    { topic: 'payments.payers.dlq', origin: 'payments', group: 'payers', messages: 1 },
  );
  const peeked = (await cli(['dlq', 'peek', 'payments.payers.dlq', '--json'])).stdout
    .trim()
    .split('\n')
    .map(
      (line) =>
        JSON.parse(line) as { value: string; origin: { topic: string; offset: number }; delivery_count: number },
    );
  assert.deepEqual(
    peeked.map((p) => [p.value, p.origin.topic, p.origin.offset, p.delivery_count]),
    [['poison', 'payments', 2, 3]],
  );
  const refused = await cli(['dlq', 'redrive', 'payments.payers.dlq', '--all', '--to', 'no-such-topic'], false);
  assert.notEqual(refused.code, 0);
  assert.match(refused.stderr, /redrive to no-such-topic: the topic does not exist/);
  const redrive = JSON.parse((await cli(['dlq', 'redrive', 'payments.payers.dlq', '--all', '--json'])).stdout) as {
    redriven: number;
  };
  assert.equal(redrive.redriven, 1);
  const again = JSON.parse((await cli(['dlq', 'redrive', 'payments.payers.dlq', '--all', '--json'])).stdout) as {
    redriven: number;
    skipped_already_redriven: number;
  };
  assert.deepEqual([again.redriven, again.skipped_already_redriven], [0, 1], 'de-duplicated by the audit topic');
  const origin = (await cli(['consume', 'payments', '--from-beginning', '--json', '--timeout-ms', '1500'])).stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { offset: number; value: string });
  assert.deepEqual(
    origin.map((m) => m.value),
    ['payment-0', 'payment-1', 'poison', 'payment-3', 'payment-4', 'payment-5', 'poison'],
    'the dead letter is back in its origin topic, once',
  );
  const purged = JSON.parse((await cli(['topic', 'purge', 'payments', '--json'])).stdout) as { messages: number };
  assert.equal(purged.messages, 7);
  const after_purge = (
    await cli(['consume', 'payments', '--from-beginning', '--json', '--timeout-ms', '500'])
  ).stdout.trim();
  assert.equal(after_purge, '');
}

test('a handler that always fails: dead-lettered at the limit with origin; CLI lists, peeks, redrives', async () => {
  await create_and_fill('payments', 6, (i) => (i === 2 ? 'poison' : `payment-${i}`));
  const { attempts, accepted, queue } = await run_failing_handler();
  await until(() => attempts.length === DELIVERY_LIMIT, `${DELIVERY_LIMIT} attempts`, 20_000);
  const letters = await read_dead_letter();
  await queue.disconnect();
  assert.deepEqual(attempts, [1, 2, 3]);
  assert.deepEqual(accepted.sort(), ['payment-0', 'payment-1', 'payment-3', 'payment-4', 'payment-5']);
  const [letter] = letters;
  assert.equal(letter!.value, 'poison');
  assert.equal(letter!.headers['sluice-dlq-topic'], 'payments');
  assert.equal(letter!.headers['sluice-dlq-partition'], '0');
  assert.equal(letter!.headers['sluice-dlq-offset'], '2');
  assert.equal(letter!.headers['sluice-dlq-group'], 'payers');
  assert.equal(letter!.headers['sluice-dlq-delivery-count'], '3');
  assert.match(
    letter!.headers['sluice-dlq-reason']!,
    /delivery limit 3 reached; last failure: card declined \(attempt 3\)/,
  );
  assert.ok(letter!.headers['message-id'], 'the original headers travel with it');

  await assert_cli_redrives_once();
});

/** Runs `sluice ARGS --bootstrap B`; by default asserts a clean exit. */
async function cli(
  args: string[],
  must_succeed = true,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const result = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [...SLUICE_CLI, ...args, '--bootstrap', broker.bootstrap], {
      cwd: ROOT,
      timeout: 30_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
  if (must_succeed)
    assert.equal(result.code, 0, `sluice ${args.join(' ')} exited with ${result.code}\n${result.stderr}`);
  return result;
}

test('kill -9 of the broker under queue consumers: nothing lost, redeliveries within what was in flight', async () => {
  const MAX_RECORDS = 100;
  const COUNT = 4_000;
  await create_and_fill('durable-jobs', COUNT);
  const handled = new Map<string, number>();
  const consumers: QueueConsumer[] = [];
  for (let c = 0; c < 2; c++) {
    const queue = client().queueConsumer({ groupId: 'survivors', maxRecords: MAX_RECORDS, maxWaitTimeInMs: 100 });
    await queue.subscribe({ topics: ['durable-jobs'] });
    await queue.run({
      concurrency: 4,
      eachMessage: async ({ message }) => {
        await new Promise((resolve) => setTimeout(resolve, 1));
        const value = message.value!.toString();
        handled.set(value, (handled.get(value) ?? 0) + 1);
      },
    });
    consumers.push(queue);
  }
  await until(() => handled.size >= 1_000, '1,000 handled before the crash');
  const port = broker.port;
  await broker.kill();
  broker = await start_broker_process({ data_dir: path.join(data_dir, 'data'), port, args: ['--config', config_file] });
  await until(() => handled.size === COUNT, `all ${COUNT} handled after the restart`);
  await Promise.all(consumers.map((q) => q.disconnect()));
  const repeated = [...handled.values()].filter((n) => n > 1).length;
  assert.ok(
    repeated <= 2 * MAX_RECORDS,
    `${repeated} messages handled again: at most the ${2 * MAX_RECORDS} that two members can hold`,
  );
});

test('overflow reject: producers get a retriable error naming the cap; nothing accepted is lost', async () => {
  const sluice = new Sluice({
    brokers: [broker.bootstrap],
    clientId: 'overflow-test',
    retry: { retries: 1, initialRetryTime: 50 },
  });
  const admin = sluice.admin();
  await admin.connect();
  await admin.createTopics({
    topics: [{ topic: 'bounded', numPartitions: 1, configEntries: [{ name: 'sluice.max.messages', value: '100' }] }],
  });
  await admin.disconnect();
  const producer = sluice.producer();
  await producer.connect();
  await producer.send({ topic: 'bounded', messages: Array.from({ length: 100 }, (_, i) => ({ value: `m${i}` })) });
  await assert.rejects(
    producer.send({ topic: 'bounded', messages: [{ value: 'one too many' }] }),
    (error: Error & { type?: string; retriable?: boolean }) => {
      assert.equal(error.type, 'THROTTLING_QUOTA_EXCEEDED');
      assert.equal(error.retriable, true);
      assert.match(error.message, /bounded-0 is full: 100 messages wait \(sluice.max.messages=100\)/);
      return true;
    },
  );
  await producer.disconnect();
  const received: string[] = [];
  const queue = client().queueConsumer({ groupId: 'bounded-readers', maxWaitTimeInMs: 100 });
  await queue.subscribe({ topics: ['bounded'] });
  await queue.run({ eachMessage: async ({ message }) => void received.push(message.value!.toString()) });
  await until(() => received.length === 100, 'the 100 accepted messages');
  await queue.disconnect();
  assert.deepEqual(received.sort(), Array.from({ length: 100 }, (_, i) => `m${i}`).sort());
});

test('export, purge, import restores a topic (keys, headers, timestamps); a second import adds nothing', async () => {
  const sluice = client();
  const admin = sluice.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: 'ledger', numPartitions: 2 }] });
  await admin.disconnect();
  const producer = sluice.producer();
  await producer.connect();
  const sent = Array.from({ length: 300 }, (_, i) => ({
    key: `acct-${i % 7}`,
    value: `entry-${i}`,
    timestamp: 1_700_000_000_000 + i,
    headers: { origin: `batch-${i % 3}` },
  }));
  await producer.send({ topic: 'ledger', messages: sent });
  await producer.disconnect();
  const file = path.join(data_dir, 'ledger.jsonl');
  const exported = JSON.parse((await cli(['export', 'ledger', '--out', file, '--json'])).stdout) as {
    messages: number;
  };
  assert.equal(exported.messages, 300);
  assert.notEqual(
    (await cli(['export', 'ledger', '--out', file], false)).code,
    0,
    'an existing export is never overwritten',
  );
  assert.equal(
    (JSON.parse((await cli(['topic', 'purge', 'ledger', '--json'])).stdout) as { messages: number }).messages,
    300,
  );
  const imported = JSON.parse((await cli(['import', 'ledger', '--in', file, '--json'])).stdout) as { imported: number };
  assert.equal(imported.imported, 300);
  const again = JSON.parse((await cli(['import', 'ledger', '--in', file, '--json'])).stdout) as {
    imported: number;
    skipped_already_present: number;
  };
  assert.deepEqual([again.imported, again.skipped_already_present], [0, 300]);
  const missing = await cli(['import', 'no-such-topic', '--in', file], false);
  assert.match(missing.stderr, /topic no-such-topic does not exist/);

  const got: Array<{ key: string; value: string; timestamp: string; origin: string; partition: number }> = [];
  const reader = client().consumer({ maxWaitTimeInMs: 50 });
  await reader.subscribe({ topics: ['ledger'], fromBeginning: true });
  await reader.run({
    eachMessage: async ({ partition, message }) =>
      void got.push({
        partition,
        key: message.key!.toString(),
        value: message.value!.toString(),
        timestamp: message.timestamp,
        origin: String(message.headers!.origin),
      }),
  });
  await until(() => got.length >= 300, '300 restored messages');
  await new Promise((resolve) => setTimeout(resolve, 200));
  await reader.disconnect();
  assert.equal(got.length, 300, 'no duplicates');
  const by_value = new Map(got.map((m) => [m.value, m]));
  for (const [i, m] of sent.entries()) {
    const restored = by_value.get(m.value)!;
    assert.equal(restored.key, m.key);
    assert.equal(restored.timestamp, String(1_700_000_000_000 + i));
    assert.equal(restored.origin, m.headers.origin);
  }
});

test('sluice.share.ordering=key: 4 consumers, failures retried; each key in order, never twice at once', async () => {
  const { Connection } = await import('../src/protocol/kafka/client_connection.ts');
  const { INCREMENTAL_ALTER_CONFIGS } = await import('../src/protocol/kafka/messages/44_incremental_alter_configs.ts');
  const connection = await Connection.connect('127.0.0.1', broker.port);
  const altered = await connection.call(INCREMENTAL_ALTER_CONFIGS, 1, {
    resources: [
      {
        resource_type: 32,
        resource_name: 'ordered-workers',
        configs: [
          { name: 'sluice.share.ordering', config_operation: 0, value: 'key' },
          { name: 'sluice.share.retry.backoff.ms', config_operation: 0, value: '20' },
          { name: 'share.delivery.count.limit', config_operation: 0, value: '50' },
        ],
      },
    ],
    validate_only: false,
  });
  connection.close();
  assert.equal((altered.responses as Array<{ error_code: number }>)[0]!.error_code, 0);
  const KEYS = 10;
  const PER_KEY = 100;
  await create_and_fill('ordered-jobs', KEYS * PER_KEY, (i) => `${i % KEYS}:${Math.floor(i / KEYS)}`);
  const next = new Array<number>(KEYS).fill(0); // the sequence each key must handle next
  const running = new Array<number>(KEYS).fill(0);
  const problems: string[] = [];
  let handled = 0;
  let failures = 0;
  const consumers: QueueConsumer[] = [];
  for (let c = 0; c < 4; c++) {
    const queue = client().queueConsumer({ groupId: 'ordered-workers', maxRecords: 50, maxWaitTimeInMs: 50 });
    await queue.subscribe({ topics: ['ordered-jobs'] });
    await queue.run({
      concurrency: 8,
      eachMessage: async ({ message }) => {
        const [key, seq] = message.value!.toString().split(':').map(Number) as [number, number];
        if (++running[key]! > 1) problems.push(`key ${key} in flight twice`);
        try {
          await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 3)));
          if (seq !== next[key]) problems.push(`key ${key}: got ${seq}, expected ${next[key]}`);
          if (Math.random() < 0.1) {
            failures++;
            throw new Error('transient');
          }
          next[key] = seq + 1;
          handled++;
        } finally {
          running[key]!--;
        }
      },
    });
    consumers.push(queue);
  }
  await until(() => handled === KEYS * PER_KEY, 'every job handled');
  await Promise.all(consumers.map((q) => q.disconnect()));
  assert.deepEqual(problems, []);
  assert.ok(failures > 0, 'some handlers failed and were retried');
});
