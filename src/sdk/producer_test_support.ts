// The producer tests' harness: an in-process broker per test with the topics it needs, producers
// on clusters whose broker connections can be wrapped to inject faults (answers lost after the
// broker wrote, error codes, requests held back), what the broker stored read back from its logs,
// and bounded waits.
import fs from 'node:fs';
import { BrokerConnection, Cluster, RETRY_DEFAULT, type ClusterOptions } from './cluster.ts';
import { Producer, type ProducerConfig } from './producer.ts';
import { decode_record_batch, type DecodedRecord } from '../protocol/record_batch.ts';
import { decompress_record_batch } from '../protocol/compression.ts';
import type { Value } from '../protocol/kafka/codec.ts';
import type { ApiSpec } from '../protocol/kafka/schema.ts';
import { start_broker, type RunningBroker } from '../compose/start_broker.ts';
import { temp_dir } from '../../test/support/storage.ts';

export const TEST_TIMEOUT_MS = 60_000;
/** A random (version 4, variant 10) UUID in lowercase, as randomUUID() writes it. */
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

export type SendResult = { version: number; response: Value };
/** Sees each Produce request; `forward` sends it to the broker for real. */
export type ProduceHook = (forward: () => Promise<SendResult>, body: Value, index: number) => Promise<SendResult>;

/** A cluster whose broker connections count Produce requests and can pass them through a hook. */
export class TestCluster extends Cluster {
  produce_requests = 0;
  /** Batches (partitions) carried by those requests. */
  produce_batches = 0;
  metadata_refreshes = 0;
  hook: ProduceHook | null = null;

  override async node(node_id: number): Promise<BrokerConnection> {
    const real = await super.node(node_id);
    const wrapped = Object.create(real) as BrokerConnection;
    const send_untyped = (
      api: ApiSpec,
      min: number,
      max: number,
      body: Value | ((version: number) => Value),
    ): Promise<SendResult> => {
      if (api.api_key !== 0) return real.send(api, min, max, body);
      const index = this.produce_requests++;
      for (const topic of (body as Value).topic_data as Array<{ partition_data: unknown[] }>) {
        this.produce_batches += topic.partition_data.length;
      }
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

export interface Env {
  broker: RunningBroker;
  address: string;
  cluster(options?: Partial<ClusterOptions>): TestCluster;
  producer(config?: ProducerConfig, cluster?: TestCluster): { producer: Producer; cluster: TestCluster };
}

export async function with_env(
  options: { auto_create_topics?: boolean; topics?: Record<string, number> },
  work: (env: Env) => Promise<void>,
): Promise<void> {
  const data_dir = temp_dir('sdk-producer');
  const broker = await start_broker({
    data_dir,
    kafka: { host: '127.0.0.1', port: 0 },
    auto_create_topics: options.auto_create_topics ?? true,
  });
  const address = `${broker.kafka_address.host}:${broker.kafka_address.port}`;
  const clusters: TestCluster[] = [];
  const producers: Producer[] = [];
  const env: Env = {
    broker,
    address,
    cluster: (overrides = {}) => {
      const cluster = new TestCluster({
        brokers: [address],
        client_id: 'producer-test',
        retry: { ...RETRY_DEFAULT, initial_retry_ms: 20 },
        request_timeout_ms: 10_000,
        max_in_flight: 16,
        ...overrides,
      });
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
    for (const [name, partitions] of Object.entries(options.topics ?? {})) {
      await broker.broker.topics.create(name, partitions);
    }
    await work(env);
  } finally {
    for (const producer of producers) {
      await bounded(
        producer.disconnect().catch(() => undefined),
        10_000,
        'producer disconnect',
      );
    }
    for (const cluster of clusters) await cluster.close();
    await broker.close();
    fs.rmSync(data_dir, { recursive: true, force: true });
  }
}

/** `promise`, or a rejection after `ms`. */
export function bounded<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Whether `promise` is still pending after `ms`. */
export async function pending_after<T>(promise: Promise<T>, ms: number): Promise<boolean> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await new Promise((resolve) => setTimeout(resolve, ms));
  return !settled;
}

export interface StoredBatch {
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
export async function stored(broker: RunningBroker, topic: string, partition = 0): Promise<StoredBatch[]> {
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

export const records_of = (batches: StoredBatch[]): DecodedRecord[] => batches.flatMap((batch) => batch.records);
export const header = (record: DecodedRecord, key: string): string[] =>
  (record.headers ?? []).filter((h) => h.key === key).map((h) => h.value?.toString() ?? '');

/** A Produce answer carrying `error_code` for every partition of the request. */
export function error_response(body: Value, error_code: number): SendResult {
  const responses = (body.topic_data as Array<{ name: string; partition_data: Array<{ index: number }> }>).map(
    (topic) => ({
      name: topic.name,
      partition_responses: topic.partition_data.map((p) => ({
        index: p.index,
        error_code,
        base_offset: -1,
        log_append_time_ms: -1,
        log_start_offset: -1,
        record_errors: [],
        error_message: null,
      })),
    }),
  );
  return { version: 9, response: { responses, throttle_time_ms: 0 } };
}
