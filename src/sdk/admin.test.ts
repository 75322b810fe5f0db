// The admin client against an in-process broker: every method with its result checked, the Kafka
// errors for bad requests (one error naming each failure), groups with and without members, and
// offsets reset by the admin picked up by a kafkajs consumer.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { AssignerProtocol, Kafka, logLevel, type Consumer } from 'kafkajs';
import { Admin, AdminError, ConfigResourceTypes, ConfigSource } from './admin.ts';
import { Cluster, RETRY_DEFAULT } from './cluster.ts';
import { KafkaProtocolError, SluiceError } from './errors.ts';
import type { AnyMessage, ApiSpec } from '../protocol/kafka/schema.ts';
import { start_broker, type RunningBroker } from '../compose/start_broker.ts';
import { temp_dir } from '../../test/support/storage.ts';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
const TEST_TIMEOUT_MS = 60_000;
const WAIT_MS_MAX = 20_000;
const T0 = 1_700_000_000_000;

let data_dir: string;
let broker: RunningBroker;
let cluster: Cluster;
let admin: Admin;
let kafka: Kafka;

async function until<T>(probe: () => Promise<T | null | undefined | false> | T | null | undefined | false, what: string, ms = WAIT_MS_MAX): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Produces `count` messages to one partition, timestamps T0 + i seconds. */
async function produce(topic: string, partition: number, count: number, first = 0): Promise<void> {
  const producer = kafka.producer({ allowAutoTopicCreation: false });
  await producer.connect();
  try {
    const messages = Array.from({ length: count }, (_, i) => ({ partition, key: `k${first + i}`, value: `v${first + i}`, timestamp: String(T0 + (first + i) * 1000) }));
    await producer.send({ topic, acks: -1, messages });
  } finally {
    await producer.disconnect();
  }
}

/** Asserts that `promise` rejects with a KafkaProtocolError of `type`; returns the error. */
async function rejects_with(promise: Promise<unknown>, type: string): Promise<KafkaProtocolError> {
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
async function start_consumer(group: string, topic: string, from_beginning: boolean, seen: Array<{ offset: number; value: string }>): Promise<Consumer> {
  const consumer = kafka.consumer({ groupId: group, sessionTimeout: 10_000, heartbeatInterval: 500, maxWaitTimeInMs: 100, retry: { retries: 5, initialRetryTime: 100 } });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: from_beginning });
  await consumer.run({
    eachMessage: async ({ message }) => {
      seen.push({ offset: Number(message.offset), value: message.value!.toString() });
    },
  });
  return consumer;
}

describe('Admin', () => {
  before(async () => {
    data_dir = temp_dir('sdk-admin');
    broker = await start_broker({ data_dir, kafka: { host: '127.0.0.1', port: 0 }, auto_create_topics: false, default_partitions: 2 });
    const { host, port } = broker.kafka_address;
    cluster = new Cluster({ brokers: [`${host}:${port}`], client_id: 'admin-test', retry: { ...RETRY_DEFAULT, retries: 3, initial_retry_ms: 50, max_retry_ms: 500 }, request_timeout_ms: 10_000, max_in_flight: 8 });
    admin = new Admin(cluster);
    kafka = new Kafka({ brokers: [`${host}:${port}`], clientId: 'admin-test-kafkajs', logLevel: logLevel.NOTHING, retry: { retries: 5, initialRetryTime: 100 } });
    await admin.connect();
  });

  after(async () => {
    await admin?.disconnect();
    await broker?.close();
    if (data_dir) fs.rmSync(data_dir, { recursive: true, force: true });
  });

  test('describeCluster names the broker, the controller and the cluster id', { timeout: TEST_TIMEOUT_MS }, async () => {
    const { host, port } = broker.kafka_address;
    assert.deepEqual(await admin.describeCluster(), { brokers: [{ nodeId: 1, host, port }], controller: 1, clusterId: broker.broker.cluster_id });
  });

  test('topics: create, list, describe, add partitions, delete', { timeout: TEST_TIMEOUT_MS }, async () => {
    assert.equal(
      await admin.createTopics({ topics: [{ topic: 'top-a', numPartitions: 3, replicationFactor: 1, configEntries: [{ name: 'retention.ms', value: '3600000' }] }, { topic: 'top-b' }] }),
      true,
    );
    const listed = await admin.listTopics();
    assert.ok(listed.includes('top-a') && listed.includes('top-b'), `listed: ${listed.join(', ')}`);

    const partition = (partitionId: number) => ({ partitionErrorCode: 0, partitionId, leader: 1, replicas: [1], isr: [1], offlineReplicas: [] });
    assert.deepEqual(await admin.fetchTopicMetadata({ topics: ['top-a', 'top-b'] }), {
      topics: [
        { name: 'top-a', partitions: [0, 1, 2].map(partition) },
        { name: 'top-b', partitions: [0, 1].map(partition) }, // the broker's default partition count
      ],
    });
    const all = await admin.fetchTopicMetadata();
    assert.deepEqual(all.topics.find((t) => t.name === 'top-a')?.partitions.length, 3);

    // An existing topic: false, like kafkajs; the new topic of the same call is created.
    assert.equal(await admin.createTopics({ topics: [{ topic: 'top-a' }] }), false);
    assert.equal(await admin.createTopics({ topics: [{ topic: 'top-a' }, { topic: 'top-c', numPartitions: 1 }] }), false);
    assert.ok((await admin.listTopics()).includes('top-c'));

    // validateOnly checks without creating.
    assert.equal(await admin.createTopics({ topics: [{ topic: 'top-v', numPartitions: 4 }], validateOnly: true }), true);
    assert.ok(!(await admin.listTopics()).includes('top-v'));

    await admin.createPartitions({ topicPartitions: [{ topic: 'top-a', count: 5 }] });
    assert.deepEqual((await admin.fetchTopicMetadata({ topics: ['top-a'] })).topics[0]!.partitions.map((p) => p.partitionId), [0, 1, 2, 3, 4]);
    await admin.createPartitions({ topicPartitions: [{ topic: 'top-a', count: 8 }], validateOnly: true });
    assert.equal((await admin.fetchTopicMetadata({ topics: ['top-a'] })).topics[0]!.partitions.length, 5);

    // A lost connection to the controller is reopened transparently.
    (await cluster.controller()).connection.close();
    await admin.deleteTopics({ topics: ['top-b', 'top-c'] });
    const remaining = await admin.listTopics();
    assert.ok(!remaining.includes('top-b') && !remaining.includes('top-c') && remaining.includes('top-a'), `remaining: ${remaining.join(', ')}`);
  });

  test('topic errors carry the broker code; one error names every failure', { timeout: TEST_TIMEOUT_MS }, async () => {
    const invalid_name = await rejects_with(admin.createTopics({ topics: [{ topic: 'bad name!' }] }), 'INVALID_TOPIC_EXCEPTION');
    assert.equal(invalid_name.code, 17);
    assert.ok(invalid_name instanceof AdminError && invalid_name.failures.length === 1);
    assert.match(invalid_name.message, /CreateTopics topic "bad name!": INVALID_TOPIC_EXCEPTION \(17\)/);
    assert.equal(invalid_name.retriable, false);

    const replication = await rejects_with(admin.createTopics({ topics: [{ topic: 'err-r', replicationFactor: 3 }] }), 'INVALID_REPLICATION_FACTOR');
    assert.equal(replication.code, 38);

    // Two failures and one success in one request: the valid topic is created, the error names both.
    const both = await rejects_with(
      admin.createTopics({ topics: [{ topic: 'err-x y' }, { topic: 'err-ok', numPartitions: 1 }, { topic: 'err-r3', numPartitions: 1, replicationFactor: 3 }] }),
      'INVALID_TOPIC_EXCEPTION',
    );
    assert.ok(both instanceof AdminError);
    assert.deepEqual(
      both.failures.map((f) => [f.resource, f.type]),
      [
        ['topic "err-x y"', 'INVALID_TOPIC_EXCEPTION'],
        ['topic "err-r3"', 'INVALID_REPLICATION_FACTOR'],
      ],
    );
    assert.match(both.message, /failed for 2 resources: topic "err-x y": INVALID_TOPIC_EXCEPTION.*; topic "err-r3": INVALID_REPLICATION_FACTOR/);
    assert.ok((await admin.listTopics()).includes('err-ok'));

    // A missing topic is a final answer for admin requests: no retries.
    const started = Date.now();
    const missing = await rejects_with(admin.deleteTopics({ topics: ['err-missing'] }), 'UNKNOWN_TOPIC_OR_PARTITION');
    assert.equal(missing.retriable, false);
    assert.ok(Date.now() - started < 1000, `deleteTopics took ${Date.now() - started} ms`);
    await rejects_with(admin.fetchTopicMetadata({ topics: ['err-ok', 'err-missing'] }), 'UNKNOWN_TOPIC_OR_PARTITION');
    await rejects_with(admin.fetchTopicOffsets('err-missing'), 'UNKNOWN_TOPIC_OR_PARTITION');
    await rejects_with(admin.createPartitions({ topicPartitions: [{ topic: 'err-ok', count: 1 }] }), 'INVALID_PARTITIONS');
    await rejects_with(admin.createPartitions({ topicPartitions: [{ topic: 'err-missing', count: 3 }] }), 'UNKNOWN_TOPIC_OR_PARTITION');

    // Bad arguments are refused before anything is sent.
    await assert.rejects(admin.createTopics({ topics: [{ topic: 'dup' }, { topic: 'dup' }] }), (error: unknown) => error instanceof SluiceError && !(error instanceof KafkaProtocolError));
    await assert.rejects(admin.setOffsets({ groupId: 'g', topic: 'err-ok', partitions: [{ partition: 0, offset: 'abc' }] }), /not an offset/);
  });

  test('offsets of a topic: watermarks, by timestamp, deleteTopicRecords', { timeout: TEST_TIMEOUT_MS }, async () => {
    await admin.createTopics({ topics: [{ topic: 'off', numPartitions: 2 }] });
    assert.deepEqual(await admin.fetchTopicOffsets('off'), [
      { partition: 0, offset: '0', high: '0', low: '0' },
      { partition: 1, offset: '0', high: '0', low: '0' },
    ]);
    await produce('off', 0, 10);
    await produce('off', 1, 4);
    assert.deepEqual(await admin.fetchTopicOffsets('off'), [
      { partition: 0, offset: '10', high: '10', low: '0' },
      { partition: 1, offset: '4', high: '4', low: '0' },
    ]);

    // Message i has timestamp T0 + i s: the first at or after T0 + 3.5 s is offset 4 in partition 0;
    // partition 1 has none that late, so its high watermark.
    assert.deepEqual(await admin.fetchTopicOffsetsByTimestamp('off', T0 + 3500), [
      { partition: 0, offset: '4' },
      { partition: 1, offset: '4' },
    ]);
    assert.deepEqual(await admin.fetchTopicOffsetsByTimestamp('off', T0), [
      { partition: 0, offset: '0' },
      { partition: 1, offset: '0' },
    ]);
    assert.deepEqual(await admin.fetchTopicOffsetsByTimestamp('off'), [
      { partition: 0, offset: '10' },
      { partition: 1, offset: '4' },
    ]);

    await admin.deleteTopicRecords({ topic: 'off', partitions: [{ partition: 0, offset: '4' }, { partition: 1, offset: '-1' }] });
    assert.deepEqual(await admin.fetchTopicOffsets('off'), [
      { partition: 0, offset: '10', high: '10', low: '4' },
      { partition: 1, offset: '4', high: '4', low: '4' },
    ]);

    const errors = await rejects_with(
      admin.deleteTopicRecords({ topic: 'off', partitions: [{ partition: 0, offset: '11' }, { partition: 1, offset: 4 }] }),
      'OFFSET_OUT_OF_RANGE',
    );
    assert.ok(errors instanceof AdminError);
    assert.deepEqual(
      errors.failures.map((f) => f.resource),
      ['partition 0 of "off"'],
    );
    await rejects_with(admin.deleteTopicRecords({ topic: 'off', partitions: [{ partition: 7, offset: '1' }] }), 'UNKNOWN_TOPIC_OR_PARTITION');
  });

  test('configs: describe, alter (whole set), incremental alter (set and delete)', { timeout: TEST_TIMEOUT_MS }, async () => {
    await admin.createTopics({ topics: [{ topic: 'cfg', numPartitions: 1, configEntries: [{ name: 'retention.ms', value: '3600000' }] }] });
    const entries = async (names?: string[]) => {
      const { resources } = await admin.describeConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: 'cfg', ...(names ? { configNames: names } : {}) }] });
      assert.equal(resources.length, 1);
      assert.equal(resources[0]!.errorCode, 0);
      assert.equal(resources[0]!.resourceName, 'cfg');
      assert.equal(resources[0]!.resourceType, ConfigResourceTypes.TOPIC);
      return new Map(resources[0]!.configEntries.map((e) => [e.configName, e]));
    };

    let configs = await entries(['retention.ms', 'max.message.bytes']);
    assert.deepEqual([...configs.keys()].sort(), ['max.message.bytes', 'retention.ms']);
    assert.deepEqual(configs.get('retention.ms'), {
      configName: 'retention.ms',
      configValue: '3600000',
      isDefault: false,
      configSource: ConfigSource.TOPIC_CONFIG,
      isSensitive: false,
      readOnly: false,
      configSynonyms: [],
    });
    assert.equal(configs.get('max.message.bytes')!.isDefault, true);
    assert.equal(configs.get('max.message.bytes')!.configSource, ConfigSource.DEFAULT_CONFIG);
    assert.ok((await entries()).size >= 8, 'every topic config without configNames');

    // AlterConfigs replaces the whole set: retention.ms goes back to its default.
    assert.deepEqual(
      await admin.alterConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: 'cfg', configEntries: [{ name: 'max.message.bytes', value: '2000000' }] }] }),
      { resources: [{ errorCode: 0, errorMessage: null, resourceName: 'cfg', resourceType: ConfigResourceTypes.TOPIC }], throttleTime: 0 },
    );
    configs = await entries();
    assert.equal(configs.get('max.message.bytes')!.configValue, '2000000');
    assert.equal(configs.get('retention.ms')!.isDefault, true);

    // validateOnly changes nothing.
    await admin.alterConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: 'cfg', configEntries: [{ name: 'retention.ms', value: '1000' }] }], validateOnly: true });
    assert.equal((await entries()).get('retention.ms')!.isDefault, true);

    // IncrementalAlterConfigs changes single keys.
    const incremental = await admin.incrementalAlterConfigs({
      resources: [
        {
          type: ConfigResourceTypes.TOPIC,
          name: 'cfg',
          configEntries: [
            { name: 'retention.ms', value: '60000', operation: 'SET' },
            { name: 'max.message.bytes', operation: 'DELETE' },
          ],
        },
      ],
    });
    assert.deepEqual(incremental.resources, [{ errorCode: 0, errorMessage: null, resourceName: 'cfg', resourceType: ConfigResourceTypes.TOPIC }]);
    configs = await entries();
    assert.equal(configs.get('retention.ms')!.configValue, '60000');
    assert.equal(configs.get('max.message.bytes')!.isDefault, true);

    // Broker resources go to that broker (Sluice has no broker configs to show).
    const brokers = await admin.describeConfigs({ resources: [{ type: ConfigResourceTypes.BROKER, name: '1' }] });
    assert.deepEqual(brokers.resources.map((r) => [r.errorCode, r.resourceName, r.configEntries.length]), [[0, '1', 0]]);

    const bad = await rejects_with(
      admin.alterConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: 'cfg', configEntries: [{ name: 'bogus.setting', value: '1' }] }] }),
      'INVALID_CONFIG',
    );
    assert.match(bad.message, /topic "cfg"/);
    await rejects_with(admin.describeConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: 'cfg-missing' }] }), 'UNKNOWN_TOPIC_OR_PARTITION');
    await rejects_with(
      admin.incrementalAlterConfigs({ resources: [{ type: ConfigResourceTypes.TOPIC, name: 'cfg', configEntries: [{ name: 'retention.ms', value: 'soon', operation: 'SET' }] }] }),
      'INVALID_CONFIG',
    );
  });

  test('groups without members: setOffsets, fetchOffsets, resetOffsets, list, describe, delete', { timeout: TEST_TIMEOUT_MS }, async () => {
    await admin.createTopics({ topics: [{ topic: 'grp', numPartitions: 2 }, { topic: 'grp-other', numPartitions: 1 }] });
    await produce('grp', 0, 5);
    await produce('grp', 1, 3);
    await admin.deleteTopicRecords({ topic: 'grp', partitions: [{ partition: 0, offset: '2' }] });
    const GROUP = 'admin-group';

    await admin.setOffsets({ groupId: GROUP, topic: 'grp', partitions: [{ partition: 0, offset: '3' }, { partition: 1, offset: 1 }] });
    const expected = (o0: string, o1: string) => [
      {
        topic: 'grp',
        partitions: [
          { partition: 0, offset: o0, metadata: null },
          { partition: 1, offset: o1, metadata: null },
        ],
      },
    ];
    assert.deepEqual(await admin.fetchOffsets({ groupId: GROUP, topics: ['grp'] }), expected('3', '1'));
    assert.deepEqual(await admin.fetchOffsets({ groupId: GROUP }), expected('3', '1'), 'every topic the group committed');
    assert.deepEqual(await admin.fetchOffsets({ groupId: GROUP, topics: ['grp-other'] }), [{ topic: 'grp-other', partitions: [{ partition: 0, offset: '-1', metadata: null }] }]);

    assert.ok((await admin.listGroups()).groups.some((g) => g.groupId === GROUP && g.protocolType === 'consumer'));
    assert.deepEqual(await admin.describeGroups([GROUP]), { groups: [{ groupId: GROUP, members: [], protocol: '', protocolType: '', state: 'Empty', errorCode: 0 }] });

    // Resets commit concrete offsets: the log start offset (2, records before it were deleted) and
    // the high watermark.
    await admin.resetOffsets({ groupId: GROUP, topic: 'grp', earliest: true });
    assert.deepEqual(await admin.fetchOffsets({ groupId: GROUP, topics: ['grp'] }), expected('2', '0'));
    await admin.resetOffsets({ groupId: GROUP, topic: 'grp' });
    assert.deepEqual(await admin.fetchOffsets({ groupId: GROUP, topics: ['grp'] }), expected('5', '3'));
    // -2 and -1 in setOffsets are resolved too.
    await admin.setOffsets({ groupId: GROUP, topic: 'grp', partitions: [{ partition: 0, offset: '-2' }, { partition: 1, offset: '-1' }] });
    assert.deepEqual(await admin.fetchOffsets({ groupId: GROUP, topics: ['grp'] }), expected('2', '3'));

    await rejects_with(admin.setOffsets({ groupId: GROUP, topic: 'grp', partitions: [{ partition: 9, offset: '0' }] }), 'UNKNOWN_TOPIC_OR_PARTITION');
    await rejects_with(admin.fetchOffsets({ groupId: GROUP, topics: ['grp-missing'] }), 'UNKNOWN_TOPIC_OR_PARTITION');

    assert.deepEqual(await admin.deleteGroups([GROUP]), [{ groupId: GROUP, errorCode: 0 }]);
    assert.ok(!(await admin.listGroups()).groups.some((g) => g.groupId === GROUP));
    assert.deepEqual(await admin.fetchOffsets({ groupId: GROUP, topics: ['grp'] }), expected('-1', '-1'));
    assert.equal((await admin.describeGroups([GROUP])).groups[0]!.state, 'Dead');
    await rejects_with(admin.deleteGroups(['never-existed']), 'GROUP_ID_NOT_FOUND');
  });

  test('a group with a kafkajs member; resetOffsets then a consumer starts at the reset position', { timeout: TEST_TIMEOUT_MS }, async () => {
    const GROUP = 'live-group';
    await admin.createTopics({ topics: [{ topic: 'live', numPartitions: 1 }] });
    await produce('live', 0, 6);

    const seen: Array<{ offset: number; value: string }> = [];
    let consumer: Consumer | null = await start_consumer(GROUP, 'live', true, seen);
    try {
      await until(() => seen.length >= 6, 'the consumer to read 6 messages');
      const described = await until(async () => {
        const { groups } = await admin.describeGroups([GROUP]);
        return groups[0]!.state === 'Stable' && groups[0]!.members.length === 1 && groups[0];
      }, 'a stable group with one member');
      assert.equal(described.protocolType, 'consumer');
      assert.equal(described.protocol, 'RoundRobinAssigner');
      const member = described.members[0]!;
      assert.ok(member.memberId.length > 0);
      assert.equal(member.clientId, 'admin-test-kafkajs');
      assert.ok(Buffer.isBuffer(member.memberMetadata) && Buffer.isBuffer(member.memberAssignment));
      assert.deepEqual(AssignerProtocol.MemberMetadata.decode(member.memberMetadata)?.topics, ['live']);
      assert.deepEqual(AssignerProtocol.MemberAssignment.decode(member.memberAssignment)?.assignment, { live: [0] });

      // Refused while the group has a member.
      await rejects_with(admin.deleteGroups([GROUP]), 'NON_EMPTY_GROUP');
      const refused = await rejects_with(admin.resetOffsets({ groupId: GROUP, topic: 'live', earliest: true }), 'NON_EMPTY_GROUP');
      assert.match(refused.message, /must have no running instances.*1 member/);
      await rejects_with(admin.setOffsets({ groupId: GROUP, topic: 'live', partitions: [{ partition: 0, offset: '1' }] }), 'NON_EMPTY_GROUP');
      // kafkajs commits what it consumed.
      await until(async () => (await admin.fetchOffsets({ groupId: GROUP, topics: ['live'] }))[0]!.partitions[0]!.offset === '6', 'the consumer to commit offset 6');
    } finally {
      await consumer.disconnect();
      consumer = null;
    }
    await until(async () => (await admin.describeGroups([GROUP])).groups[0]!.members.length === 0, 'the group to become empty');

    // Earliest after deleting records: the committed offset is the concrete log start offset, and a
    // consumer that would otherwise start at the end (fromBeginning false) starts there.
    await admin.deleteTopicRecords({ topic: 'live', partitions: [{ partition: 0, offset: '2' }] });
    await admin.resetOffsets({ groupId: GROUP, topic: 'live', earliest: true });
    assert.deepEqual(await admin.fetchOffsets({ groupId: GROUP, topics: ['live'] }), [{ topic: 'live', partitions: [{ partition: 0, offset: '2', metadata: null }] }]);
    const after_earliest: Array<{ offset: number; value: string }> = [];
    consumer = await start_consumer(GROUP, 'live', false, after_earliest);
    try {
      await until(() => after_earliest.length >= 4, 'the consumer to read offsets 2-5');
      assert.deepEqual(
        after_earliest.map((m) => m.offset),
        [2, 3, 4, 5],
      );
      assert.equal(after_earliest[0]!.value, 'v2');
      await until(async () => (await admin.fetchOffsets({ groupId: GROUP, topics: ['live'] }))[0]!.partitions[0]!.offset === '6', 'the consumer to commit offset 6');
    } finally {
      await consumer.disconnect();
    }
    await until(async () => (await admin.describeGroups([GROUP])).groups[0]!.members.length === 0, 'the group to become empty');

    // Latest, then new messages: a consumer with fromBeginning true still starts at the reset point.
    await admin.setOffsets({ groupId: GROUP, topic: 'live', partitions: [{ partition: 0, offset: '3' }] });
    await admin.resetOffsets({ groupId: GROUP, topic: 'live', earliest: false });
    assert.equal((await admin.fetchOffsets({ groupId: GROUP, topics: ['live'] }))[0]!.partitions[0]!.offset, '6');
    await produce('live', 0, 2, 6);
    const after_latest: Array<{ offset: number; value: string }> = [];
    consumer = await start_consumer(GROUP, 'live', true, after_latest);
    try {
      await until(() => after_latest.length >= 2, 'the consumer to read offsets 6-7');
      assert.deepEqual(
        after_latest.map((m) => [m.offset, m.value]),
        [
          [6, 'v6'],
          [7, 'v7'],
        ],
      );
    } finally {
      await consumer.disconnect();
    }
    await until(async () => (await admin.describeGroups([GROUP])).groups[0]!.members.length === 0, 'the group to become empty');
    assert.deepEqual(await admin.deleteGroups([GROUP]), [{ groupId: GROUP, errorCode: 0 }]);
  });

  test('a retriable failure is retried for the failed resources only, after looking the controller up again', { timeout: TEST_TIMEOUT_MS }, async () => {
    // The first CreateTopics answers NOT_CONTROLLER for one topic (as a controller that just moved
    // would); the retry must send only that topic, so the other is not reported as existing.
    const real_controller = cluster.controller.bind(cluster);
    const sent: string[][] = [];
    let lookups = 0;
    cluster.controller = async () => {
      lookups++;
      const connection = await real_controller();
      const send_untyped = async (api: ApiSpec, min: number, max: number, body: AnyMessage | ((version: number) => AnyMessage)) => {
        if (api.name !== 'CreateTopics' || typeof body === 'function') return connection.send(api, min, max, body);
        const topics = body.topics as Array<{ name: string }>;
        sent.push(topics.map((t) => t.name));
        if (sent.length > 1) return connection.send(api, min, max, body);
        const answer = await connection.send(api, min, max, { ...body, topics: topics.filter((t) => t.name !== 'retry-b') });
        (answer.response.topics as unknown[]).push({ name: 'retry-b', error_code: 41, error_message: 'the controller moved' });
        return answer;
      };
      return Object.create(connection, { send: { value: send_untyped } }) as typeof connection;
    };
    try {
      assert.equal(await admin.createTopics({ topics: [{ topic: 'retry-a', numPartitions: 1 }, { topic: 'retry-b', numPartitions: 1 }] }), true);
    } finally {
      cluster.controller = real_controller;
    }
    assert.deepEqual(sent, [['retry-a', 'retry-b'], ['retry-b']]);
    assert.equal(lookups, 2);
    const listed = await admin.listTopics();
    assert.ok(listed.includes('retry-a') && listed.includes('retry-b'));
  });

  test('after disconnect, requests are refused', { timeout: TEST_TIMEOUT_MS }, async () => {
    const { host, port } = broker.kafka_address;
    const other = new Admin(new Cluster({ brokers: [`${host}:${port}`], client_id: 'admin-test-2', retry: RETRY_DEFAULT, request_timeout_ms: 5000, max_in_flight: 4 }));
    await other.connect();
    assert.ok((await other.listTopics()).includes('live'));
    await other.disconnect();
    await assert.rejects(other.listTopics(), /disconnected/);
  });
});
