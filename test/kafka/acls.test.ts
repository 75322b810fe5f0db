// ACLs on the Kafka listener of a broker process started with --authorization, users logging in
// with SCRAM, through kafkajs's admin, producer and consumer: a user with only READ on topic `a`
// and group `g` consumes `a` in `g`, and is refused producing to `a`, reading `b`, creating or
// deleting anything and managing ACLs, each with Kafka's *_AUTHORIZATION_FAILED; topics it may not
// describe are left out of Metadata. Prefixed patterns, a deny over an allow, bindings that cannot
// apply (a clear INVALID_REQUEST; the broker stays up) and a broker without authorization
// (SECURITY_DISABLED) too; `sluice acl` and the SDK's admin calls.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import kafkajs, { Kafka, logLevel, type AclEntry } from 'kafkajs';

// Not found by Node's named-export detection in kafkajs's CommonJS: taken from its default export.
const { AclOperationTypes, AclPermissionTypes, AclResourceTypes, ResourcePatternTypes } = kafkajs;
import { new_data_dir, start_broker_process, type BrokerProcess } from '../support/broker_process.ts';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { SLUICE_CLI } from '../support/cli.ts';
import * as SdkAcl from '../../src/sdk/index.ts';
import { Sluice } from '../../src/sdk/index.ts';
import { sasl_connection } from '../support/sasl_connection.ts';
import { METADATA } from '../../src/protocol/kafka/messages/03_metadata.ts';
import { DESCRIBE_GROUPS } from '../../src/protocol/kafka/messages/15_describe_groups.ts';

const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
const USERS = { admin: 'admin-secret', alice: 'alice-secret', bob: 'bob-secret' };
const TOPIC_AUTHORIZATION_FAILED = /not authorized to access topics|TOPIC_AUTHORIZATION_FAILED/i;

let broker: BrokerProcess;
let open_broker: BrokerProcess;

before(async () => {
  const data_dir = new_data_dir('acls');
  const users_file = path.join(data_dir, 'users.json');
  fs.writeFileSync(users_file, JSON.stringify({ users: USERS }), { mode: 0o600 });
  const args = ['--sasl-users', users_file, '--authorization', '--super-users', 'User:admin'];
  broker = await start_broker_process({ data_dir, args });
  open_broker = await start_broker_process();
  await seed();
});

/** Topics a, b and logs-1 with messages; alice may read topic a in group g. */
async function seed(): Promise<void> {
  await as_admin(async (admin) => {
    await admin.createTopics({ topics: [{ topic: 'a' }, { topic: 'b' }, { topic: 'logs-1' }] });
    const producer = client('admin').producer();
    await producer.connect();
    await producer.send({ topic: 'a', messages: [{ value: 'one' }, { value: 'two' }] });
    await producer.send({ topic: 'b', messages: [{ value: 'hidden' }] });
    await producer.disconnect();
    await admin.createAcls({
      acl: [allow({}), allow({ resourceType: AclResourceTypes.GROUP, resourceName: 'g' })],
    });
  });
}

after(async () => {
  await broker?.stop();
  await open_broker?.stop();
  for (const b of [broker, open_broker]) if (b) fs.rmSync(b.data_dir, { recursive: true, force: true });
});

function client(user: keyof typeof USERS, target = broker): Kafka {
  return new Kafka({
    brokers: [target.bootstrap],
    clientId: `acl-${user}`,
    logLevel: logLevel.NOTHING,
    sasl: { mechanism: 'scram-sha-256', username: user, password: USERS[user] },
    retry: { retries: 1, initialRetryTime: 50 },
  });
}

const allow = (change: Partial<AclEntry>): AclEntry => ({
  resourceType: AclResourceTypes.TOPIC,
  resourceName: 'a',
  resourcePatternType: ResourcePatternTypes.LITERAL,
  principal: 'User:alice',
  host: '*',
  operation: AclOperationTypes.READ,
  permissionType: AclPermissionTypes.ALLOW,
  ...change,
});

/** kafkajs gathers CreateTopics and DeleteTopics errors: true when every one has `type`. */
const all_of_type = (type: string) => (error: unknown) => {
  const errors = (error as { errors?: Array<{ type?: string }> }).errors ?? [error as { type?: string }];
  return errors.length > 0 && errors.every((e) => e.type === type);
};

function sdk_admin(user: keyof typeof USERS) {
  return new Sluice({
    brokers: [broker.bootstrap],
    sasl: { mechanism: 'scram-sha-256', username: user, password: USERS[user] },
    retry: { retries: 1, initialRetryTime: 50 },
  }).admin();
}

async function as_admin<T>(
  work: (admin: ReturnType<Kafka['admin']>) => Promise<T>,
  user: keyof typeof USERS = 'admin',
) {
  const admin = client(user).admin();
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.disconnect();
  }
}

test('a user with READ on topic a and group g consumes a in g', async () => {
  const consumer = client('alice').consumer({ groupId: 'g' });
  await consumer.connect();
  await consumer.subscribe({ topic: 'a', fromBeginning: true });
  const read: string[] = [];
  await consumer.run({ eachMessage: async ({ message }) => void read.push(message.value!.toString()) });
  const deadline = Date.now() + 20_000;
  while (read.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  await consumer.disconnect();
  assert.deepEqual(read, ['one', 'two']);
  const committed = await as_admin((admin) => admin.fetchOffsets({ groupId: 'g', topics: ['a'] }));
  assert.equal(committed[0]!.partitions[0]!.offset, '2', 'its offsets were committed in g');
});

test('the same user is refused producing to a, reading b, and a group it has no ACL for', async () => {
  const producer = client('alice').producer();
  await producer.connect();
  await assert.rejects(producer.send({ topic: 'a', messages: [{ value: 'x' }] }), TOPIC_AUTHORIZATION_FAILED);
  await producer.disconnect();
  // kafkajs reports a group it may not describe as a coordinator not found; the SDK gives the code.
  const sdk = sdk_admin('alice');
  await sdk.connect();
  await assert.rejects(sdk.fetchOffsets({ groupId: 'elsewhere', topics: ['a'] }), /GROUP_AUTHORIZATION_FAILED/);
  await sdk.disconnect();
  await as_admin(async (admin) => {
    await assert.rejects(admin.fetchTopicOffsets('b'), TOPIC_AUTHORIZATION_FAILED);
    const metadata = await admin.fetchTopicMetadata();
    assert.deepEqual(
      metadata.topics.map((t) => t.name).sort(),
      ['a'],
      'Metadata lists only the topics it may describe',
    );
  }, 'alice');
});

test('the same user may not create or delete topics, or manage ACLs', async () => {
  await as_admin(async (admin) => {
    await assert.rejects(admin.createTopics({ topics: [{ topic: 'c' }] }), all_of_type('TOPIC_AUTHORIZATION_FAILED'));
    await assert.rejects(admin.deleteTopics({ topics: ['a'] }), all_of_type('TOPIC_AUTHORIZATION_FAILED'));
    await assert.rejects(
      admin.createAcls({ acl: [allow({ principal: 'User:alice', operation: AclOperationTypes.ALL })] }),
      all_of_type('CLUSTER_AUTHORIZATION_FAILED'),
    );
  }, 'alice');
  const topics = await as_admin((admin) => admin.listTopics());
  assert.ok(topics.includes('a') && !topics.includes('c'), 'nothing was created or deleted');
});

test('prefixed patterns, a deny over an allow, DescribeAcls and DeleteAcls', async () => {
  await as_admin((admin) =>
    admin.createAcls({
      acl: [
        allow({
          principal: 'User:bob',
          resourceName: 'logs-',
          resourcePatternType: ResourcePatternTypes.PREFIXED,
          operation: AclOperationTypes.WRITE,
        }),
        allow({ principal: 'User:bob', resourceName: '*', operation: AclOperationTypes.DESCRIBE }),
        allow({
          principal: 'User:bob',
          resourceName: 'b',
          operation: AclOperationTypes.DESCRIBE,
          permissionType: AclPermissionTypes.DENY,
        }),
      ],
    }),
  );
  const producer = client('bob').producer();
  await producer.connect();
  await producer.send({ topic: 'logs-1', messages: [{ value: 'written' }] });
  await producer.disconnect();
  await as_admin(async (admin) => {
    const listed = (await admin.fetchTopicMetadata()).topics
      .map((t) => t.name)
      .filter((name) => !name.startsWith('__'))
      .sort();
    assert.deepEqual(listed, ['a', 'logs-1'], 'the deny on b wins over describe on *');
  }, 'bob');
  const described = await as_admin((admin) =>
    admin.describeAcls({
      resourceType: AclResourceTypes.ANY,
      resourcePatternType: ResourcePatternTypes.ANY,
      principal: 'User:bob',
      operation: AclOperationTypes.ANY,
      permissionType: AclPermissionTypes.ANY,
    }),
  );
  assert.equal(described.resources.flatMap((r) => r.acls).length, 3);
  const deleted = await as_admin((admin) =>
    admin.deleteAcls({
      filters: [
        {
          resourceType: AclResourceTypes.TOPIC,
          resourcePatternType: ResourcePatternTypes.MATCH,
          resourceName: 'logs-1',
          principal: 'User:bob',
          operation: AclOperationTypes.WRITE,
          permissionType: AclPermissionTypes.ANY,
        },
      ],
    }),
  );
  assert.equal(deleted.filterResponses[0]!.matchingAcls.length, 1, 'the prefixed WRITE matched logs-1');
  const refused = client('bob').producer();
  await refused.connect();
  await assert.rejects(refused.send({ topic: 'logs-1', messages: [{ value: 'again' }] }), TOPIC_AUTHORIZATION_FAILED);
  await refused.disconnect();
});

test('a binding that cannot apply is refused with its reason; the broker serves on', async () => {
  const admin = sdk_admin('admin');
  await admin.connect();
  try {
    const refused = async (entry: Partial<AclEntry>, reason: RegExp) =>
      assert.rejects(admin.createAcls({ acl: [allow(entry) as SdkAcl.AclEntry] }), (error: Error) => {
        assert.match(error.message, /INVALID_REQUEST/);
        assert.match(error.message, reason);
        return true;
      });
    await refused({ host: 'not-an-address' }, /neither an IP address nor \*/);
    await refused({ resourceType: AclResourceTypes.GROUP, operation: AclOperationTypes.WRITE }, /does not apply/);
    await refused({ operation: 42 as unknown as AclEntry['operation'] }, /unknown operation 42/);
    await refused({ resourceType: AclResourceTypes.DELEGATION_TOKEN }, /delegation_token is not served/);
    await refused({ principal: 'alice' }, /TYPE:NAME/);
    assert.ok((await admin.listTopics()).includes('a'));
  } finally {
    await admin.disconnect();
  }
});

test('a broker without --authorization answers the ACL APIs SECURITY_DISABLED', async () => {
  const admin = new Kafka({
    brokers: [open_broker.bootstrap],
    clientId: 'acl-open',
    logLevel: logLevel.NOTHING,
    retry: { retries: 0 },
  }).admin();
  await admin.connect();
  await assert.rejects(admin.createAcls({ acl: [allow({})] }), /SECURITY_DISABLED|security features are disabled/i);
  await admin.disconnect();
});

test('sluice acl add, list and remove; the SDK admin sees the same bindings', async () => {
  const run = (args: string[]) =>
    promisify(execFile)(
      process.execPath,
      [...SLUICE_CLI, 'acl', ...args, '--bootstrap', broker.bootstrap, '--sasl-username', 'admin'],
      {
        env: { ...process.env, SLUICE_SASL_PASSWORD: USERS.admin },
        timeout: 30_000,
      },
    );
  const added = await run([
    'add',
    '--principal',
    'User:bob',
    '--group',
    'team-',
    '--prefixed',
    '--operation',
    'read,describe',
  ]);
  assert.match(added.stdout, /added User:bob allow read on group team- \(prefix\)/);
  const listed = JSON.parse(
    (await run(['list', '--principal', 'User:bob', '--group', 'team-', '--prefixed', '--json'])).stdout,
  );
  assert.deepEqual(listed.map((a: { operation: string }) => a.operation).sort(), ['describe', 'read']);
  const sdk = sdk_admin('admin');
  await sdk.connect();
  const described = await sdk.describeAcls({
    resourceType: SdkAcl.AclResourceTypes.GROUP,
    resourcePatternType: SdkAcl.ResourcePatternTypes.PREFIXED,
    resourceName: 'team-',
    operation: SdkAcl.AclOperationTypes.ANY,
    permissionType: SdkAcl.AclPermissionTypes.ANY,
  });
  await sdk.disconnect();
  assert.equal(described.resources[0]?.acls.length, 2);
  const removed = await run(['remove', '--principal', 'User:bob', '--group', 'team-', '--prefixed']);
  assert.match(removed.stdout, /removed User:bob allow describe on group team-/);
  assert.match((await run(['list', '--principal', 'User:bob', '--group', 'team-', '--prefixed'])).stdout, /no ACLs/);
  await assert.rejects(
    run(['add', '--principal', 'User:bob', '--topic', 'a', '--operation', 'fly']),
    /unknown operation "fly"/,
  );
});

test('authorized operations in Metadata and DescribeGroups, when asked for', async () => {
  const connection = await sasl_connection(broker.bootstrap, {
    mechanism: 'scram-sha-256',
    username: 'alice',
    password: USERS.alice,
  });
  try {
    const metadata = (await connection.call(METADATA, 10, {
      topics: [{ topic_id: ZERO_UUID, name: 'a' }],
      allow_auto_topic_creation: false,
      include_cluster_authorized_operations: true,
      include_topic_authorized_operations: true,
    })) as { topics: Array<{ topic_authorized_operations: number }>; cluster_authorized_operations: number };
    const bits = (...codes: number[]) => codes.reduce((sum, code) => sum | (1 << code), 0);
    // READ on a, which implies DESCRIBE; nothing on the cluster.
    assert.equal(
      metadata.topics[0]!.topic_authorized_operations,
      bits(AclOperationTypes.READ, AclOperationTypes.DESCRIBE),
    );
    assert.equal(metadata.cluster_authorized_operations, 0);
    const groups = (await connection.call(DESCRIBE_GROUPS, 5, {
      groups: ['g'],
      include_authorized_operations: true,
    })) as {
      groups: Array<{ authorized_operations: number }>;
    };
    assert.equal(groups.groups[0]!.authorized_operations, bits(AclOperationTypes.READ, AclOperationTypes.DESCRIBE));
  } finally {
    connection.close();
  }
});
