// Kafka transactions in a cluster of three broker processes: one transaction spans partitions led
// by every broker (markers written through their leaders, first batches verified with the
// coordinator), its offsets commit through a group coordinator that may run elsewhere, and the
// transaction coordinator killed (kill -9) while it ends a transaction, ten times over, never
// leaves a transaction committed on some partitions and not on others; delayed records in
// transactions are delivered when due only if committed. kafkajs against real etcd, and the SDK
// under transaction version 2 (partitions joining through their leaders' produce path); half
// messages of a dead producer checked on across a failover of the transaction coordinator.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Kafka, Producer } from 'kafkajs';
import { Sluice } from '../../src/sdk/index.ts';
import { Connection } from '../../src/protocol/kafka/client_connection.ts';
import { DESCRIBE_TRANSACTIONS } from '../../src/protocol/kafka/messages/65_describe_transactions.ts';
import { TXN_UNRESOLVED_TOPIC } from '../../src/protocol/half_messages.ts';
import { half_messages_of_a_dead_producer } from '../support/dead_half_producer.ts';
import { type SharedCluster, create_replicated_topic, missing, shared_cluster } from './cluster_support.ts';

const shared = shared_cluster();

const RETRY = { retries: 60, initialRetryTime: 100, maxRetryTime: 1000 };
const PARTITIONS = 3;

/** A replicated topic of PARTITIONS partitions; their leaders. */
async function create_spread_topic(shared: SharedCluster, topic: string): Promise<number[]> {
  await create_replicated_topic(shared, topic, PARTITIONS);
  const leaders: number[] = [];
  for (let p = 0; p < PARTITIONS; p++) leaders.push((await shared.cluster.partition(shared.admin, topic, p)).leader);
  return leaders;
}

async function transactional(kafka: Kafka, id: string): Promise<Producer> {
  const producer = kafka.producer({
    transactionalId: id,
    idempotent: true,
    maxInFlightRequests: 1,
    transactionTimeout: 30_000,
    retry: RETRY,
  });
  await producer.connect();
  return producer;
}

/** Every value of `topic` a new group reads from the start, committed only or not, once `count` arrived. */
async function read_all(
  kafka: Kafka,
  topic: string,
  read_uncommitted: boolean,
  count: number,
  wait_ms = 20_000,
): Promise<string[]> {
  const consumer = kafka.consumer({
    groupId: `reader-${Math.random()}`,
    readUncommitted: read_uncommitted,
    retry: RETRY,
  });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const values: string[] = [];
  await consumer.run({ eachMessage: async ({ message }) => void values.push(message.value!.toString()) });
  const deadline = Date.now() + wait_ms;
  while (values.length < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
  // A little longer: what should not arrive has its chance to.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  await consumer.disconnect();
  return values.sort();
}

async function transaction_coordinator({ cluster, admin }: SharedCluster): Promise<number> {
  return (await cluster.partition(admin, '__transaction_state', 0)).leader;
}

/** The epoch a transactional id's producer has now, from DescribeTransactions on every broker. */
async function producer_epoch({ cluster }: SharedCluster, transactional_id: string): Promise<number> {
  for (const address of cluster.bootstrap) {
    const [host, port] = address.split(':') as [string, string];
    const connection = await Connection.connect(host, Number(port), { request_timeout_ms: 10_000 });
    try {
      const [state] = (await connection.call(DESCRIBE_TRANSACTIONS, 0, { transactional_ids: [transactional_id] }))
        .transaction_states;
      if (state?.error_code === 0) return state.producer_epoch;
    } finally {
      connection.close();
    }
  }
  throw new Error(`no broker describes ${transactional_id}`);
}

/**
 * After an aborted transaction (`aborted-<p>` on every partition) and a committed one
 * (`committed-<p>`, with `offset` for partition 0 of `group`): what each kind of reader sees.
 */
async function assert_one_committed(kafka: Kafka, topic: string, group: string, offset: string): Promise<void> {
  const expected = Array.from({ length: PARTITIONS }, (_, p) => `committed-${p}`);
  assert.deepEqual(await read_all(kafka, topic, false, PARTITIONS), expected);
  const everything = [...Array.from({ length: PARTITIONS }, (_, p) => `aborted-${p}`), ...expected].sort();
  assert.deepEqual(await read_all(kafka, topic, true, 2 * PARTITIONS), everything);
  const offsets = await shared.admin.fetchOffsets({ groupId: group, topics: [topic] });
  assert.equal(
    offsets[0]!.partitions.find((p) => p.partition === 0)!.offset,
    offset,
    'offsets sent in the transaction',
  );
}

test(
  'a transaction over partitions every broker leads commits or aborts on all of them, its offsets with it',
  { skip: missing ?? false, timeout: 180_000 },
  async () => {
    const { cluster } = shared;
    const topic = 'txn-spread';
    const leaders = await create_spread_topic(shared, topic);
    assert.equal(new Set(leaders).size, PARTITIONS, `one leader per partition: ${leaders.join(',')}`);
    const kafka = cluster.kafka('txn-spread');
    const producer = await transactional(kafka, 'txn-spread-producer');
    const send = (txn: Awaited<ReturnType<Producer['transaction']>>, tag: string) =>
      txn.send({
        topic,
        messages: Array.from({ length: PARTITIONS }, (_, partition) => ({ partition, value: `${tag}-${partition}` })),
      });

    const aborted = await producer.transaction();
    await send(aborted, 'aborted');
    await aborted.abort();
    const committed = await producer.transaction();
    await send(committed, 'committed');
    await committed.sendOffsets({
      consumerGroupId: 'txn-spread-group',
      topics: [{ topic, partitions: [{ partition: 0, offset: '7' }] }],
    });
    await committed.commit();

    await assert_one_committed(kafka, topic, 'txn-spread-group', '7');
    await producer.disconnect();
  },
);

test(
  'the SDK under transaction version 2 over partitions every broker leads: joined by its produce, each end a new epoch',
  { skip: missing ?? false, timeout: 180_000 },
  async () => {
    const { cluster } = shared;
    const topic = 'txn-spread-v2';
    const leaders = await create_spread_topic(shared, topic);
    assert.equal(new Set(leaders).size, PARTITIONS, `one leader per partition: ${leaders.join(',')}`);
    const sluice = new Sluice({ brokers: cluster.bootstrap, clientId: 'txn-spread-v2', retry: RETRY });
    const producer = sluice.producer({ transactionalId: 'txn-spread-v2-producer' });
    await producer.connect();
    const messages = (tag: string) =>
      Array.from({ length: PARTITIONS }, (_, partition) => ({ partition, value: `${tag}-${partition}` }));
    const aborted = await producer.transaction();
    await aborted.send({ topic, messages: messages('aborted') });
    await aborted.abort();
    const committed = await producer.transaction();
    await committed.send({ topic, messages: messages('committed') });
    await committed.sendOffsets({
      consumerGroupId: 'txn-spread-v2-group',
      topics: [{ topic, partitions: [{ partition: 0, offset: '9' }] }],
    });
    await committed.commit();
    const kafka = cluster.kafka('txn-spread-v2');
    await assert_one_committed(kafka, topic, 'txn-spread-v2-group', '9');
    assert.equal(await producer_epoch(shared, 'txn-spread-v2-producer'), 2, 'each of the two ends took the next epoch');
    await producer.disconnect();
  },
);

test(
  'delayed records in transactions on partitions every broker leads: delivered when due if committed, never if aborted',
  { skip: missing ?? false, timeout: 180_000 },
  async () => {
    const { cluster } = shared;
    const topic = 'txn-delayed';
    await create_spread_topic(shared, topic);
    const kafka = cluster.kafka('txn-delayed');
    const producer = await transactional(kafka, 'txn-delayed-producer');
    // Partitions led elsewhere forward their delayed batches to the delay log's leader, and have the
    // coordinator add the delay log to the transaction.
    const send = (txn: Awaited<ReturnType<Producer['transaction']>>, tag: string) =>
      txn.send({
        topic,
        messages: Array.from({ length: PARTITIONS }, (_, partition) => ({
          partition,
          value: `${tag}-${partition}`,
          headers: { 'sluice-delay-ms': '1500' },
        })),
      });
    const aborted = await producer.transaction();
    await send(aborted, 'aborted');
    await aborted.abort();
    const committed = await producer.transaction();
    await send(committed, 'committed');
    const committed_at = Date.now();
    await committed.commit();
    const expected = Array.from({ length: PARTITIONS }, (_, p) => `committed-${p}`);
    assert.deepEqual(
      await read_all(kafka, topic, true, PARTITIONS),
      expected,
      'even read_uncommitted: the aborted never',
    );
    assert.ok(Date.now() - committed_at >= 1500, 'not before they were due');
    await producer.disconnect();
  },
);

test(
  'the transaction coordinator killed while it commits, ten times: each transaction whole or absent everywhere',
  { skip: missing ?? false, timeout: 420_000 },
  async (t) => {
    const { cluster, admin } = shared;
    const topic = 'txn-coordinator-kills';
    await create_spread_topic(shared, topic);
    const kafka = cluster.kafka('txn-kills');
    const ROUNDS = 10;
    const outcomes: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const coordinator = await transaction_coordinator(shared);
      // A new instance each round: its InitProducerId finishes or aborts what the last one left.
      const producer = await transactional(kafka, 'txn-kills-producer');
      const txn = await producer.transaction();
      await txn.send({
        topic,
        messages: Array.from({ length: PARTITIONS }, (_, partition) => ({
          partition,
          value: `t${round}-${partition}`,
        })),
      });
      const ending = txn.commit().then(
        () => 'committed',
        (error: unknown) => `refused: ${String(error)}`,
      );
      await new Promise((resolve) => setTimeout(resolve, (round * 7) % 40));
      await cluster.brokers.get(coordinator)!.kill();
      outcomes.push(await ending);
      await producer.disconnect().catch(() => undefined);
      await cluster.start(coordinator);
      await cluster.wait_for(
        'every broker registered',
        async () => (await admin.describeCluster()).brokers.length === cluster.brokers.size,
        60_000,
      );
    }
    // The last instance ends whatever the last round left open, so every round has its outcome.
    const last = await transactional(kafka, 'txn-kills-producer');
    await last.disconnect();
    const committed = await read_all(kafka, topic, false, ROUNDS * PARTITIONS, 30_000);
    const all = await read_all(kafka, topic, true, ROUNDS * PARTITIONS, 30_000);
    assert.equal(all.length, ROUNDS * PARTITIONS, 'every record written once');
    let whole = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const seen = committed.filter((value) => value.startsWith(`t${round}-`)).length;
      assert.ok(seen === 0 || seen === PARTITIONS, `round ${round}: committed on ${seen} of ${PARTITIONS} partitions`);
      if (seen === PARTITIONS) whole++;
    }
    t.diagnostic(`EndTxn answers: ${outcomes.join('; ')}; committed everywhere: ${whole} of ${ROUNDS}`);
    assert.ok(whole > 0, 'some transactions committed');
  },
);

test(
  'check-back across a failover: the transaction coordinator killed while half messages of a dead producer wait',
  { skip: missing ?? false, timeout: 240_000 },
  async () => {
    const { cluster } = shared;
    const topic = 'txn-half-orders';
    await create_replicated_topic(shared, topic);
    await half_messages_of_a_dead_producer(cluster.bootstrap[0]!, topic, 'ha-shop', 1_000, [
      'commit-me',
      'rollback-me',
      'ask-later',
    ]);
    const coordinator = await transaction_coordinator(shared);
    await cluster.brokers.get(coordinator)!.kill();
    // Another broker coordinates from here on: it goes on checking where the dead one left off.
    await cluster.wait_for(
      'another transaction coordinator',
      async () => {
        const leader = await transaction_coordinator(shared).catch(() => -1);
        return leader > 0 && leader !== coordinator;
      },
      60_000,
    );
    await cluster.start(coordinator);
    await cluster.wait_for(
      'every broker registered',
      async () => (await shared.admin.describeCluster()).brokers.length === cluster.brokers.size,
      60_000,
    );
    const sluice = new Sluice({ brokers: cluster.bootstrap, clientId: 'txn-half-ha', retry: RETRY });
    const answering = sluice.producer({
      transactionGroup: 'ha-shop',
      checkTransaction: ({ value }) =>
        value?.toString() === 'commit-me' ? 'commit' : value?.toString() === 'rollback-me' ? 'rollback' : 'unknown',
    });
    await answering.connect();
    const kafka = cluster.kafka('txn-half-ha');
    try {
      assert.deepEqual(await read_all(kafka, topic, false, 1, 60_000), ['commit-me']);
      // Unanswered through every check (15 by default, one a second), it is copied to the
      // unresolved topic.
      const unresolved = await read_all(kafka, TXN_UNRESOLVED_TOPIC, false, 1, 90_000);
      assert.ok(unresolved.includes('ask-later'), `unresolved: ${unresolved.join(',')}`);
      assert.deepEqual(await read_all(kafka, topic, false, 1), ['commit-me'], 'never the others');
    } finally {
      await answering.disconnect();
    }
  },
);
