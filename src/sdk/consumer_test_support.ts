// The consumer tests' harness: an in-process broker per test, clusters and consumers that are closed
// with it (their crash events collected), kafkajs clients of the same broker, batches appended
// directly, and the checks the tests share (exactly once, order per key, assignments covering a
// topic).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { Kafka, logLevel } from 'kafkajs';
import { Cluster, RETRY_DEFAULT } from './cluster.ts';
import {
  Consumer,
  type ConsumerConfig,
  type ConsumerRunConfig,
  type EachMessagePayload,
  type TopicPartitions,
} from './consumer.ts';
import { encode_record_batch, type BatchRecord } from '../protocol/record_batch.ts';
import { start_broker, type RunningBroker } from '../compose/start_broker.ts';
import { temp_dir } from '../../test/support/storage.ts';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';

export const WAIT_MS_MAX = 15_000;
/** Short group timings so rebalances take a fraction of a second. */
export const FAST: ConsumerConfig = {
  sessionTimeout: 6_000,
  rebalanceTimeout: 5_000,
  heartbeatInterval: 100,
  maxWaitTimeInMs: 100,
};

export interface Seen {
  member: string;
  topic: string;
  partition: number;
  offset: number;
  key: string;
  value: string;
}

export async function until(condition: () => boolean, what: string, ms = WAIT_MS_MAX): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class Harness {
  private readonly clusters: Cluster[] = [];
  private readonly consumers: Consumer[] = [];
  private readonly closers: Array<() => Promise<void>> = [];

  private constructor(
    readonly broker: RunningBroker,
    private readonly data_dir: string,
  ) {}

  /** A broker of its own; `transaction_version` is the transaction.version it offers (2 by default). */
  static async start(name: string, transaction_version = 2): Promise<Harness> {
    const data_dir = temp_dir(`sdk-consumer-${name}`);
    const broker = await start_broker({
      data_dir,
      kafka: { host: '127.0.0.1', port: 0 },
      auto_create_topics: false,
      transactions: { version: transaction_version },
    });
    return new Harness(broker, data_dir);
  }

  get bootstrap(): string {
    return `${this.broker.kafka_address.host}:${this.broker.kafka_address.port}`;
  }

  cluster(): Cluster {
    const cluster = new Cluster({
      brokers: [this.bootstrap],
      client_id: 'sdk-consumer-test',
      retry: { ...RETRY_DEFAULT, retries: 5, initial_retry_ms: 50, max_retry_ms: 500 },
      request_timeout_ms: 10_000,
      max_in_flight: 16,
    });
    this.clusters.push(cluster);
    return cluster;
  }

  /** Errors the consumers reported (CRASH events), checked at the end of each test. */
  readonly crashes: Array<{ error: unknown; restart: boolean }> = [];

  consumer(config: ConsumerConfig): Consumer {
    const consumer = new Consumer(this.cluster(), { ...FAST, ...config });
    consumer.on<{ error: unknown; restart: boolean }>(
      consumer.events.CRASH,
      ({ payload }) => void this.crashes.push(payload),
    );
    this.consumers.push(consumer);
    return consumer;
  }

  /** A consumer subscribed and running, recording what it receives into `seen`. */
  async member(
    name: string,
    seen: Seen[],
    config: ConsumerConfig,
    topics: string[],
    options: {
      fromBeginning?: boolean;
      each?: (payload: EachMessagePayload) => Promise<void> | void;
      run?: Omit<ConsumerRunConfig, 'eachMessage' | 'eachBatch'>;
    } = {},
  ): Promise<Consumer> {
    const consumer = this.consumer(config);
    await consumer.connect();
    await consumer.subscribe({ topics, fromBeginning: options.fromBeginning ?? true });
    await consumer.run({
      ...options.run,
      eachMessage: async (payload) => {
        const { topic, partition, message } = payload;
        seen.push({
          member: name,
          topic,
          partition,
          offset: Number(message.offset),
          key: message.key?.toString() ?? '',
          value: message.value?.toString() ?? '',
        });
        await options.each?.(payload);
      },
    });
    return consumer;
  }

  kafka(client_id: string): Kafka {
    return new Kafka({
      brokers: [this.bootstrap],
      clientId: client_id,
      logLevel: logLevel.NOTHING,
      retry: { retries: 10, initialRetryTime: 50 },
    });
  }

  /** No consumer reported an error, apart from those a test provokes on purpose. */
  assert_no_crashes(expected: RegExp | null = null): void {
    const unexpected = this.crashes.filter((c) => !expected || !expected.test(String(c.error)));
    assert.deepEqual(
      unexpected.map((c) => String(c.error)),
      [],
      'errors reported by the consumers',
    );
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
  async append(
    topic: string,
    partition: number,
    records: Array<{ key: string; value: string; timestamp_ms?: number }>,
  ): Promise<void> {
    const batch: BatchRecord[] = records.map((r) => ({
      key: Buffer.from(r.key),
      value: Buffer.from(r.value),
      timestamp_ms: r.timestamp_ms ?? Date.now(),
    }));
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

export function expected_values(from: number, count: number, keys = 30): string[] {
  const out: string[] = [];
  for (let i = from; i < from + count; i++) out.push(`key-${i % keys}:${Math.floor(i / keys)}`);
  return out;
}

export function assert_exactly_once(seen: Seen[], expected: string[]): void {
  const counts = new Map<string, number>();
  for (const s of seen) counts.set(s.value, (counts.get(s.value) ?? 0) + 1);
  const missing = expected.filter((v) => !counts.has(v));
  const duplicated = [...counts].filter(([, n]) => n > 1).map(([v]) => v);
  assert.deepEqual(missing, [], 'every message received');
  assert.deepEqual(duplicated, [], 'no message received twice');
  assert.equal(seen.length, expected.length);
}

export function assert_key_order(seen: Seen[]): void {
  const last = new Map<string, number>();
  for (const s of seen) {
    const [key, seq] = s.value.split(':');
    const before = last.get(key!) ?? -1;
    assert.ok(Number(seq) > before, `${key} out of order: ${seq} after ${before}`);
    last.set(key!, Number(seq));
  }
}

export function partitions_of(assignments: TopicPartitions[][]): string[] {
  return assignments.flatMap((a) => a.flatMap((t) => t.partitions.map((p) => `${t.topic}/${p}`))).sort();
}

/** True when the members' assignments are disjoint and together cover `count` partitions of `topic`. */
export function covers(assignments: TopicPartitions[][], topic: string, count: number): boolean {
  const all = partitions_of(assignments);
  const wanted = Array.from({ length: count }, (_, p) => `${topic}/${p}`).sort();
  return JSON.stringify(all) === JSON.stringify(wanted);
}
