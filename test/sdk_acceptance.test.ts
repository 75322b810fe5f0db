// Acceptance tests of the SDK against a real broker process (bin/sluice.js as a child process):
// interop both ways with kafkajs and kcat, an idempotent producer sending through a SIGKILL and a
// restart of the broker, and bad input that must end quickly with a typed error. Each test runs its
// own broker on a fresh data directory; every wait is bounded. Needs kcat on the PATH for the
// interop test (skipped with the reason elsewhere, never under CI).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { Kafka, logLevel } from 'kafkajs';
import { new_data_dir, start_broker_process, type BrokerProcess } from './support/broker_process.ts';
import { KafkaProtocolError, Sluice, SluiceError } from '../src/sdk/index.ts';
import type { KafkaMessage } from '../src/sdk/records.ts';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
const KCAT = process.env.KCAT ?? 'kcat';
/** Every kcat run is killed after this long. */
const RUN_TIMEOUT_MS = 30_000;
/** Waits for consumers to receive what was produced. */
const WAIT_MS = 30_000;
/**
 * How long a bad-input case may take to settle with its typed error. A refused connection is retried
 * with the default backoff (5 retries from 100 ms: about 3 s), the other cases answer at once.
 */
const SETTLE_MS = 6_000;
const KCAT_COMMON = ['-X', 'socket.timeout.ms=10000'];

function kcat_missing(): string | null {
  const probe = spawnSync(KCAT, ['-V'], { encoding: 'utf8', timeout: 10_000 });
  if (probe.error) {
    return `kcat is not available (${probe.error.message}); install it (Debian/Ubuntu: apt-get install kcat)`;
  }
  if (probe.status !== 0) return `\`${KCAT} -V\` exited with ${probe.status}`;
  return null;
}
const no_kcat = kcat_missing();
if (no_kcat && process.env.CI === 'true') throw new Error(`SDK acceptance tests cannot run under CI: ${no_kcat}`);

/** Runs kcat with `input` on its standard input, killed after RUN_TIMEOUT_MS; asserts a clean exit. */
function kcat(args: string[], input = ''): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(KCAT, args, {
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: RUN_TIMEOUT_MS,
      killSignal: 'SIGKILL',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
    child.once('error', reject);
    child.once('close', (code, signal) => {
      if (signal !== null || code !== 0) {
        reject(new Error(`kcat ${args.join(' ')} ended with ${signal ?? code}\n${stderr}`));
      } else resolve(stdout);
    });
  });
}

/** A broker on a fresh data directory, killed and removed afterwards whatever happens. */
async function with_broker(args: string[], work: (broker: BrokerProcess) => Promise<void>): Promise<void> {
  const data_dir = new_data_dir('sdk-acceptance');
  let broker: BrokerProcess | null = null;
  try {
    broker = await start_broker_process({ data_dir, args });
    await work(broker);
    assert.equal(await broker.stop(), 0, `broker did not stop cleanly:\n${broker.output()}`);
  } finally {
    await broker?.kill();
    fs.rmSync(data_dir, { recursive: true, force: true });
  }
}

async function until(condition: () => boolean, what: () => string, ms = WAIT_MS): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Races `promise` against `ms`: a hang fails the test instead of stalling it. */
function bounded<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Asserts that `work` rejects within SETTLE_MS with an error passing `check`; returns the time taken. */
async function rejects_quickly(
  what: string,
  work: () => Promise<unknown>,
  check: (error: unknown) => void,
): Promise<number> {
  const started = Date.now();
  const outcome = await bounded(
    work().then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    ),
    SETTLE_MS,
    what,
  );
  const elapsed = Date.now() - started;
  console.log(`${what}: settled in ${elapsed} ms`);
  assert.ok(
    !outcome.ok,
    `${what} should have failed, resolved with ${JSON.stringify(outcome.ok ? outcome.value : null)}`,
  );
  check(outcome.error);
  return elapsed;
}

function header(message: KafkaMessage, name: string): string | undefined {
  const value = message.headers[name];
  if (value === undefined) return undefined;
  return (Array.isArray(value) ? value[0] : value)!.toString();
}

/** A port nothing listens on (bound, then closed again). */
async function closed_port(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

// -------------------------------------------------------------------------- 1. interop

/** The SDK produces `count` messages to 'from-sdk': keys, headers, gzip, several sends sharing batches. */
async function produce_with_sdk(sluice: Sluice, count: number): Promise<Map<string, { key: string; trace: string }>> {
  const expected = new Map<string, { key: string; trace: string }>();
  const producer = sluice.producer({ compression: 'gzip' });
  await producer.connect();
  for (let start = 0; start < count; start += 100) {
    const messages = [];
    for (let i = start; i < start + 100; i++) {
      const key = `key-${i % 17}`;
      const value = `sdk-value-${i} ${'x'.repeat(i % 50)}`;
      expected.set(value, { key, trace: `trace-${i}` });
      messages.push({ key, value, headers: { trace: `trace-${i}`, source: Buffer.from('sdk') } });
    }
    await producer.send({ topic: 'from-sdk', messages });
  }
  await producer.disconnect();
  return expected;
}

interface KafkajsSeen {
  key: string;
  value: string;
  trace: string;
  source: string;
  id: string;
  partition: number;
}

/** kafkajs reads 'from-sdk' in a consumer group until it has `count` messages (and a moment longer). */
async function read_with_kafkajs(kafka: Kafka, count: number): Promise<KafkajsSeen[]> {
  const kjs_seen: KafkajsSeen[] = [];
  const kjs_consumer = kafka.consumer({
    groupId: 'kafkajs-readers',
    sessionTimeout: 10_000,
    heartbeatInterval: 500,
    maxWaitTimeInMs: 200,
  });
  try {
    await kjs_consumer.connect();
    await kjs_consumer.subscribe({ topic: 'from-sdk', fromBeginning: true });
    await kjs_consumer.run({
      eachMessage: async ({ partition, message }) => {
        kjs_seen.push({
          key: message.key!.toString(),
          value: message.value!.toString(),
          trace: String(message.headers?.trace),
          source: String(message.headers?.source),
          id: String(message.headers?.['message-id']),
          partition,
        });
      },
    });
    await until(
      () => kjs_seen.length >= count,
      () => `kafkajs to receive ${count} messages (has ${kjs_seen.length})`,
    );
    await new Promise((resolve) => setTimeout(resolve, 300)); // anything beyond COUNT would show up now
  } finally {
    await kjs_consumer.disconnect();
  }
  return kjs_seen;
}

/** kafkajs produces 400 messages to 'from-kafkajs', kcat 300 to 'from-kcat'; returns value -> key. */
async function produce_with_kafkajs_and_kcat(kafka: Kafka, bootstrap: string): Promise<Map<string, string>> {
  const kjs_producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await kjs_producer.connect();
  const incoming = new Map<string, string>(); // value -> key
  for (let start = 0; start < 400; start += 100) {
    const messages = [];
    for (let i = start; i < start + 100; i++) {
      messages.push({ key: `kjs-key-${i % 7}`, value: `kafkajs-value-${i}` });
      incoming.set(`kafkajs-value-${i}`, `kjs-key-${i % 7}`);
    }
    await kjs_producer.send({ topic: 'from-kafkajs', acks: -1, messages });
  }
  await kjs_producer.disconnect();
  const kcat_input: string[] = [];
  for (let i = 0; i < 300; i++) {
    kcat_input.push(`kcat-key-${i % 5}:kcat-value-${i}`);
    incoming.set(`kcat-value-${i}`, `kcat-key-${i % 5}`);
  }
  const args = ['-b', bootstrap, '-P', '-t', 'from-kcat', '-K', ':', ...KCAT_COMMON, '-X', 'message.timeout.ms=20000'];
  await kcat(args, `${kcat_input.join('\n')}\n`);
  return incoming;
}

/** An SDK consumer group reads 'from-kafkajs' and 'from-kcat' until it has `count` messages. */
async function read_with_sdk_group(
  sluice: Sluice,
  count: number,
): Promise<Array<{ topic: string; key: string; value: string }>> {
  const sdk_seen: Array<{ topic: string; key: string; value: string }> = [];
  const consumer = sluice.consumer({ groupId: 'sdk-readers', maxWaitTimeInMs: 200 });
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: ['from-kafkajs', 'from-kcat'], fromBeginning: true });
    await bounded(
      consumer.run({
        eachMessage: async ({ topic, message }) =>
          void sdk_seen.push({ topic, key: message.key!.toString(), value: message.value!.toString() }),
      }),
      WAIT_MS,
      'consumer.run',
    );
    await until(
      () => sdk_seen.length >= count,
      () => `the SDK group to receive ${count} messages (has ${sdk_seen.length})`,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
  } finally {
    await bounded(consumer.disconnect(), WAIT_MS, 'consumer.disconnect');
  }
  return sdk_seen;
}

test(
  'interop: SDK -> kafkajs group and kcat; kafkajs and kcat -> SDK group',
  { skip: no_kcat ?? false, timeout: 120_000 },
  async () => {
    await with_broker([], async (broker) => {
      const sluice = new Sluice({ brokers: [broker.bootstrap], clientId: 'acceptance' });
      const kafka = new Kafka({
        brokers: [broker.bootstrap],
        clientId: 'acceptance-kafkajs',
        logLevel: logLevel.NOTHING,
        retry: { retries: 10, initialRetryTime: 100 },
      });
      const admin = sluice.admin();
      await admin.connect();
      await admin.createTopics({
        topics: [
          { topic: 'from-sdk', numPartitions: 3 },
          { topic: 'from-kafkajs', numPartitions: 3 },
          { topic: 'from-kcat', numPartitions: 2 },
        ],
      });

      // ---- the SDK produces: keys, headers, gzip, several sends sharing batches
      const COUNT = 600;
      const expected = await produce_with_sdk(sluice, COUNT);

      // kafkajs reads them in a consumer group.
      const kjs_seen = await read_with_kafkajs(kafka, COUNT);
      assert.equal(kjs_seen.length, COUNT, 'kafkajs received each message once');
      assert.equal(new Set(kjs_seen.map((m) => m.value)).size, COUNT, 'no value twice');
      assert.equal(new Set(kjs_seen.map((m) => m.id)).size, COUNT, 'every message has its own message-id header');
      for (const m of kjs_seen) {
        const want = expected.get(m.value);
        assert.ok(want, `unexpected value ${m.value}`);
        assert.equal(m.key, want.key, `key of ${m.value}`);
        assert.equal(m.trace, want.trace, `trace header of ${m.value}`);
        assert.equal(m.source, 'sdk');
        assert.match(m.id, /^[0-9a-f-]{36}$/);
      }
      // The same key always landed in the same partition.
      const partition_of = new Map<string, number>();
      for (const m of kjs_seen) {
        assert.equal(partition_of.get(m.key) ?? m.partition, m.partition, `key ${m.key} in two partitions`);
        partition_of.set(m.key, m.partition);
      }

      // kcat reads them from the beginning.
      const read_args = ['-b', broker.bootstrap, '-C', '-e', '-q', '-o', 'beginning', '-t', 'from-sdk'];
      const kcat_output = await kcat([...read_args, '-f', '%k %s\n', ...KCAT_COMMON]);
      const kcat_lines = kcat_output.split('\n').filter((l) => l !== '');
      assert.equal(kcat_lines.length, COUNT, 'kcat read every message once');
      assert.deepEqual([...kcat_lines].sort(), [...expected].map(([value, { key }]) => `${key} ${value}`).sort());

      // ---- kafkajs and kcat produce; an SDK consumer group reads both topics
      const incoming = await produce_with_kafkajs_and_kcat(kafka, broker.bootstrap);
      const sdk_seen = await read_with_sdk_group(sluice, incoming.size);
      assert.equal(sdk_seen.length, incoming.size, 'the SDK group received each message once');
      assert.equal(sdk_seen.filter((m) => m.topic === 'from-kafkajs').length, 400);
      assert.equal(sdk_seen.filter((m) => m.topic === 'from-kcat').length, 300);
      assert.equal(new Set(sdk_seen.map((m) => m.value)).size, incoming.size, 'no value twice');
      for (const m of sdk_seen) assert.equal(m.key, incoming.get(m.value), `key of ${m.value}`);

      await admin.disconnect();
    });
  },
);

// -------------------------------------------------------------------------- 2. restart

interface ThroughRestart {
  acknowledged: Set<string>;
  failed: Array<{ value: string; error: string }>;
  /** The send index at which the second broker was ready. */
  restarted_at: number;
  /** The longest wait for one send. */
  slowest_ms: number;
}

/**
 * Sends `total` messages to `topic` one by one with an idempotent SDK producer; at send `kill_at`
 * the broker is killed and a second one started on its port and data directory (added to `brokers`).
 */
async function send_through_restart(
  sluice: Sluice,
  topic: string,
  brokers: BrokerProcess[],
  { total, kill_at }: { total: number; kill_at: number },
): Promise<ThroughRestart> {
  const first = brokers[0]!;
  const { port, data_dir } = first;
  const result: ThroughRestart = { acknowledged: new Set(), failed: [], restarted_at: -1, slowest_ms: 0 };
  const producer = sluice.producer({ lingerMs: 0 });
  await producer.connect();
  let restart: Promise<void> | null = null;
  let current = 0;
  for (let i = 0; i < total; i++) {
    current = i;
    const value = `value-${String(i).padStart(5, '0')}`;
    const started = Date.now();
    const sending = producer.send({ topic, messages: [{ key: `key-${i % 23}`, value }] });
    if (i === kill_at) {
      // Crash the broker while this send is on its way (likely written and not yet acknowledged),
      // then bring it back on the same port and data directory while sends keep coming.
      restart = (async () => {
        await new Promise((resolve) => setTimeout(resolve, 1));
        await first.kill();
        await new Promise((resolve) => setTimeout(resolve, 300));
        brokers.push(await start_broker_process({ data_dir, port }));
        result.restarted_at = current;
      })();
    }
    try {
      await bounded(sending, 60_000, `send ${i}`);
      result.acknowledged.add(value);
      result.slowest_ms = Math.max(result.slowest_ms, Date.now() - started);
    } catch (error) {
      if (!(error instanceof SluiceError)) throw error;
      result.failed.push({ value, error: error.message });
    }
  }
  await restart;
  await bounded(producer.disconnect(), WAIT_MS, 'producer.disconnect');
  return result;
}

/** Reads the whole topic back in broadcast mode, up to the end offsets. */
async function read_topic(port: number, topic: string): Promise<Array<{ value: string; id: string | undefined }>> {
  const reader = new Sluice({ brokers: [`127.0.0.1:${port}`], clientId: 'restart-reader' });
  const offsets_admin = reader.admin();
  await offsets_admin.connect();
  const end = (await offsets_admin.fetchTopicOffsets(topic)).reduce((sum, p) => sum + Number(p.high), 0);
  await offsets_admin.disconnect();
  const stored: Array<{ value: string; id: string | undefined }> = [];
  const consumer = reader.consumer({ maxWaitTimeInMs: 200 });
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await bounded(
      consumer.run({
        eachMessage: async ({ message }) =>
          void stored.push({ value: message.value!.toString(), id: header(message, 'message-id') }),
      }),
      WAIT_MS,
      'consumer.run',
    );
    await until(
      () => stored.length >= end,
      () => `reading ${end} stored messages (has ${stored.length})`,
    );
  } finally {
    await bounded(consumer.disconnect(), WAIT_MS, 'consumer.disconnect');
  }
  assert.equal(stored.length, end);
  return stored;
}

test(
  'an idempotent SDK producer sends through a SIGKILL and restart: nothing acknowledged lost, nothing twice',
  { timeout: 180_000 },
  async () => {
    const data_dir = new_data_dir('sdk-restart');
    const brokers: BrokerProcess[] = [];
    try {
      const first = await start_broker_process({ data_dir });
      brokers.push(first);
      const { port } = first;
      const retry = { retries: 20, initialRetryTime: 100, maxRetryTime: 1000 };
      const sluice = new Sluice({ brokers: [first.bootstrap], clientId: 'restart', retry });
      const topic = 'through-restart';
      const admin = sluice.admin();
      await admin.connect();
      await admin.createTopics({ topics: [{ topic, numPartitions: 3 }] });
      await admin.disconnect();

      const TOTAL = 5000;
      const KILL_AT = 2000;
      const sends = await send_through_restart(sluice, topic, brokers, { total: TOTAL, kill_at: KILL_AT });
      const { acknowledged, failed, restarted_at, slowest_ms } = sends;
      // The crash really happened in the middle: sends went on after the second broker was up, and
      // at least one send waited out the outage (retried until the broker was back).
      assert.ok(restarted_at >= KILL_AT && restarted_at < TOTAL - 100, `the broker was back by send ${restarted_at}`);
      assert.ok(slowest_ms >= 300, `no send waited for the restart (slowest ${slowest_ms} ms)`);
      assert.ok(
        acknowledged.size >= TOTAL - 50,
        `most sends acknowledged (${acknowledged.size}); failures: ${JSON.stringify(failed.slice(0, 5))}`,
      );

      // Read the whole topic back in broadcast mode, up to the end offsets.
      const stored = await read_topic(port, topic);

      const ids = new Map<string, number>();
      for (const { id } of stored) {
        assert.ok(id, 'every stored message has a message-id header');
        ids.set(id, (ids.get(id) ?? 0) + 1);
      }
      const duplicate_ids = [...ids].filter(([, n]) => n > 1);
      assert.deepEqual(duplicate_ids, [], `${duplicate_ids.length} message-id(s) stored more than once`);
      const values = new Set(stored.map((m) => m.value));
      assert.equal(values.size, stored.length, `${stored.length - values.size} value(s) stored more than once`);
      const missing = [...acknowledged].filter((v) => !values.has(v));
      assert.deepEqual(missing, [], `${missing.length} acknowledged message(s) missing`);
      for (const value of values) assert.match(value, /^value-\d{5}$/);
      console.log(
        `restart: ${acknowledged.size} acknowledged, ${failed.length} failed, ${stored.length} stored; ` +
          `broker back by send ${restarted_at}, slowest send ${slowest_ms} ms`,
      );
    } finally {
      for (const broker of brokers) await broker.kill();
      fs.rmSync(data_dir, { recursive: true, force: true });
    }
  },
);

// -------------------------------------------------------------------------- 3. bad input

test(
  'a closed port: producer.connect() and admin.connect() fail quickly with a ConnectionError',
  { timeout: 60_000 },
  async () => {
    const port = await closed_port();
    const sluice = new Sluice({ brokers: [`127.0.0.1:${port}`], clientId: 'nowhere' });
    const clients = [
      ['producer.connect()', sluice.producer()],
      ['admin.connect()', sluice.admin()],
    ] as const;
    for (const [what, client] of clients) {
      await rejects_quickly(
        what,
        () => client.connect(),
        (error) => {
          assert.ok(error instanceof SluiceError, `${what}: not a SluiceError: ${String(error)}`);
          assert.equal(error.name, 'ConnectionError', `${what}: ${error.name}: ${error.message}`);
          assert.match(error.message, new RegExp(`127\\.0\\.0\\.1:${port}`), `${what}: the message names the address`);
        },
      );
      await client.disconnect();
    }
  },
);

test(
  'producing to an unknown topic with --no-auto-create fails with UNKNOWN_TOPIC_OR_PARTITION',
  { timeout: 60_000 },
  async () => {
    await with_broker(['--no-auto-create'], async (broker) => {
      const sluice = new Sluice({ brokers: [broker.bootstrap], clientId: 'no-auto-create' });
      const producer = sluice.producer();
      await producer.connect();
      const send_unknown = () => producer.send({ topic: 'does-not-exist', messages: [{ value: 'x' }] });
      await rejects_quickly('send to an unknown topic', send_unknown, (error) => {
        assert.ok(error instanceof KafkaProtocolError, `not a KafkaProtocolError: ${String(error)}`);
        assert.equal(error.type, 'UNKNOWN_TOPIC_OR_PARTITION', error.message);
        assert.match(error.message, /does-not-exist/);
      });
      // The producer still works for a topic that exists.
      const admin = sluice.admin();
      await admin.connect();
      await admin.createTopics({ topics: [{ topic: 'exists', numPartitions: 1 }] });
      await admin.disconnect();
      const sending = producer.send({ topic: 'exists', messages: [{ value: 'fine' }] });
      const [sent] = await bounded(sending, WAIT_MS, 'send to an existing topic');
      assert.equal(sent!.baseOffset, '0');
      await producer.disconnect();
    });
  },
);

test(
  'a message over max.message.bytes fails with MESSAGE_TOO_LARGE; send() after disconnect() is refused',
  { timeout: 60_000 },
  async () => {
    await with_broker([], async (broker) => {
      const sluice = new Sluice({ brokers: [broker.bootstrap], clientId: 'too-large' });
      const admin = sluice.admin();
      await admin.connect();
      const configEntries = [{ name: 'max.message.bytes', value: '1000' }];
      await admin.createTopics({ topics: [{ topic: 'small', numPartitions: 1, configEntries }] });
      await admin.disconnect();
      const producer = sluice.producer();
      await producer.connect();
      const send_large = () => producer.send({ topic: 'small', messages: [{ value: Buffer.alloc(5000, 1) }] });
      await rejects_quickly('send of 5000 bytes', send_large, (error) => {
        assert.ok(error instanceof KafkaProtocolError, `not a KafkaProtocolError: ${String(error)}`);
        assert.equal(error.type, 'MESSAGE_TOO_LARGE', error.message);
        assert.equal(error.retriable, false);
      });
      // A small message still goes through afterwards (the failed batch left no sequence gap).
      const sending = producer.send({ topic: 'small', messages: [{ value: 'small enough' }] });
      const [sent] = await bounded(sending, WAIT_MS, 'a small send after the failure');
      assert.equal(sent!.baseOffset, '0');

      await producer.disconnect();
      const send_late = () => producer.send({ topic: 'small', messages: [{ value: 'late' }] });
      await rejects_quickly('send() after disconnect()', send_late, (error) => {
        assert.ok(error instanceof SluiceError, `not a SluiceError: ${String(error)}`);
        assert.match(error.message, /disconnected/);
      });
    });
  },
);
