// What the cluster tests share: one cluster of three broker processes and an etcd per test file,
// whole again before each test; Produce requests sent straight to one broker (bypassing the
// client's retries, so a refusal is seen as the broker gave it); and the sluice CLI.
import { before, beforeEach, after } from 'node:test';
import { spawn } from 'node:child_process';
import type { Admin } from 'kafkajs';
import { etcd_missing } from '../support/etcd.ts';
import { type ClusterSettings, type TestCluster, start_cluster } from '../support/cluster.ts';
import { Connection } from '../../src/protocol/kafka/client_connection.ts';
import { PRODUCE } from '../../src/protocol/kafka/messages/00_produce.ts';
import { encode_record_batch } from '../../src/protocol/record_batch.ts';
import { SLUICE_CLI } from '../support/cli.ts';

/** Why the cluster tests are skipped, or null (under CI a missing etcd fails instead). */
export const missing = etcd_missing();

export interface SharedCluster {
  cluster: TestCluster;
  admin: Admin;
}

/**
 * Starts a three-broker cluster before the file's tests and stops it after them (SLUICE_DUMP=1
 * prints each broker's last output first). The fields are set once the `before` hook has run.
 */
export function shared_cluster(settings: ClusterSettings = {}): SharedCluster {
  const shared = {} as SharedCluster;
  before(async () => {
    if (missing) return;
    shared.cluster = await start_cluster(3, settings);
    shared.admin = shared.cluster.kafka('admin').admin();
    await shared.admin.connect();
  });
  // A test may leave brokers killed or restarting: the next one waits until all are registered.
  beforeEach(async () => {
    if (missing) return;
    const { cluster, admin } = shared;
    await cluster.wait_for(
      'every broker registered',
      async () => (await admin.describeCluster()).brokers.length === cluster.brokers.size,
      30_000,
    );
  });
  after(async () => {
    if (missing) return;
    const { cluster, admin } = shared;
    if (process.env.SLUICE_DUMP)
      for (const [id, b] of cluster.brokers) process.stderr.write(`---- ${id}\n${b.output().slice(-6000)}\n`);
    await admin?.disconnect();
    await cluster?.stop();
  });
  return shared;
}

/** A topic with three replicas and min.insync.replicas=2 (and `configs`), once every partition has an ISR of 3. */
export async function create_replicated_topic(
  { cluster, admin }: SharedCluster,
  topic: string,
  partitions = 1,
  configs: Record<string, string> = {},
): Promise<void> {
  const entries = Object.entries({ 'min.insync.replicas': '2', ...configs }).map(([name, value]) => ({ name, value }));
  await admin.createTopics({
    topics: [{ topic, numPartitions: partitions, replicationFactor: 3, configEntries: entries }],
  });
  for (let p = 0; p < partitions; p++)
    await cluster.wait_for('ISR of 3', async () => (await cluster.partition(admin, topic, p)).isr.length === 3);
}

/** One Produce request straight to a broker, answered with the partition's error code and offset. */
export async function produce_to(
  port: number,
  topic: string,
  values: string[],
  acks: number,
): Promise<{ error_code: number; base_offset: number }> {
  const connection = await Connection.connect('127.0.0.1', port, { request_timeout_ms: 30_000 });
  try {
    return await send_produce(connection, topic, values, acks);
  } finally {
    connection.close();
  }
}

export async function send_produce(
  connection: Connection,
  topic: string,
  values: string[],
  acks: number,
  partition = 0,
): Promise<{ error_code: number; base_offset: number }> {
  const records = encode_record_batch(
    values.map((value) => ({ key: null, value: Buffer.from(value), timestamp_ms: Date.now() })),
  );
  const response = (await connection.call(PRODUCE, 9, {
    transactional_id: null,
    acks,
    timeout_ms: 30_000,
    topic_data: [{ name: topic, partition_data: [{ index: partition, records }] }],
  })) as { responses: Array<{ partition_responses: Array<{ error_code: number; base_offset: number }> }> };
  return response.responses[0]!.partition_responses[0]!;
}

/** The values a new consumer group reads from the start of `topic`, in order, once `done` says so. */
export async function read_until(
  { cluster }: SharedCluster,
  topic: string,
  group: string,
  done: (values: readonly string[]) => boolean,
): Promise<string[]> {
  const consumer = cluster.kafka(group).consumer({ groupId: group });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const values: string[] = [];
  await new Promise<void>(
    (resolve) =>
      void consumer.run({
        eachMessage: async ({ message }) => void (values.push(message.value!.toString()), done(values) && resolve()),
      }),
  );
  await consumer.disconnect();
  return values;
}

export async function run_cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...SLUICE_CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
