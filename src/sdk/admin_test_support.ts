// The admin tests' setup: one in-process broker per test file, with an admin client and a
// kafkajs client of it (the bindings below are set by start() and read by the tests), and the
// helpers the tests share.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import { Admin } from './admin.ts';
import { Cluster, RETRY_DEFAULT } from './cluster.ts';
import { KafkaProtocolError } from './errors.ts';
import { start_broker, type RunningBroker } from '../compose/start_broker.ts';
import { temp_dir } from '../../test/support/storage.ts';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
export const TEST_TIMEOUT_MS = 60_000;
const WAIT_MS_MAX = 20_000;
export const T0 = 1_700_000_000_000;

let data_dir: string;
export let broker: RunningBroker;
export let cluster: Cluster;
export let admin: Admin;
export let kafka: Kafka;

export async function until<T>(
  probe: () => Promise<T | null | undefined | false> | T | null | undefined | false,
  what: string,
  ms = WAIT_MS_MAX,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Produces `count` messages to one partition, timestamps T0 + i seconds. */
export async function produce(topic: string, partition: number, count: number, first = 0): Promise<void> {
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  try {
    const messages = Array.from({ length: count }, (_, i) => ({
      partition,
      key: `k${first + i}`,
      value: `v${first + i}`,
      timestamp: String(T0 + (first + i) * 1000),
    }));
    await producer.send({ topic, acks: -1, messages });
  } finally {
    await producer.disconnect();
  }
}

/** Asserts that `promise` rejects with a KafkaProtocolError of `type`; returns the error. */
export async function rejects_with(promise: Promise<unknown>, type: string): Promise<KafkaProtocolError> {
  let caught: unknown = null;
  await promise.then(
    () => assert.fail(`expected ${type}, the call succeeded`),
    (error: unknown) => {
      caught = error;
    },
  );
  assert.ok(caught instanceof KafkaProtocolError, `expected a KafkaProtocolError, got ${String(caught)}`);
  assert.equal(caught.type, type, caught.message);
  return caught;
}

/** A kafkajs consumer of `group` recording what it receives. */
export async function start_consumer(
  group: string,
  topic: string,
  from_beginning: boolean,
  seen: Array<{ offset: number; value: string }>,
): Promise<Consumer> {
  const consumer = kafka.consumer({
    groupId: group,
    sessionTimeout: 10_000,
    heartbeatInterval: 500,
    maxWaitTimeInMs: 100,
    retry: { retries: 5, initialRetryTime: 100 },
  });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: from_beginning });
  await consumer.run({
    eachMessage: async ({ message }) => {
      seen.push({ offset: Number(message.offset), value: message.value!.toString() });
    },
  });
  return consumer;
}

/** One broker for every test, with an admin and a kafkajs client of it. */
export async function start(): Promise<void> {
  data_dir = temp_dir('sdk-admin');
  broker = await start_broker({
    data_dir,
    kafka: { host: '127.0.0.1', port: 0 },
    auto_create_topics: false,
    default_partitions: 2,
  });
  const { host, port } = broker.kafka_address;
  cluster = new Cluster({
    brokers: [`${host}:${port}`],
    client_id: 'admin-test',
    retry: { ...RETRY_DEFAULT, retries: 3, initial_retry_ms: 50, max_retry_ms: 500 },
    request_timeout_ms: 10_000,
    max_in_flight: 8,
  });
  admin = new Admin(cluster);
  kafka = new Kafka({
    brokers: [`${host}:${port}`],
    clientId: 'admin-test-kafkajs',
    logLevel: logLevel.NOTHING,
    retry: { retries: 5, initialRetryTime: 100 },
  });
  await admin.connect();
}

/** Closes the admin and the broker, and removes the broker's data. */
export async function stop(): Promise<void> {
  await admin?.disconnect();
  await broker?.close();
  if (data_dir) fs.rmSync(data_dir, { recursive: true, force: true });
}
