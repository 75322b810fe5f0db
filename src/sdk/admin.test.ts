// The admin client against an in-process broker: the cluster, topics (create, list, describe,
// delete) with the Kafka errors for bad requests (one error naming each failure) and retries that
// resend only the failed resources. Configs, offsets and groups have test files of their own.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AdminError } from './admin.ts';
import { KafkaProtocolError, SluiceError } from './errors.ts';
import type { AnyMessage, ApiSpec } from '../protocol/kafka/schema.ts';
import { TEST_TIMEOUT_MS, admin, broker, cluster, rejects_with, start, stop } from './admin_test_support.ts';

describe('Admin', () => {
  before(start);
  after(stop);
  test(
    'describeCluster names the broker, the controller and the cluster id',
    { timeout: TEST_TIMEOUT_MS },
    describes_the_cluster,
  );
  test('topics: create, list, describe, add partitions, delete', { timeout: TEST_TIMEOUT_MS }, manages_topics);
  test(
    'topic errors carry the broker code; one error names every failure',
    { timeout: TEST_TIMEOUT_MS },
    reports_topic_errors,
  );
  test(
    'a retriable failure is retried for the failed resources only, after looking the controller up again',
    { timeout: TEST_TIMEOUT_MS },
    retries_failed_resources,
  );
});

async function describes_the_cluster(): Promise<void> {
  const { host, port } = broker.kafka_address;
  assert.deepEqual(await admin.describeCluster(), {
    brokers: [{ nodeId: 1, host, port }],
    controller: 1,
    clusterId: broker.broker.cluster_id,
  });
}

async function manages_topics(): Promise<void> {
  assert.equal(
    await admin.createTopics({
      topics: [
        {
          topic: 'top-a',
          numPartitions: 3,
          replicationFactor: 1,
          configEntries: [{ name: 'retention.ms', value: '3600000' }],
        },
        { topic: 'top-b' },
      ],
    }),
    true,
  );
  const listed = await admin.listTopics();
  assert.ok(listed.includes('top-a') && listed.includes('top-b'), `listed: ${listed.join(', ')}`);

  const partition = (partitionId: number) => ({
    partitionErrorCode: 0,
    partitionId,
    leader: 1,
    replicas: [1],
    isr: [1],
    offlineReplicas: [],
  });
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
  assert.deepEqual(
    (await admin.fetchTopicMetadata({ topics: ['top-a'] })).topics[0]!.partitions.map((p) => p.partitionId),
    [0, 1, 2, 3, 4],
  );
  await admin.createPartitions({ topicPartitions: [{ topic: 'top-a', count: 8 }], validateOnly: true });
  assert.equal((await admin.fetchTopicMetadata({ topics: ['top-a'] })).topics[0]!.partitions.length, 5);

  // A lost connection to the controller is reopened transparently.
  (await cluster.controller()).connection.close();
  await admin.deleteTopics({ topics: ['top-b', 'top-c'] });
  const remaining = await admin.listTopics();
  assert.ok(
    !remaining.includes('top-b') && !remaining.includes('top-c') && remaining.includes('top-a'),
    `remaining: ${remaining.join(', ')}`,
  );
}

async function reports_topic_errors(): Promise<void> {
  const invalid_name = await rejects_with(
    admin.createTopics({ topics: [{ topic: 'bad name!' }] }),
    'INVALID_TOPIC_EXCEPTION',
  );
  assert.equal(invalid_name.code, 17);
  assert.ok(invalid_name instanceof AdminError && invalid_name.failures.length === 1);
  assert.match(invalid_name.message, /CreateTopics topic "bad name!": INVALID_TOPIC_EXCEPTION \(17\)/);
  assert.equal(invalid_name.retriable, false);

  const replication = await rejects_with(
    admin.createTopics({ topics: [{ topic: 'err-r', replicationFactor: 3 }] }),
    'INVALID_REPLICATION_FACTOR',
  );
  assert.equal(replication.code, 38);

  // Two failures and one success in one request: the valid topic is created, the error names both.
  const both = await rejects_with(
    admin.createTopics({
      topics: [
        { topic: 'err-x y' },
        { topic: 'err-ok', numPartitions: 1 },
        { topic: 'err-r3', numPartitions: 1, replicationFactor: 3 },
      ],
    }),
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
  assert.match(
    both.message,
    /failed for 2 resources: topic "err-x y": INVALID_TOPIC_EXCEPTION.*; topic "err-r3": INVALID_REPLICATION_FACTOR/,
  );
  assert.ok((await admin.listTopics()).includes('err-ok'));

  // A missing topic is a final answer for admin requests: no retries.
  const started = Date.now();
  const missing = await rejects_with(admin.deleteTopics({ topics: ['err-missing'] }), 'UNKNOWN_TOPIC_OR_PARTITION');
  assert.equal(missing.retriable, false);
  assert.ok(Date.now() - started < 1000, `deleteTopics took ${Date.now() - started} ms`);
  await rejects_with(admin.fetchTopicMetadata({ topics: ['err-ok', 'err-missing'] }), 'UNKNOWN_TOPIC_OR_PARTITION');
  await rejects_with(admin.fetchTopicOffsets('err-missing'), 'UNKNOWN_TOPIC_OR_PARTITION');
  await rejects_with(
    admin.createPartitions({ topicPartitions: [{ topic: 'err-ok', count: 1 }] }),
    'INVALID_PARTITIONS',
  );
  await rejects_with(
    admin.createPartitions({ topicPartitions: [{ topic: 'err-missing', count: 3 }] }),
    'UNKNOWN_TOPIC_OR_PARTITION',
  );

  await manual_assignment_on_one_node();

  // Bad arguments are refused before anything is sent.
  await assert.rejects(
    admin.createTopics({ topics: [{ topic: 'dup' }, { topic: 'dup' }] }),
    (error: unknown) => error instanceof SluiceError && !(error instanceof KafkaProtocolError),
  );
  await assert.rejects(
    admin.setOffsets({ groupId: 'g', topic: 'err-ok', partitions: [{ partition: 0, offset: 'abc' }] }),
    /not an offset/,
  );
}

/** Manual assignments on one node: to this broker only. */
async function manual_assignment_on_one_node(): Promise<void> {
  const self = broker.broker.node_id;
  await admin.createTopics({
    topics: [{ topic: 'err-placed', replicaAssignment: [0, 1].map((partition) => ({ partition, replicas: [self] })) }],
  });
  assert.equal((await admin.fetchTopicMetadata({ topics: ['err-placed'] })).topics[0]!.partitions.length, 2);
  await admin.createPartitions({ topicPartitions: [{ topic: 'err-placed', count: 3, assignments: [[self]] }] });
  const elsewhere = [{ partition: 0, replicas: [self + 1] }];
  await rejects_with(
    admin.createTopics({ topics: [{ topic: 'err-elsewhere', replicaAssignment: elsewhere }] }),
    'INVALID_REPLICA_ASSIGNMENT',
  );
  await rejects_with(
    admin.createPartitions({ topicPartitions: [{ topic: 'err-placed', count: 4, assignments: [[self + 1]] }] }),
    'INVALID_REPLICA_ASSIGNMENT',
  );
  await rejects_with(
    admin.createTopics({ topics: [{ topic: 'err-both', numPartitions: 2, replicaAssignment: elsewhere }] }),
    'INVALID_REQUEST',
  );
}

async function retries_failed_resources(): Promise<void> {
  // The first CreateTopics answers NOT_CONTROLLER for one topic (as a controller that just moved
  // would); the retry must send only that topic, so the other is not reported as existing.
  const real_controller = cluster.controller.bind(cluster);
  const sent: string[][] = [];
  let lookups = 0;
  cluster.controller = async () => {
    lookups++;
    const connection = await real_controller();
    const send_untyped = async (
      api: ApiSpec,
      min: number,
      max: number,
      body: AnyMessage | ((version: number) => AnyMessage),
    ) => {
      if (api.name !== 'CreateTopics' || typeof body === 'function') return connection.send(api, min, max, body);
      const topics = body.topics as Array<{ name: string }>;
      sent.push(topics.map((t) => t.name));
      if (sent.length > 1) return connection.send(api, min, max, body);
      const answer = await connection.send(api, min, max, {
        ...body,
        topics: topics.filter((t) => t.name !== 'retry-b'),
      });
      (answer.response.topics as unknown[]).push({
        name: 'retry-b',
        error_code: 41,
        error_message: 'the controller moved',
      });
      return answer;
    };
    return Object.create(connection, { send: { value: send_untyped } }) as typeof connection;
  };
  try {
    assert.equal(
      await admin.createTopics({
        topics: [
          { topic: 'retry-a', numPartitions: 1 },
          { topic: 'retry-b', numPartitions: 1 },
        ],
      }),
      true,
    );
  } finally {
    cluster.controller = real_controller;
  }
  assert.deepEqual(sent, [['retry-a', 'retry-b'], ['retry-b']]);
  assert.equal(lookups, 2);
  const listed = await admin.listTopics();
  assert.ok(listed.includes('retry-a') && listed.includes('retry-b'));
}
