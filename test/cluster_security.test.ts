// A cluster whose listeners require TLS with client certificates and SASL: brokers replicate over
// TLS, presenting their own certificates and logging in to each other as the inter-broker user;
// clients with a certificate and credentials produce with acks=all and read back, and one without a
// certificate, or with another CA's, is refused. With --authorization: ACLs made through one broker
// are in force on all, and brokers (the inter-broker user, a super user) replicate. Needs etcd and
// openssl.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { etcd_missing } from './support/etcd.ts';
import { type TestCluster, start_cluster } from './support/cluster.ts';
import { make_ca, make_client_cert, make_server_cert, openssl_missing, type TestCa } from './support/test_ca.ts';
import { Sluice } from '../src/sdk/index.ts';
import kafkajs, { Kafka, logLevel } from 'kafkajs';

// Not found by Node's named-export detection in kafkajs's CommonJS: taken from its default export.
const { AclOperationTypes, AclPermissionTypes, AclResourceTypes, ResourcePatternTypes } = kafkajs;

const missing = etcd_missing() ?? openssl_missing();
let dir: string;
let ca: TestCa;
let alice: TestCa;
let stranger: TestCa;
const USERS = { alice: 'alice-secret', admin: 'admin-secret', broker: 'broker-secret' };
const MESSAGES = 200;

let cluster: TestCluster;

before(async () => {
  if (missing) return;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-cluster-tls-'));
  ca = make_ca(dir, 'cluster-ca');
  const broker = { cert_file: path.join(dir, 'broker.pem'), key_file: path.join(dir, 'broker.key') };
  make_server_cert(ca, broker.cert_file, broker.key_file);
  alice = make_client_cert(ca, 'alice', '/CN=alice');
  stranger = make_client_cert(make_ca(dir, 'other-ca'), 'stranger', '/CN=alice');
  const tls = { broker, ca_file: ca.cert_file, client: presenting(alice) };
  const sasl = { users: USERS, inter_broker_user: 'broker' };
  cluster = await start_cluster(3, { sasl, tls, args: ['--authorization', '--super-users', 'User:admin'] });
});

after(async () => {
  if (missing) return;
  await cluster?.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** TLS options trusting the cluster's CA and presenting `certificate` (none: no client certificate). */
function presenting(certificate: TestCa | null) {
  const ca_pem = fs.readFileSync(ca.cert_file);
  if (!certificate) return { ca: ca_pem };
  return { ca: ca_pem, cert: fs.readFileSync(certificate.cert_file), key: fs.readFileSync(certificate.key_file) };
}

function client(password = USERS.alice, certificate: TestCa | null = alice, username = 'alice'): Sluice {
  return new Sluice({
    brokers: cluster.bootstrap,
    clientId: 'secured-cluster',
    sasl: { mechanism: 'scram-sha-256', username, password },
    ssl: presenting(certificate),
    retry: { retries: certificate === alice ? 20 : 1, initialRetryTime: 100 },
  });
}

test(
  'with mTLS and SASL on every listener, followers connect to their leaders: acks=all goes through three replicas',
  { skip: missing ?? false, timeout: 120_000 },
  async () => {
    const sluice = client(USERS.admin, alice, 'admin');
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
      await grant_alice('secured');
      const producer = client().producer({ acks: -1 });
      await producer.connect();
      for (let i = 0; i < MESSAGES; i += 20) {
        await producer.send({
          topic: 'secured',
          acks: -1,
          messages: Array.from({ length: 20 }, (_, j) => ({ key: String(i + j), value: `m${i + j}` })),
        });
      }
      await producer.disconnect();
      const reader = client().admin();
      await reader.connect();
      const read = await reader.readTopic('secured', { max: MESSAGES });
      await reader.disconnect();
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
    for (const certificate of [null, stranger]) {
      const refused = client(USERS.alice, certificate).producer();
      await assert.rejects(refused.connect(), Error, 'a client without a certificate of the CA is refused');
    }
  },
);

/** A kafkajs admin of `user` talking to one broker only (so the answer is that broker's). */
function kafkajs_admin(user: keyof typeof USERS, port: number) {
  return new Kafka({
    brokers: [`127.0.0.1:${port}`],
    clientId: 'secured-cluster-acls',
    ssl: presenting(alice),
    sasl: { mechanism: 'scram-sha-256', username: user, password: USERS[user] },
    logLevel: logLevel.NOTHING,
  }).admin();
}

/**
 * Alice may write and read `topic`: granted through one broker, in force on every one (each
 * answers DescribeAcls with the bindings, read from etcd).
 */
async function grant_alice(topic: string): Promise<void> {
  const entry = {
    resourceType: AclResourceTypes.TOPIC,
    resourceName: topic,
    resourcePatternType: ResourcePatternTypes.LITERAL,
    principal: 'User:alice',
    host: '*',
    permissionType: AclPermissionTypes.ALLOW,
  };
  const ports = [...cluster.ports.values()];
  const admin = kafkajs_admin('admin', ports[0]!);
  await admin.connect();
  await admin.createAcls({
    acl: [AclOperationTypes.WRITE, AclOperationTypes.READ].map((operation) => ({ ...entry, operation })),
  });
  await admin.disconnect();
  for (const port of ports) {
    const other = kafkajs_admin('admin', port);
    await other.connect();
    const filter = { ...entry, operation: AclOperationTypes.ANY, permissionType: AclPermissionTypes.ANY };
    await cluster.wait_for(`the ACLs on the broker at ${port}`, async () => {
      const described = await other.describeAcls(filter);
      return described.resources.flatMap((r) => r.acls).length === 2;
    });
    await other.disconnect();
  }
}

test(
  'a user added through one broker logs in on every broker at once; removed, on none',
  { skip: missing ?? false, timeout: 120_000 },
  async () => {
    const admin = client(USERS.admin, alice, 'admin').admin();
    await admin.connect();
    const dave = (port: number) =>
      new Kafka({
        brokers: [`127.0.0.1:${port}`],
        clientId: 'managed-user',
        ssl: presenting(alice),
        sasl: { mechanism: 'scram-sha-256', username: 'dave', password: 'dave-secret' },
        logLevel: logLevel.NOTHING,
        retry: { retries: 0 },
      }).admin();
    const logs_in = async (port: number) => {
      const connection = dave(port);
      try {
        await connection.connect();
        await connection.listTopics();
        return true;
      } catch {
        return false;
      } finally {
        await connection.disconnect().catch(() => undefined);
      }
    };
    try {
      await admin.upsertUserScramCredential({ user: 'dave', password: 'dave-secret' });
      // Each broker learns the user through its etcd watch: within milliseconds, allowed a few seconds.
      for (const port of cluster.ports.values())
        await cluster.wait_for(`dave logs in at ${port}`, () => logs_in(port), 5_000);
      await admin.deleteUserScramCredential({ user: 'dave' });
      for (const port of cluster.ports.values())
        await cluster.wait_for(`dave is refused at ${port}`, async () => !(await logs_in(port)), 5_000);
    } finally {
      await admin.disconnect();
    }
  },
);
