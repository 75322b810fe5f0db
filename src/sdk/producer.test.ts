// The SDK producer against an in-process broker: what is stored is read back from the broker's
// logs (keys, values, headers, timestamps, codecs) and through librdkafka (kcat); flush, disconnect,
// acks 0, a missing topic and the configuration checks. Faults are injected by wrapping the
// producer's broker connections (producer_test_support.ts). Every wait is bounded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { Cluster, RETRY_DEFAULT } from './cluster.ts';
import { KafkaProtocolError, SluiceError } from './errors.ts';
import { Producer, type RecordMetadata } from './producer.ts';
import { partition_for_key } from './partitioner.ts';
import { compress, decompress, CompressionCodes, type CompressionName } from '../protocol/compression.ts';
import type { DecodedRecord } from '../protocol/record_batch.ts';
import { Partitioners } from 'kafkajs';
import {
  TEST_TIMEOUT_MS,
  UUID,
  type Env,
  with_env,
  bounded,
  pending_after,
  stored,
  records_of,
  header,
} from './producer_test_support.ts';

const KCAT = process.env.KCAT ?? 'kcat';
const KCAT_TIMEOUT_MS = 30_000;

function kcat_missing(): string | null {
  const probe = spawnSync(KCAT, ['-V'], { encoding: 'utf8', timeout: 10_000 });
  if (probe.error) {
    return (
      `kcat is not available (${probe.error.message}); install it (Debian/Ubuntu: apt-get install kcat) ` +
      "to check the producer's output with librdkafka"
    );
  }
  if (probe.status !== 0) return `\`${KCAT} -V\` exited with ${probe.status}`;
  return null;
}
const kcat_why_not = kcat_missing();
if (kcat_why_not && process.env.CI === 'true') {
  throw new Error(`the producer's kcat checks cannot run under CI: ${kcat_why_not}`);
}

/** Consumes a topic from the beginning to its end with kcat; one output line per `format`. */
async function kcat_consume(address: string, topic: string, format: string): Promise<string[]> {
  const args = [
    '-C',
    '-b',
    address,
    '-t',
    topic,
    '-e',
    '-o',
    'beginning',
    '-q',
    '-Z',
    '-f',
    format,
    '-X',
    'socket.timeout.ms=10000',
  ];
  const result = await new Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    stdout: string;
    stderr: string;
  }>((resolve, reject) => {
    const child = spawn(KCAT, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: KCAT_TIMEOUT_MS,
      killSignal: 'SIGKILL',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  assert.equal(result.signal, null, `kcat ${args.join(' ')} was killed (timed out?)\n${result.stderr}`);
  assert.equal(result.code, 0, `kcat ${args.join(' ')} exited with ${result.code}\n${result.stderr}`);
  assert.doesNotMatch(result.stderr, /^%[0-4]\|/m, `kcat logged errors:\n${result.stderr}`);
  return result.stdout.split('\n').filter((line) => line.length > 0);
}

type Keyed = Array<{ key: string; value: string }>;

/** What the broker stored for the first send test: partitions by key, headers, message ids, timestamps. */
async function check_stored_orders(env: Env, keyed: Keyed): Promise<void> {
  // What the broker stored.
  const by_value = new Map<string, { partition: number; record: DecodedRecord }>();
  for (let p = 0; p < 3; p++) {
    for (const record of records_of(await stored(env.broker, 'orders', p))) {
      by_value.set(record.value?.toString('latin1') ?? `null:${record.key}`, { partition: p, record });
    }
  }
  for (const message of keyed) {
    const found = by_value.get(message.value)!;
    assert.equal(found.partition, partition_for_key(message.key, 3), `${message.key} is on its murmur2 partition`);
    assert.equal(found.record.key?.toString(), message.key);
    assert.deepEqual(header(found.record, 'source'), ['test']);
    assert.deepEqual(header(found.record, 'tags'), ['a', 'b']);
    const ids = header(found.record, 'message-id');
    assert.equal(ids.length, 1);
    assert.match(ids[0]!, UUID);
  }
  assert.equal(by_value.get('explicit partition')!.partition, 2);
  assert.ok(by_value.has('null:tombstone'), 'a null value stays null');
  const own = by_value.get(Buffer.from([255, 254]).toString('latin1'))!;
  assert.deepEqual(own.record.key, Buffer.from([0, 1, 2]));
  assert.deepEqual(header(own.record, 'message-id'), ['my-own-id'], 'a caller-set message-id is kept, not doubled');
  assert.equal(own.record.timestamp_ms, 1_700_000_000_000);
  const ids = [...by_value.values()].flatMap(({ record }) => header(record, 'message-id'));
  assert.equal(new Set(ids).size, ids.length, 'message ids are unique');
  assert.deepEqual(
    records_of(await stored(env.broker, 'audit')).map((r) => r.value?.toString()),
    ['a1', 'a2'],
  );
}

/** What librdkafka (kcat) reads of the first send test's messages. */
async function check_kcat_reads(env: Env, keyed: Keyed): Promise<void> {
  // What librdkafka reads.
  if (kcat_why_not) return;
  const lines = await kcat_consume(env.address, 'orders', '%p|%k|%s|%h\n');
  const seen = new Map(
    lines.map((line) => line.split('|')).map(([p, k, v, h]) => [v!, { partition: Number(p), key: k!, headers: h! }]),
  );
  for (const message of keyed) {
    const line = seen.get(message.value)!;
    assert.equal(line.partition, partition_for_key(message.key, 3));
    assert.equal(line.key, message.key);
    assert.match(line.headers, /^source=test,tags=a,tags=b,message-id=[0-9a-f-]{36}$/);
  }
  assert.equal(seen.get('NULL')?.key, 'tombstone');
}

test(
  'send and sendBatch store keys, values, headers (with a message-id) and timestamps; keys pick partitions by murmur2',
  { timeout: TEST_TIMEOUT_MS },
  async () => {
    await with_env({ topics: { orders: 3, audit: 1 } }, async (env) => {
      const { producer } = env.producer();
      await producer.connect();
      assert.equal(producer.isIdempotent(), true);
      const keyed = Array.from({ length: 30 }, (_, i) => ({
        key: `customer-${i}`,
        value: `order ${i}`,
        headers: { source: 'test', tags: ['a', Buffer.from('b')] },
      }));
      const result = await producer.send({
        topic: 'orders',
        messages: [
          ...keyed,
          { key: 'pinned', value: 'explicit partition', partition: 2 },
          { key: 'tombstone', value: null },
          {
            key: Buffer.from([0, 1, 2]),
            value: Buffer.from([255, 254]),
            headers: { 'message-id': 'my-own-id' },
            timestamp: '1700000000000',
          },
        ],
      });
      const partitions = new Set(keyed.map((m) => partition_for_key(m.key, 3)));
      partitions.add(2);
      assert.deepEqual(new Set(result.map((r) => r.partition)), partitions);
      for (const entry of result) {
        assert.equal(entry.topicName, 'orders');
        assert.equal(entry.errorCode, 0);
        assert.equal(entry.baseOffset, '0', 'the first send to each partition starts at offset 0');
        assert.equal(entry.logAppendTime, '-1');
        assert.equal(entry.logStartOffset, '0');
      }

      const batch_result = await producer.sendBatch({
        topicMessages: [
          { topic: 'orders', messages: [{ key: 'customer-0', value: 'second order' }] },
          { topic: 'audit', messages: [{ value: 'a1' }, { value: 'a2' }] },
        ],
      });
      const p0 = partition_for_key('customer-0', 3);
      const before = (await stored(env.broker, 'orders', p0)).reduce((n, b) => n + b.count, 0) - 1;
      assert.deepEqual(
        batch_result.map((r) => [r.topicName, r.partition, r.baseOffset]),
        [
          ['orders', p0, String(before)],
          ['audit', 0, '0'],
        ],
      );

      await check_stored_orders(env, keyed);

      // A kafkajs partitioner plugs in unchanged (and agrees with ours).
      const custom = env.producer({ createPartitioner: Partitioners.DefaultPartitioner });
      const placed = await custom.producer.send({
        topic: 'orders',
        messages: [{ key: 'customer-7', value: 'via kafkajs partitioner', timestamp: 1_700_000_000_001 }],
      });
      assert.equal(placed[0]!.partition, partition_for_key('customer-7', 3));

      await check_kcat_reads(env, keyed);
    });
  },
);

test(
  'every codec (gzip, snappy, lz4, zstd) round-trips through the broker to librdkafka',
  { timeout: TEST_TIMEOUT_MS },
  async () => {
    // Unit round trips, including xerial-framed snappy over several blocks and raw snappy.
    const big = Buffer.from(
      Array.from({ length: 20_000 }, (_, i) => `line ${i} ${i % 13 === 0 ? 'spike' : ''}\n`).join(''),
    );
    for (const codec of ['gzip', 'snappy', 'lz4', 'zstd'] as const) {
      for (const data of [Buffer.from('x'), big]) {
        assert.deepEqual(
          await decompress(codec, await compress(codec, data)),
          data,
          `${codec} of ${data.length} bytes`,
        );
      }
      assert.deepEqual(await decompress(CompressionCodes[codec] as 1 | 2 | 3 | 4, await compress(codec, big)), big);
    }
    const snappy = await import('snappy');
    assert.deepEqual(await decompress('snappy', snappy.compressSync(big)), big, 'unframed snappy is read too');

    await with_env({}, async (env) => {
      const { producer } = env.producer({ batchBytes: 1024 * 1024, compression: 'gzip' });
      for (const codec of ['gzip', 'snappy', 'lz4', 'zstd'] as const) {
        const topic = `codec-${codec}`;
        // About 250 KB in one batch: several snappy blocks, several LZ4 blocks.
        const messages = Array.from({ length: 3000 }, (_, i) => ({
          key: `k${i % 10}`,
          value: `${codec} message ${i} ${'lorem ipsum dolor sit amet '.repeat((i % 5) + 1)}`,
        }));
        const [meta] = await producer.send({ topic, messages, compression: codec === 'gzip' ? undefined : codec });
        assert.equal(meta!.baseOffset, '0');
        const batches = await stored(env.broker, topic);
        assert.ok(batches.length >= 1);
        for (const batch of batches) {
          assert.equal(
            batch.codec,
            CompressionCodes[codec as CompressionName],
            `${codec} batches carry codec id ${CompressionCodes[codec]}`,
          );
        }
        const bytes = batches.reduce((n, b) => n + b.bytes, 0);
        const uncompressed = batches.reduce((n, b) => n + b.uncompressed_bytes, 0);
        assert.ok(bytes < uncompressed / 2, `${codec} compressed ${uncompressed} bytes to ${bytes}`);
        assert.deepEqual(
          records_of(batches).map((r) => r.value?.toString()),
          messages.map((m) => m.value),
        );
        if (kcat_why_not) continue;
        const lines = await kcat_consume(env.address, topic, '%k %s\n');
        assert.deepEqual(
          lines,
          messages.map((m) => `${m.key} ${m.value}`),
          `librdkafka decodes ${codec}`,
        );
      }
    });
  },
);

test(
  'a missing topic with auto-creation off fails with UNKNOWN_TOPIC_OR_PARTITION after the retries',
  { timeout: TEST_TIMEOUT_MS },
  async () => {
    await with_env({ auto_create_topics: false, topics: { present: 1 } }, async (env) => {
      const { producer, cluster } = env.producer({
        allowAutoTopicCreation: false,
        retry: { retries: 2, initialRetryTime: 20 },
      });
      await producer.connect();
      const refreshes = cluster.metadata_refreshes;
      const started = performance.now();
      await assert.rejects(
        bounded(producer.send({ topic: 'absent', messages: [{ value: 'x' }] }), 10_000, 'send'),
        (error: unknown) => error instanceof KafkaProtocolError && error.type === 'UNKNOWN_TOPIC_OR_PARTITION',
      );
      assert.equal(cluster.metadata_refreshes - refreshes, 3, 'one lookup and two retries');
      assert.ok(performance.now() - started >= 30, 'with backoff between them');
      const [meta] = await producer.send({ topic: 'present', messages: [{ value: 'y' }] });
      assert.equal(meta!.baseOffset, '0', 'the producer still works');
    });
  },
);

test(
  'flush and disconnect send lingering messages; after disconnect sends are refused',
  { timeout: TEST_TIMEOUT_MS },
  async () => {
    await with_env({ topics: { pending: 2 } }, async (env) => {
      const { producer } = env.producer({ lingerMs: 60_000 });
      const first = producer.send({ topic: 'pending', messages: [{ key: 'a', value: 'flushed' }] });
      assert.ok(await pending_after(first, 100), 'lingering');
      await bounded(producer.flush(), 5_000, 'flush');
      assert.equal((await first)[0]!.baseOffset, '0');

      const sends: Array<Promise<RecordMetadata[]>> = [];
      for (let i = 0; i < 20; i++) {
        sends.push(producer.send({ topic: 'pending', messages: [{ key: `k${i}`, value: `at close ${i}` }] }));
      }
      await bounded(producer.disconnect(), 5_000, 'disconnect');
      assert.equal((await Promise.all(sends)).length, 20);
      const values = [
        ...records_of(await stored(env.broker, 'pending', 0)),
        ...records_of(await stored(env.broker, 'pending', 1)),
      ].map((r) => r.value?.toString());
      assert.equal(values.length, 21);
      await assert.rejects(
        producer.send({ topic: 'pending', messages: [{ value: 'late' }] }),
        (error: unknown) => error instanceof SluiceError && /disconnected/.test(error.message),
      );
    });
  },
);

test(
  'acks 0: sends resolve once written (offsets -1), every message is stored in order, ' +
    'and acks -1 sends on the same producer still get offsets',
  { timeout: TEST_TIMEOUT_MS },
  async () => {
    await with_env({ topics: { fire: 1 } }, async (env) => {
      const { producer } = env.producer({ idempotent: false, acks: 0, lingerMs: 0 });
      await producer.connect();
      const sends = [];
      for (let i = 0; i < 50; i++) sends.push(producer.send({ topic: 'fire', messages: [{ value: `m${i}` }] }));
      const results = await Promise.all(sends);
      assert.ok(
        results.every(([meta]) => meta!.baseOffset === '-1'),
        'no offsets without an acknowledgement',
      );
      const [acked] = await producer.send({ topic: 'fire', acks: -1, messages: [{ value: 'last' }] });
      assert.equal(acked!.baseOffset, '50', 'the acknowledged send comes after the 50 unacknowledged ones');
      const values = records_of(await stored(env.broker, 'fire', 0)).map((r) => r.value?.toString());
      assert.deepEqual(values, [...Array.from({ length: 50 }, (_, i) => `m${i}`), 'last']);
      await producer.disconnect();
    });
  },
);

test(
  'a send waiting for buffer space is not overtaken by a later one that would fit: sends are stored in call order',
  { timeout: TEST_TIMEOUT_MS },
  async () => {
    await with_env({ topics: { queue: 1 } }, async (env) => {
      // Room for one large message: the second waits, and the small third would fit beside the first.
      const { producer } = env.producer({ bufferBytes: 3000, lingerMs: 50 });
      await producer.connect();
      await producer.send({ topic: 'queue', messages: [{ value: 'warm-up' }] });
      const large = (name: string) => ({ value: `${name}:${'x'.repeat(1800)}` });
      const sends = [
        producer.send({ topic: 'queue', messages: [large('first')] }),
        producer.send({ topic: 'queue', messages: [large('second')] }),
        producer.send({ topic: 'queue', messages: [{ value: 'third:small' }] }),
      ];
      await bounded(Promise.all(sends), 20_000, 'the three sends');
      const values = records_of(await stored(env.broker, 'queue', 0)).map((r) => r.value!.toString().split(':')[0]);
      assert.deepEqual(values, ['warm-up', 'first', 'second', 'third']);
    });
  },
);

test('configuration is checked: idempotence needs acks -1 and at most 5 requests in flight', () => {
  const cluster = new Cluster({
    brokers: ['127.0.0.1:1'],
    client_id: 'x',
    retry: RETRY_DEFAULT,
    request_timeout_ms: 1000,
    max_in_flight: 8,
  });
  assert.throws(() => new Producer(cluster, { acks: 1 }), /acks -1/);
  assert.throws(() => new Producer(cluster, { maxInFlightRequests: 6 }), /at most 5/);
  assert.throws(() => new Producer(cluster, { acks: 0 }), /acks -1/);
  assert.throws(() => new Producer(cluster, { idempotent: false, acks: 2 }), /acks must be -1, 1 or 0/);
  assert.equal(new Producer(cluster, { idempotent: false, acks: 0 }).isIdempotent(), false);
  assert.throws(() => new Producer(cluster, { compression: 'brotli' as never }), /unknown compression/);
  const producer = new Producer(cluster, { idempotent: false, maxInFlightRequests: 10, acks: 1, compression: 2 });
  assert.equal(producer.isIdempotent(), false);
});
