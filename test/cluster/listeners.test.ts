// Two listeners on each broker of a two-broker cluster: SASL (the first, which brokers use for one
// another) and plaintext. Each broker registers both addresses; Metadata asked on either listener
// of either broker names every broker at its address on that listener, and a topic replicated
// between them (over the SASL listener) is read on the plaintext one.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { etcd_missing, free_port, start_etcd, type EtcdProcess } from '../support/etcd.ts';
import { new_data_dir, start_broker_process, type BrokerProcess } from '../support/broker_process.ts';
import { Connection } from '../../src/protocol/kafka/client_connection.ts';
import { METADATA } from '../../src/protocol/kafka/messages/03_metadata.ts';
import { sasl_connection } from '../support/sasl_connection.ts';
import { until } from '../support/until.ts';

const missing = etcd_missing();
const USERS = { broker: 'broker-pw', alice: 'alice-pw' };
let etcd: EtcdProcess;
let dir: string;
const brokers: BrokerProcess[] = [];
const ports = new Map<number, { sasl: number; plain: number }>();

before(async () => {
  if (missing) return;
  etcd = await start_etcd();
  dir = new_data_dir('cluster-listeners');
  const users_file = path.join(dir, 'users.json');
  fs.writeFileSync(users_file, JSON.stringify({ users: USERS }), { mode: 0o600 });
  const config_file = path.join(dir, 'config.json');
  const cluster = { leaseTtlMs: 2000, replicationFactor: 2, interBrokerUser: 'broker' };
  fs.writeFileSync(config_file, JSON.stringify({ cluster }));
  for (const node_id of [1, 2]) {
    ports.set(node_id, { sasl: await free_port(), plain: await free_port() });
    const { sasl, plain } = ports.get(node_id)!;
    const args = [
      ...['--etcd', etcd.endpoint, '--node-id', String(node_id), '--config', config_file, '--sasl-users', users_file],
      ...['--listeners', `SASL_PLAINTEXT://127.0.0.1:${sasl},PLAINTEXT://127.0.0.1:${plain}`],
    ];
    brokers.push(await start_broker_process({ data_dir: new_data_dir(`listeners-node${node_id}`), args }));
  }
});

after(async () => {
  for (const broker of brokers) await broker.stop().catch(() => undefined);
  await etcd?.stop();
  for (const broker of brokers) fs.rmSync(broker.data_dir, { recursive: true, force: true });
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

async function brokers_named(connection: Connection): Promise<string[]> {
  const metadata = await connection.call(METADATA, 9, { topics: null, allow_auto_topic_creation: false });
  connection.close();
  return metadata.brokers.map((b) => `${b.node_id}@${b.port}`).sort();
}

test(
  'Metadata on each listener names every broker at its address on that listener',
  { skip: missing ?? false },
  async () => {
    const expect = (kind: 'sasl' | 'plain') => [1, 2].map((id) => `${id}@${ports.get(id)![kind]}`).sort();
    const login = { mechanism: 'plain' as const, username: 'alice', password: USERS.alice };
    // Each broker sees the other's registration once its watch delivers it.
    const named = async (id: number) => {
      const { sasl, plain } = ports.get(id)!;
      const on_plain = await brokers_named(await Connection.connect('127.0.0.1', plain));
      const on_sasl = await brokers_named(await sasl_connection(`127.0.0.1:${sasl}`, login));
      return JSON.stringify({ on_plain, on_sasl });
    };
    const wanted = JSON.stringify({ on_plain: expect('plain'), on_sasl: expect('sasl') });
    for (const id of [1, 2]) await until(async () => (await named(id)) === wanted, `broker ${id} naming both`, 10_000);
    assert.equal(await named(1), wanted);
  },
);

test(
  'written through the SASL listener, replicated, read on the plaintext one',
  { skip: missing ?? false },
  async () => {
    const sasl = new Kafka({
      brokers: [`127.0.0.1:${ports.get(1)!.sasl}`],
      clientId: 'writer',
      logLevel: logLevel.NOTHING,
      sasl: { mechanism: 'plain', username: 'alice', password: USERS.alice },
    });
    const admin = sasl.admin();
    await admin.connect();
    await admin.createTopics({
      topics: [{ topic: 'doors', numPartitions: 2, replicationFactor: 2 }],
      waitForLeaders: true,
    });
    await admin.disconnect();
    const producer = sasl.producer();
    await producer.connect();
    await producer.send({
      topic: 'doors',
      acks: -1,
      messages: [
        { partition: 0, value: 'a' },
        { partition: 1, value: 'b' },
      ],
    });
    await producer.disconnect();
    const plain = new Kafka({
      brokers: [`127.0.0.1:${ports.get(2)!.plain}`],
      clientId: 'reader',
      logLevel: logLevel.NOTHING,
    });
    const consumer = plain.consumer({ groupId: 'doors' });
    await consumer.connect();
    await consumer.subscribe({ topic: 'doors', fromBeginning: true });
    const seen: string[] = [];
    await new Promise<void>((resolve) => {
      void consumer.run({
        eachMessage: async ({ message }) => {
          seen.push(message.value!.toString());
          if (seen.length === 2) resolve();
        },
      });
    });
    await consumer.disconnect();
    assert.deepEqual(seen.sort(), ['a', 'b']);
  },
);
