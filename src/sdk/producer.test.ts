// The SDK producer against an in-process broker: what is stored is read back from the broker's
// logs (headers, sequences, codecs) and through librdkafka (kcat). Faults are injected by wrapping
// the producer's broker connections: answers lost after the broker wrote, error codes, and requests
// held back. Every wait is bounded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { BrokerConnection, Cluster, RETRY_DEFAULT, type ClusterOptions } from './cluster.ts';
import { BufferFullError, ConnectionError, KafkaProtocolError, SluiceError } from './errors.ts';
import { Producer, type ProducerConfig, type RecordMetadata } from './producer.ts';
import { partition_for_key } from './partitioner.ts';
import { compress, decompress, decompress_record_batch, CompressionCodes, type CompressionName } from '../protocol/compression.ts';
import { decode_record_batch, type DecodedRecord } from '../protocol/record_batch.ts';
import type { Value } from '../protocol/kafka/codec.ts';
import type { ApiSpec } from '../protocol/kafka/schema.ts';
import { start_broker, type RunningBroker } from '../compose/start_broker.ts';
import { temp_dir } from '../../test/support/storage.ts';
import { Partitioners } from 'kafkajs';

const KCAT = process.env.KCAT ?? 'kcat';
const KCAT_TIMEOUT_MS = 30_000;
const TEST_TIMEOUT_MS = 60_000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function kcat_missing(): string | null {
  const probe = spawnSync(KCAT, ['-V'], { encoding: 'utf8', timeout: 10_000 });
  if (probe.error) return `kcat is not available (${probe.error.message}); install it (Debian/Ubuntu: apt-get install kcat) to check the producer's output with librdkafka`;
  if (probe.status !== 0) return `\`${KCAT} -V\` exited with ${probe.status}`;
  return null;
}
const kcat_why_not = kcat_missing();
if (kcat_why_not && process.env.CI === 'true') throw new Error(`the producer's kcat checks cannot run under CI: ${kcat_why_not}`);

type SendResult = { version: number; response: Value };
/** Sees each Produce request; `forward` sends it to the broker for real. */
type ProduceHook = (forward: () => Promise<SendResult>, body: Value, index: number) => Promise<SendResult>;

/** A cluster whose broker connections count Produce requests and can pass them through a hook. */
class TestCluster extends Cluster {
  produce_requests = 0;
  /** Batches (partitions) carried by those requests. */
  produce_batches = 0;
  metadata_refreshes = 0;
  hook: ProduceHook | null = null;

  override async node(node_id: number): Promise<BrokerConnection> {
    const real = await super.node(node_id);
    const wrapped = Object.create(real) as BrokerConnection;
    const send_untyped = (api: ApiSpec, min: number, max: number, body: Value | ((version: number) => Value)): Promise<SendResult> => {
      if (api.api_key !== 0) return real.send(api, min, max, body);
      const index = this.produce_requests++;
      for (const topic of (body as Value).topic_data as Array<{ partition_data: unknown[] }>) this.produce_batches += topic.partition_data.length;
      const forward = () => real.send(api, min, max, body);
      return this.hook ? this.hook(forward, body as Value, index) : forward();
    };
    wrapped.send = send_untyped as typeof real.send;
    return wrapped;
  }

  override refresh_metadata(topics: string[] | null = null, allow_auto_create = false): Promise<Map<string, number>> {
    this.metadata_refreshes++;
    return super.refresh_metadata(topics, allow_auto_create);
  }
}

interface Env {
  broker: RunningBroker;
  address: string;
  cluster(options?: Partial<ClusterOptions>): TestCluster;
  producer(config?: ProducerConfig, cluster?: TestCluster): { producer: Producer; cluster: TestCluster };
}

async function with_env(options: { auto_create_topics?: boolean; topics?: Record<string, number> }, work: (env: Env) => Promise<void>): Promise<void> {
  const data_dir = temp_dir('sdk-producer');
  const broker = await start_broker({ data_dir, kafka: { host: '127.0.0.1', port: 0 }, auto_create_topics: options.auto_create_topics ?? true });
  const address = `${broker.kafka_address.host}:${broker.kafka_address.port}`;
  const clusters: TestCluster[] = [];
  const producers: Producer[] = [];
  const env: Env = {
    broker,
    address,
    cluster: (overrides = {}) => {
      const cluster = new TestCluster({ brokers: [address], client_id: 'producer-test', retry: { ...RETRY_DEFAULT, initial_retry_ms: 20 }, request_timeout_ms: 10_000, max_in_flight: 16, ...overrides });
      clusters.push(cluster);
      return cluster;
    },
    producer: (config = {}, cluster = env.cluster()) => {
      const producer = new Producer(cluster, config);
      producers.push(producer);
      return { producer, cluster };
    },
  };
  try {
    for (const [name, partitions] of Object.entries(options.topics ?? {})) await broker.broker.topics.create(name, partitions);
    await work(env);
  } finally {
    for (const producer of producers) await bounded(producer.disconnect().catch(() => undefined), 10_000, 'producer disconnect');
    for (const cluster of clusters) await cluster.close();
    await broker.close();
    fs.rmSync(data_dir, { recursive: true, force: true });
  }
}

/** `promise`, or a rejection after `ms`. */
function bounded<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Whether `promise` is still pending after `ms`. */
async function pending_after<T>(promise: Promise<T>, ms: number): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((resolve) => setTimeout(resolve, ms));
  return !settled;
}

interface StoredBatch {
  base_offset: number;
  codec: number;
  producer_id: number;
  producer_epoch: number;
  base_sequence: number;
  count: number;
  bytes: number;
  uncompressed_bytes: number;
  records: DecodedRecord[];
}

/** Every batch of a partition as the broker stored it, with its records decoded. */
async function stored(broker: RunningBroker, topic: string, partition = 0): Promise<StoredBatch[]> {
  const log = broker.broker.topic_index.local_log(topic, partition)!;
  const out: StoredBatch[] = [];
  let offset = log.log_start_offset;
  while (offset < log.high_watermark) {
    const { batches } = await log.read(offset, 4 * 1024 * 1024);
    if (batches.length === 0) break;
    for (const batch of batches) {
      const base_offset = Number(batch.readBigInt64BE(0));
      const uncompressed = await decompress_record_batch(batch);
      out.push({
        base_offset,
        codec: batch.readInt16BE(21) & 0x07,
        producer_id: Number(batch.readBigInt64BE(43)),
        producer_epoch: batch.readInt16BE(51),
        base_sequence: batch.readInt32BE(53),
        count: batch.readInt32BE(57),
        bytes: batch.length,
        uncompressed_bytes: uncompressed.length,
        records: decode_record_batch(uncompressed),
      });
      offset = base_offset + batch.readInt32BE(23) + 1;
    }
  }
  return out;
}

const records_of = (batches: StoredBatch[]): DecodedRecord[] => batches.flatMap((batch) => batch.records);
const header = (record: DecodedRecord, key: string): string[] => (record.headers ?? []).filter((h) => h.key === key).map((h) => h.value?.toString() ?? '');

/** Consumes a topic from the beginning to its end with kcat; one output line per `format`. */
async function kcat_consume(address: string, topic: string, format: string): Promise<string[]> {
  const args = ['-C', '-b', address, '-t', topic, '-e', '-o', 'beginning', '-q', '-Z', '-f', format, '-X', 'socket.timeout.ms=10000'];
  const result = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(KCAT, args, { stdio: ['ignore', 'pipe', 'pipe'], timeout: KCAT_TIMEOUT_MS, killSignal: 'SIGKILL' });
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

/** A Produce answer carrying `error_code` for every partition of the request. */
function error_response(body: Value, error_code: number): SendResult {
  const responses = (body.topic_data as Array<{ name: string; partition_data: Array<{ index: number }> }>).map((topic) => ({
    name: topic.name,
    partition_responses: topic.partition_data.map((p) => ({ index: p.index, error_code, base_offset: -1, log_append_time_ms: -1, log_start_offset: -1, record_errors: [], error_message: null })),
  }));
  return { version: 9, response: { responses, throttle_time_ms: 0 } };
}

// ------------------------------------------------------------------------------------------

test('send and sendBatch store keys, values, headers (with a message-id) and timestamps; keys pick partitions by murmur2', { timeout: TEST_TIMEOUT_MS }, async () => {
  await with_env({ topics: { orders: 3, audit: 1 } }, async (env) => {
    const { producer } = env.producer();
    await producer.connect();
    assert.equal(producer.isIdempotent(), true);
    const keyed = Array.from({ length: 30 }, (_, i) => ({ key: `customer-${i}`, value: `order ${i}`, headers: { source: 'test', tags: ['a', Buffer.from('b')] } }));
    const result = await producer.send({
      topic: 'orders',
      messages: [
        ...keyed,
        { key: 'pinned', value: 'explicit partition', partition: 2 },
        { key: 'tombstone', value: null },
        { key: Buffer.from([0, 1, 2]), value: Buffer.from([255, 254]), headers: { 'message-id': 'my-own-id' }, timestamp: '1700000000000' },
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

    // What the broker stored.
    const by_value = new Map<string, { partition: number; record: DecodedRecord }>();
    for (let p = 0; p < 3; p++) for (const record of records_of(await stored(env.broker, 'orders', p))) by_value.set(record.value?.toString('latin1') ?? `null:${record.key}`, { partition: p, record });
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
    assert.deepEqual(records_of(await stored(env.broker, 'audit')).map((r) => r.value?.toString()), ['a1', 'a2']);

    // A kafkajs partitioner plugs in unchanged (and agrees with ours).
    const custom = env.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    const placed = await custom.producer.send({ topic: 'orders', messages: [{ key: 'customer-7', value: 'via kafkajs partitioner', timestamp: 1_700_000_000_001 }] });
    assert.equal(placed[0]!.partition, partition_for_key('customer-7', 3));

    // What librdkafka reads.
    if (kcat_why_not) return;
    const lines = await kcat_consume(env.address, 'orders', '%p|%k|%s|%h\n');
    const seen = new Map(lines.map((line) => line.split('|')).map(([p, k, v, h]) => [v!, { partition: Number(p), key: k!, headers: h! }]));
    for (const message of keyed) {
      const line = seen.get(message.value)!;
      assert.equal(line.partition, partition_for_key(message.key, 3));
      assert.equal(line.key, message.key);
      assert.match(line.headers, /^source=test,tags=a,tags=b,message-id=[0-9a-f-]{36}$/);
    }
    assert.equal(seen.get('NULL')?.key, 'tombstone');
  });
});

test('every codec (gzip, snappy, lz4, zstd) round-trips through the broker to librdkafka', { timeout: TEST_TIMEOUT_MS }, async () => {
  // Unit round trips, including xerial-framed snappy over several blocks and raw snappy.
  const big = Buffer.from(Array.from({ length: 20_000 }, (_, i) => `line ${i} ${i % 13 === 0 ? 'spike' : ''}\n`).join(''));
  for (const codec of ['gzip', 'snappy', 'lz4', 'zstd'] as const) {
    for (const data of [Buffer.from('x'), big]) assert.deepEqual(await decompress(codec, await compress(codec, data)), data, `${codec} of ${data.length} bytes`);
    assert.deepEqual(await decompress(CompressionCodes[codec] as 1 | 2 | 3 | 4, await compress(codec, big)), big);
  }
  const snappy = await import('snappy');
  assert.deepEqual(await decompress('snappy', snappy.compressSync(big)), big, 'unframed snappy is read too');

  await with_env({}, async (env) => {
    const { producer } = env.producer({ batchBytes: 1024 * 1024, compression: 'gzip' });
    for (const codec of ['gzip', 'snappy', 'lz4', 'zstd'] as const) {
      const topic = `codec-${codec}`;
      // About 250 KB in one batch: several snappy blocks, several LZ4 blocks.
      const messages = Array.from({ length: 3000 }, (_, i) => ({ key: `k${i % 10}`, value: `${codec} message ${i} ${'lorem ipsum dolor sit amet '.repeat((i % 5) + 1)}` }));
      const [meta] = await producer.send({ topic, messages, compression: codec === 'gzip' ? undefined : codec });
      assert.equal(meta!.baseOffset, '0');
      const batches = await stored(env.broker, topic);
      assert.ok(batches.length >= 1);
      for (const batch of batches) assert.equal(batch.codec, CompressionCodes[codec as CompressionName], `${codec} batches carry codec id ${CompressionCodes[codec]}`);
      const bytes = batches.reduce((n, b) => n + b.bytes, 0);
      const uncompressed = batches.reduce((n, b) => n + b.uncompressed_bytes, 0);
      assert.ok(bytes < uncompressed / 2, `${codec} compressed ${uncompressed} bytes to ${bytes}`);
      assert.deepEqual(records_of(batches).map((r) => r.value?.toString()), messages.map((m) => m.value));
      if (kcat_why_not) continue;
      const lines = await kcat_consume(env.address, topic, '%k %s\n');
      assert.deepEqual(lines, messages.map((m) => `${m.key} ${m.value}`), `librdkafka decodes ${codec}`);
    }
  });
});

test('idempotence: contiguous sequences from 0, and a batch resent after a lost answer is stored once', { timeout: TEST_TIMEOUT_MS }, async () => {
  await with_env({ topics: { idem: 1 } }, async (env) => {
    const { producer, cluster } = env.producer({ lingerMs: 0, batchBytes: 300, maxInFlightRequests: 5 });
    // The third Produce reaches the broker and is written, but its answer is lost.
    cluster.hook = async (forward, _body, index) => {
      const answer = await forward();
      if (index === 2) throw new ConnectionError('simulated lost answer');
      return answer;
    };
    const sends = Array.from({ length: 60 }, (_, i) => producer.send({ topic: 'idem', messages: [{ value: `m${i}` }] }));
    const results = await bounded(Promise.all(sends), 20_000, 'idempotent sends');
    assert.deepEqual(results.map((r) => r[0]!.baseOffset), Array.from({ length: 60 }, (_, i) => String(i)), 'each send got its own offset, in send order');
    const batches = await stored(env.broker, 'idem');
    assert.deepEqual(records_of(batches).map((r) => r.value?.toString()), Array.from({ length: 60 }, (_, i) => `m${i}`), 'no duplicate, no gap, in order');
    assert.ok(batches.length > 3, 'several batches');
    assert.ok(cluster.produce_requests === batches.length + 1, `one resend (${cluster.produce_requests} requests for ${batches.length} batches)`);
    let sequence = 0;
    for (const batch of batches) {
      assert.equal(batch.producer_id, batches[0]!.producer_id);
      assert.ok(batch.producer_id >= 0);
      assert.equal(batch.producer_epoch, 0);
      assert.equal(batch.base_sequence, sequence, 'sequences are contiguous');
      sequence += batch.count;
    }
  });
});

test('a dropped connection: in-flight batches are resent in order on a new one and stored once', { timeout: TEST_TIMEOUT_MS }, async () => {
  await with_env({ topics: { dropped: 2 } }, async (env) => {
    const { producer, cluster } = env.producer({ lingerMs: 0, batchBytes: 400 });
    await producer.connect();
    cluster.hook = async (forward, _body, index) => {
      const answer = forward();
      if (index === 4) (await cluster.node(1)).connection.close(); // after the fifth request is written
      return answer;
    };
    const sends = Array.from({ length: 200 }, (_, i) => producer.send({ topic: 'dropped', messages: [{ value: `d${i}`, partition: i % 2 }] }));
    await bounded(Promise.all(sends), 20_000, 'sends across a dropped connection');
    const batch_count = (await stored(env.broker, 'dropped', 0)).length + (await stored(env.broker, 'dropped', 1)).length;
    assert.ok(cluster.produce_batches > batch_count, `batches cut off by the drop were resent (${cluster.produce_batches} sent, ${batch_count} stored)`);
    for (const partition of [0, 1]) {
      const batches = await stored(env.broker, 'dropped', partition);
      const expected = Array.from({ length: 100 }, (_, i) => `d${i * 2 + partition}`);
      assert.deepEqual(records_of(batches).map((r) => r.value?.toString()), expected, `partition ${partition}: every message once, in order`);
      let sequence = 0;
      for (const batch of batches) {
        assert.equal(batch.base_sequence, sequence);
        sequence += batch.count;
      }
    }

    // Without idempotence batches carry no producer id.
    const plain = env.producer({ idempotent: false, acks: 1, lingerMs: 0 });
    const [meta] = await plain.producer.send({ topic: 'dropped', messages: [{ value: 'plain', partition: 0 }] });
    assert.equal(meta!.baseOffset, '100');
    const last = (await stored(env.broker, 'dropped', 0)).at(-1)!;
    assert.deepEqual([last.producer_id, last.producer_epoch, last.base_sequence], [-1, -1, -1]);
  });
});

test('a fatal sequence error fails the send with KafkaProtocolError; the partition goes on in a new epoch', { timeout: TEST_TIMEOUT_MS }, async () => {
  await with_env({ topics: { fatal: 1 } }, async (env) => {
    const { producer, cluster } = env.producer({ lingerMs: 0 });
    cluster.hook = async (forward, body, index) => (index === 1 ? error_response(body, 45) : forward());
    await producer.send({ topic: 'fatal', messages: [{ value: 'first' }] });
    await assert.rejects(producer.send({ topic: 'fatal', messages: [{ value: 'refused' }] }), (error: unknown) => error instanceof KafkaProtocolError && error.type === 'OUT_OF_ORDER_SEQUENCE_NUMBER');
    await producer.send({ topic: 'fatal', messages: [{ value: 'after' }] });
    const batches = await stored(env.broker, 'fatal');
    assert.deepEqual(batches.map((b) => [b.records[0]!.value?.toString(), b.producer_epoch, b.base_sequence]), [
      ['first', 0, 0],
      ['after', 1, 0],
    ]);
  });
});

test('leader errors refresh metadata and retry; when retries run out the send fails with the error', { timeout: TEST_TIMEOUT_MS }, async () => {
  await with_env({ topics: { moving: 2 } }, async (env) => {
    const { producer, cluster } = env.producer({ lingerMs: 0, retry: { retries: 3, initialRetryTime: 20 } });
    await producer.connect();
    cluster.hook = async (forward, body, index) => (index < 2 ? error_response(body, 6 /* NOT_LEADER_OR_FOLLOWER */) : forward());
    const refreshes = cluster.metadata_refreshes;
    const [meta] = await bounded(producer.send({ topic: 'moving', messages: [{ value: 'eventually', partition: 1 }] }), 10_000, 'send');
    assert.equal(meta!.partition, 1);
    assert.equal(cluster.produce_requests, 3);
    assert.ok(cluster.metadata_refreshes - refreshes >= 2, 'metadata was fetched again before each retry');
    assert.deepEqual(records_of(await stored(env.broker, 'moving', 1)).map((r) => r.value?.toString()), ['eventually']);

    const failing = env.producer({ lingerMs: 0, idempotent: false, acks: 1, retry: { retries: 2, initialRetryTime: 10 } });
    failing.cluster.hook = async (_forward, body) => error_response(body, 6);
    await assert.rejects(bounded(failing.producer.send({ topic: 'moving', messages: [{ value: 'never' }] }), 10_000, 'send'), (error: unknown) => error instanceof KafkaProtocolError && error.type === 'NOT_LEADER_OR_FOLLOWER');
    assert.equal(failing.cluster.produce_requests, 3, 'the first attempt and two retries');
  });
});

test('a full buffer makes send wait, or with bufferFull "error" reject with BufferFullError', { timeout: TEST_TIMEOUT_MS }, async () => {
  await with_env({ topics: { buffered: 1 } }, async (env) => {
    for (const mode of ['wait', 'error'] as const) {
      let open!: () => void;
      const gate = new Promise<void>((resolve) => (open = resolve));
      const { producer, cluster } = env.producer({ lingerMs: 0, bufferBytes: 3000, bufferFull: mode });
      cluster.hook = async (forward) => {
        await gate;
        return forward();
      };
      const a = producer.send({ topic: 'buffered', messages: [{ value: 'a'.repeat(1500) }] });
      const b = producer.send({ topic: 'buffered', messages: [{ value: 'b'.repeat(1000) }] });
      const c = producer.send({ topic: 'buffered', messages: [{ value: 'c'.repeat(1000) }] });
      if (mode === 'wait') {
        assert.ok(await pending_after(c, 200), 'the send waits while the buffer is full');
        open();
        const results = await bounded(Promise.all([a, b, c]), 10_000, 'sends after the buffer drained');
        assert.deepEqual(results.map((r) => r[0]!.baseOffset), ['0', '1', '2']);
      } else {
        await assert.rejects(bounded(c, 2000, 'rejection'), (error: unknown) => error instanceof BufferFullError);
        open();
        await bounded(Promise.all([a, b]), 10_000, 'sends that fit');
      }
      await assert.rejects(producer.send({ topic: 'buffered', messages: [{ value: 'x'.repeat(5000) }] }), (error: unknown) => error instanceof SluiceError && /cannot fit/.test(error.message));
      await producer.disconnect();
    }
    assert.deepEqual(records_of(await stored(env.broker, 'buffered')).map((r) => r.value![0]), [..."abcab"].map((ch) => ch.charCodeAt(0)));
  });
});

test('lingering batches many small concurrent sends into few requests; batchBytes bounds a batch', { timeout: TEST_TIMEOUT_MS }, async () => {
  await with_env({ topics: { linger: 1, sized: 1 } }, async (env) => {
    const { producer, cluster } = env.producer({ lingerMs: 20 });
    await producer.connect();
    const results = await bounded(Promise.all(Array.from({ length: 200 }, (_, i) => producer.send({ topic: 'linger', messages: [{ value: `small ${i}` }] }))), 10_000, 'sends');
    assert.deepEqual(results.map((r) => Number(r[0]!.baseOffset)), Array.from({ length: 200 }, (_, i) => i));
    assert.ok(cluster.produce_requests <= 2, `200 sends took ${cluster.produce_requests} Produce requests`);
    assert.ok((await stored(env.broker, 'linger')).length <= 2);

    const sized = env.producer({ lingerMs: 50, batchBytes: 2000 });
    const messages = Array.from({ length: 100 }, (_, i) => ({ value: `${i}`.padStart(100, '.') }));
    await bounded(Promise.all(messages.map((message) => sized.producer.send({ topic: 'sized', messages: [message] }))), 10_000, 'sends');
    const batches = await stored(env.broker, 'sized');
    assert.equal(records_of(batches).length, 100);
    assert.ok(batches.length >= 8, `${batches.length} batches of at most 2000 bytes`);
    for (const batch of batches) assert.ok(batch.bytes <= 2000, `a batch of ${batch.bytes} bytes`);
  });
});

test('a missing topic with auto-creation off fails with UNKNOWN_TOPIC_OR_PARTITION after the retries', { timeout: TEST_TIMEOUT_MS }, async () => {
  await with_env({ auto_create_topics: false, topics: { present: 1 } }, async (env) => {
    const { producer, cluster } = env.producer({ allowAutoTopicCreation: false, retry: { retries: 2, initialRetryTime: 20 } });
    await producer.connect();
    const refreshes = cluster.metadata_refreshes;
    const started = performance.now();
    await assert.rejects(bounded(producer.send({ topic: 'absent', messages: [{ value: 'x' }] }), 10_000, 'send'), (error: unknown) => error instanceof KafkaProtocolError && error.type === 'UNKNOWN_TOPIC_OR_PARTITION');
    assert.equal(cluster.metadata_refreshes - refreshes, 3, 'one lookup and two retries');
    assert.ok(performance.now() - started >= 30, 'with backoff between them');
    const [meta] = await producer.send({ topic: 'present', messages: [{ value: 'y' }] });
    assert.equal(meta!.baseOffset, '0', 'the producer still works');
  });
});

test('flush and disconnect send lingering messages; after disconnect sends are refused', { timeout: TEST_TIMEOUT_MS }, async () => {
  await with_env({ topics: { pending: 2 } }, async (env) => {
    const { producer } = env.producer({ lingerMs: 60_000 });
    const first = producer.send({ topic: 'pending', messages: [{ key: 'a', value: 'flushed' }] });
    assert.ok(await pending_after(first, 100), 'lingering');
    await bounded(producer.flush(), 5_000, 'flush');
    assert.equal((await first)[0]!.baseOffset, '0');

    const sends: Array<Promise<RecordMetadata[]>> = [];
    for (let i = 0; i < 20; i++) sends.push(producer.send({ topic: 'pending', messages: [{ key: `k${i}`, value: `at close ${i}` }] }));
    await bounded(producer.disconnect(), 5_000, 'disconnect');
    assert.equal((await Promise.all(sends)).length, 20);
    const values = [...records_of(await stored(env.broker, 'pending', 0)), ...records_of(await stored(env.broker, 'pending', 1))].map((r) => r.value?.toString());
    assert.equal(values.length, 21);
    await assert.rejects(producer.send({ topic: 'pending', messages: [{ value: 'late' }] }), (error: unknown) => error instanceof SluiceError && /disconnected/.test(error.message));
  });
});

test('acks 0: sends resolve once written (offsets -1), every message is stored in order, and acks -1 sends on the same producer still get offsets', { timeout: TEST_TIMEOUT_MS }, async () => {
  await with_env({ topics: { fire: 1 } }, async (env) => {
    const { producer } = env.producer({ idempotent: false, acks: 0, lingerMs: 0 });
    await producer.connect();
    const sends = [];
    for (let i = 0; i < 50; i++) sends.push(producer.send({ topic: 'fire', messages: [{ value: `m${i}` }] }));
    const results = await Promise.all(sends);
    assert.ok(results.every(([meta]) => meta!.baseOffset === '-1'), 'no offsets without an acknowledgement');
    const [acked] = await producer.send({ topic: 'fire', acks: -1, messages: [{ value: 'last' }] });
    assert.equal(acked!.baseOffset, '50', 'the acknowledged send comes after the 50 unacknowledged ones');
    const values = records_of(await stored(env.broker, 'fire', 0)).map((r) => r.value?.toString());
    assert.deepEqual(values, [...Array.from({ length: 50 }, (_, i) => `m${i}`), 'last']);
    await producer.disconnect();
  });
});

test('configuration is checked: idempotence needs acks -1 and at most 5 requests in flight', () => {
  const cluster = new Cluster({ brokers: ['127.0.0.1:1'], client_id: 'x', retry: RETRY_DEFAULT, request_timeout_ms: 1000, max_in_flight: 8 });
  assert.throws(() => new Producer(cluster, { acks: 1 }), /acks -1/);
  assert.throws(() => new Producer(cluster, { maxInFlightRequests: 6 }), /at most 5/);
  assert.throws(() => new Producer(cluster, { acks: 0 }), /acks -1/);
  assert.throws(() => new Producer(cluster, { idempotent: false, acks: 2 }), /acks must be -1, 1 or 0/);
  assert.equal(new Producer(cluster, { idempotent: false, acks: 0 }).isIdempotent(), false);
  assert.throws(() => new Producer(cluster, { compression: 'brotli' as never }), /unknown compression/);
  const producer = new Producer(cluster, { idempotent: false, maxInFlightRequests: 10, acks: 1, compression: 2 });
  assert.equal(producer.isIdempotent(), false);
});
