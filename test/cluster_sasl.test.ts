// A cluster whose listeners require SASL: brokers replicate by logging in to each other as the
// inter-broker user, and clients with credentials produce with acks=all and read back. Needs etcd.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { etcd_missing } from './support/etcd.ts';
import { type TestCluster, start_cluster } from './support/cluster.ts';
import { Sluice } from '../src/sdk/index.ts';

const missing = etcd_missing();
const USERS = { alice: 'alice-secret', broker: 'broker-secret' };
const MESSAGES = 200;

let cluster: TestCluster;

before(async () => {
  if (missing) return;
  cluster = await start_cluster(3, { sasl: { users: USERS, inter_broker_user: 'broker' } });
});

after(async () => {
  if (missing) return;
  await cluster?.stop();
});

function client(password = USERS.alice): Sluice {
  return new Sluice({
    brokers: cluster.bootstrap,
    clientId: 'sasl-cluster',
    sasl: { mechanism: 'scram-sha-256', username: 'alice', password },
    retry: { retries: 20, initialRetryTime: 100 },
  });
}

test(
  'with SASL on every listener, followers log in to their leaders: acks=all goes through three replicas',
  { skip: missing ?? false, timeout: 120_000 },
  async () => {
    const sluice = client();
    const admin = sluice.admin();
    await admin.connect();
    try {
      await admin.createTopics({
        topics: [
          {
            topic: 'secured',
            numPartitions: 2,
            replicationFactor: 3,
            configEntries: [{ name: 'min.insync.replicas', value: '2' }],
          },
        ],
      });
      await cluster.wait_for('a full ISR on both partitions', async () => {
        const metadata = await admin.fetchTopicMetadata({ topics: ['secured'] });
        return metadata.topics[0]!.partitions.every((p) => p.isr.length === 3);
      });
      const producer = sluice.producer({ acks: -1 });
      await producer.connect();
      for (let i = 0; i < MESSAGES; i += 20) {
        await producer.send({
          topic: 'secured',
          acks: -1,
          messages: Array.from({ length: 20 }, (_, j) => ({ key: String(i + j), value: `m${i + j}` })),
        });
      }
      await producer.disconnect();
      const read = await admin.readTopic('secured', { max: MESSAGES });
      assert.equal(new Set(read.map((m) => m.message.value?.toString())).size, MESSAGES);
      // Every follower caught up through its login: the ISR is still whole after the writes.
      const metadata = await admin.fetchTopicMetadata({ topics: ['secured'] });
      assert.ok(
        metadata.topics[0]!.partitions.every((p) => p.isr.length === 3),
        JSON.stringify(metadata.topics[0]!.partitions),
      );
    } finally {
      await admin.disconnect();
    }
    const wrong = client('not-the-password').producer();
    await assert.rejects(wrong.connect(), /SASL|authentication|login/i, 'a wrong password is still refused');
  },
);
