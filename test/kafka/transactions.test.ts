// Kafka transactions through kafkajs 2.2.4 against a broker process: committed records reach
// read_committed consumers, aborted ones only read_uncommitted consumers, an open transaction holds
// read_committed readers at its first offset, offsets sent in a transaction apply only if it
// commits (OffsetFetch's require_stable waits for them), a second instance of a transactional id
// fences the first, an abandoned transaction is aborted after its timeout, a transaction ends
// though one of its topics was deleted, and all of it survives a restart.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { start_broker_process, type BrokerProcess } from '../support/broker_process.ts';
import { Connection } from '../../src/protocol/kafka/client_connection.ts';
import { OFFSET_FETCH } from '../../src/protocol/kafka/messages/09_offset_fetch.ts';
import { ErrorCode } from '../../src/protocol/kafka/error_codes.ts';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';

let broker: BrokerProcess;
let kafka: Kafka;

before(async () => {
  broker = await start_broker_process();
  kafka = client();
});

after(async () => {
  await broker?.stop();
});

function client(): Kafka {
  return new Kafka({
    brokers: [broker.bootstrap],
    clientId: 'transactions-test',
    logLevel: logLevel.NOTHING,
    retry: { retries: 5, initialRetryTime: 100 },
  });
}

async function create(topic: string, partitions = 1): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: partitions }] });
  await admin.disconnect();
}

async function transactional(id: string, timeout_ms = 60_000): Promise<Producer> {
  const producer = kafka.producer({
    transactionalId: id,
    idempotent: true,
    maxInFlightRequests: 1,
    transactionTimeout: timeout_ms,
  });
  await producer.connect();
  return producer;
}

/** Every value of `topic` a fresh consumer reads within `wait_ms`, committed only or not. */
async function read_values(
  topic: string,
  read_uncommitted: boolean,
  count: number,
  wait_ms = 3_000,
): Promise<string[]> {
  const consumer = kafka.consumer({ groupId: `reader-${topic}-${Math.random()}`, readUncommitted: read_uncommitted });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const values: string[] = [];
  await consumer.run({ eachMessage: async ({ message }) => void values.push(message.value!.toString()) });
  const deadline = Date.now() + wait_ms;
  while (values.length < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  // A little longer: what should not arrive has its chance to.
  await new Promise((resolve) => setTimeout(resolve, 300));
  await consumer.disconnect();
  return values.sort();
}

test('committed records reach read_committed readers; aborted ones only read_uncommitted readers', async () => {
  await create('tx-basic', 3);
  const producer = await transactional('tx-basic-producer');
  const committed = await producer.transaction();
  await committed.send({ topic: 'tx-basic', messages: ['a', 'b', 'c'].map((value) => ({ key: value, value })) });
  await committed.commit();
  const aborted = await producer.transaction();
  await aborted.send({ topic: 'tx-basic', messages: ['x', 'y'].map((value) => ({ key: value, value })) });
  await aborted.abort();
  const again = await producer.transaction();
  await again.send({ topic: 'tx-basic', messages: [{ key: 'a', value: 'd' }] });
  await again.commit();
  await producer.disconnect();
  assert.deepEqual(await read_values('tx-basic', false, 4), ['a', 'b', 'c', 'd']);
  assert.deepEqual(await read_values('tx-basic', true, 6), ['a', 'b', 'c', 'd', 'x', 'y']);
});

test('an open transaction holds read_committed readers at its first offset until it commits', async () => {
  await create('tx-open');
  const plain = kafka.producer();
  await plain.connect();
  await plain.send({ topic: 'tx-open', messages: [{ value: 'before' }] });
  const producer = await transactional('tx-open-producer');
  const txn = await producer.transaction();
  await txn.send({ topic: 'tx-open', messages: [{ value: 'inside' }] });
  await plain.send({ topic: 'tx-open', messages: [{ value: 'after' }] });
  assert.deepEqual(await read_values('tx-open', false, 3, 1_500), ['before']);
  const admin = kafka.admin();
  await admin.connect();
  const [stable] = await admin.fetchTopicOffsets('tx-open');
  assert.equal(
    stable!.high,
    '1',
    'kafkajs lists offsets read_committed: the last stable offset, held at the open transaction',
  );
  await txn.commit();
  assert.deepEqual(await read_values('tx-open', false, 3), ['after', 'before', 'inside']);
  await admin.disconnect();
  await plain.disconnect();
  await producer.disconnect();
});

test('offsets sent in a transaction apply when it commits, not when it aborts', async () => {
  await create('tx-offsets');
  const group = 'tx-offsets-group';
  const producer = await transactional('tx-offsets-producer');
  const committed_offsets = async () => {
    const admin = kafka.admin();
    await admin.connect();
    const offsets = await admin.fetchOffsets({ groupId: group, topics: ['tx-offsets'] });
    await admin.disconnect();
    return offsets[0]!.partitions[0]!.offset;
  };
  const aborted = await producer.transaction();
  await aborted.sendOffsets({
    consumerGroupId: group,
    topics: [{ topic: 'tx-offsets', partitions: [{ partition: 0, offset: '5' }] }],
  });
  await aborted.abort();
  assert.equal(await committed_offsets(), '-1');
  const committed = await producer.transaction();
  await committed.send({ topic: 'tx-offsets', messages: [{ value: 'out' }] });
  await committed.sendOffsets({
    consumerGroupId: group,
    topics: [{ topic: 'tx-offsets', partitions: [{ partition: 0, offset: '7' }] }],
  });
  await committed.commit();
  assert.equal(await committed_offsets(), '7');
  await producer.disconnect();
});

/** Partition 0's committed offset and error code for `group`, by OffsetFetch v7. */
async function offset_fetch(group: string, topic: string, require_stable: boolean) {
  const [host, port] = broker.bootstrap.split(':') as [string, string];
  const connection = await Connection.connect(host, Number(port), { request_timeout_ms: 10_000 });
  try {
    const response = await connection.call(OFFSET_FETCH, 7, {
      group_id: group,
      topics: [{ name: topic, partition_indexes: [0] }],
      groups: [],
      require_stable,
    });
    const row = response.topics[0]!.partitions[0]!;
    return { offset: row.committed_offset, error_code: row.error_code };
  } finally {
    connection.close();
  }
}

test('OffsetFetch with require_stable: UNSTABLE_OFFSET_COMMIT while a transaction holds the offset', async () => {
  await create('tx-stable');
  const producer = await transactional('tx-stable-producer');
  const txn = await producer.transaction();
  await txn.send({ topic: 'tx-stable', messages: [{ value: 'v' }] });
  await txn.sendOffsets({
    consumerGroupId: 'tx-stable-group',
    topics: [{ topic: 'tx-stable', partitions: [{ partition: 0, offset: '5' }] }],
  });
  assert.deepEqual(await offset_fetch('tx-stable-group', 'tx-stable', true), {
    offset: -1,
    error_code: ErrorCode.UNSTABLE_OFFSET_COMMIT,
  });
  assert.deepEqual(
    await offset_fetch('tx-stable-group', 'tx-stable', false),
    { offset: -1, error_code: 0 },
    'as committed so far',
  );
  await txn.commit();
  assert.deepEqual(await offset_fetch('tx-stable-group', 'tx-stable', true), { offset: 5, error_code: 0 });
  await producer.disconnect();
});

test('a second instance of a transactional id fences the first; its open transaction is aborted', async () => {
  await create('tx-fence');
  const first = await transactional('tx-fence-producer');
  const zombie = await first.transaction();
  await zombie.send({ topic: 'tx-fence', messages: [{ value: 'zombie' }] });
  const second = await transactional('tx-fence-producer');
  const txn = await second.transaction(); // kafkajs asks for its epoch here (InitProducerId), fencing the first
  await assert.rejects(
    zombie.send({ topic: 'tx-fence', messages: [{ value: 'zombie again' }] }),
    /epoch|fenced|INVALID_PRODUCER_EPOCH|transaction/i,
  );
  await assert.rejects(zombie.commit(), /epoch|fenced|INVALID_PRODUCER_EPOCH|transaction/i);
  await txn.send({ topic: 'tx-fence', messages: [{ value: 'fresh' }] });
  await txn.commit();
  assert.deepEqual(await read_values('tx-fence', false, 1), ['fresh']);
  await first.disconnect().catch(() => undefined);
  await second.disconnect();
});

test('an abandoned transaction is aborted after its timeout and readers move past it', async () => {
  await create('tx-abandoned');
  const producer = await transactional('tx-abandoned-producer', 1_500);
  const txn = await producer.transaction();
  await txn.send({ topic: 'tx-abandoned', messages: [{ value: 'never committed' }] });
  const plain = kafka.producer();
  await plain.connect();
  await plain.send({ topic: 'tx-abandoned', messages: [{ value: 'later' }] });
  assert.deepEqual(await read_values('tx-abandoned', false, 1, 6_000), ['later'], 'aborted by the coordinator');
  await assert.rejects(txn.commit());
  await plain.disconnect();
  await producer.disconnect().catch(() => undefined);
});

test('a transaction whose topic was deleted meanwhile still ends', async () => {
  await create('tx-deleted');
  await create('tx-kept');
  const producer = await transactional('tx-deleted-producer');
  const txn = await producer.transaction();
  await txn.send({ topic: 'tx-deleted', messages: [{ value: 'gone with its topic' }] });
  await txn.send({ topic: 'tx-kept', messages: [{ value: 'kept' }] });
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: ['tx-deleted'] });
  await admin.disconnect();
  await txn.commit();
  assert.deepEqual(await read_values('tx-kept', false, 1), ['kept'], 'the surviving partition is marked');
  // The producer is free for its next transaction: the last one did not stay prepared.
  const next = await producer.transaction();
  await next.send({ topic: 'tx-kept', messages: [{ value: 'next' }] });
  await next.commit();
  assert.deepEqual(await read_values('tx-kept', false, 2), ['kept', 'next']);
  await producer.disconnect();
});

test('transactions, aborted ones and open ones are as they were after a restart', async () => {
  await create('tx-restart');
  const producer = await transactional('tx-restart-producer', 60_000);
  const aborted = await producer.transaction();
  await aborted.send({ topic: 'tx-restart', messages: [{ value: 'aborted' }] });
  await aborted.abort();
  const committed = await producer.transaction();
  await committed.send({ topic: 'tx-restart', messages: [{ value: 'committed' }] });
  await committed.commit();
  const open = await producer.transaction();
  await open.send({ topic: 'tx-restart', messages: [{ value: 'open' }] });
  const data_dir = broker.data_dir;
  await broker.kill();
  broker = await start_broker_process({ data_dir });
  kafka = client();
  assert.deepEqual(await read_values('tx-restart', false, 1, 1_500), ['committed'], 'aborted hidden, open held back');
  // A new instance aborts what the old one left open.
  const next = await transactional('tx-restart-producer');
  const txn = await next.transaction();
  await txn.send({ topic: 'tx-restart', messages: [{ value: 'after restart' }] });
  await txn.commit();
  assert.deepEqual(await read_values('tx-restart', false, 2), ['after restart', 'committed']);
  assert.deepEqual(await read_values('tx-restart', true, 4), ['aborted', 'after restart', 'committed', 'open']);
  await next.disconnect();
});
