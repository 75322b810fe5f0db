// A consume-transform-produce loop for the exactly-once test (test/kafka/exactly_once.test.ts),
// run as its own process so the test can kill it with SIGKILL at any point: a kafkajs consumer of
// the input topic hands each batch to a transaction that writes the transformed records to the
// output topic and commits the input offsets with them (sendOffsets). Args: bootstrap, input,
// output, group, transactional id.
import { Kafka, logLevel } from 'kafkajs';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';
const [bootstrap, input, output, group, transactional_id] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
];

const kafka = new Kafka({
  brokers: [bootstrap],
  clientId: 'eos-loop',
  logLevel: logLevel.NOTHING,
  retry: { retries: 20, initialRetryTime: 100, maxRetryTime: 1000 },
});
const producer = kafka.producer({ transactionalId: transactional_id, idempotent: true, maxInFlightRequests: 1 });
// A short session: the next instance is not held up long by the one killed before it.
const consumer = kafka.consumer({
  groupId: group,
  sessionTimeout: 1_500,
  heartbeatInterval: 300,
  maxWaitTimeInMs: 50,
  // A fetch returns at least one stored batch: one per transaction, so there are many to kill in.
  maxBytesPerPartition: 64,
});

await producer.connect();
// kafkajs asks for the transactional producer id at the first transaction(), not at connect():
// asked before the consumer reads its committed offsets, so a commit the last instance left
// writing its markers is finished first and its offsets are the ones read.
await (await producer.transaction()).abort();
await consumer.connect();
await consumer.subscribe({ topic: input, fromBeginning: true });
await consumer.run({
  autoCommit: false,
  eachBatch: async ({ batch }) => {
    if (batch.messages.length === 0) return;
    const txn = await producer.transaction();
    try {
      await txn.send({
        topic: output,
        // Each input record names itself in its output: twice or never shows.
        messages: batch.messages.map((m) => ({ key: m.key, value: `${batch.partition}:${m.offset}` })),
      });
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 20)); // the transform's time
      const next = Number(batch.messages[batch.messages.length - 1]!.offset) + 1;
      await txn.sendOffsets({
        consumerGroupId: group,
        topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: String(next) }] }],
      });
      await txn.commit();
      process.stdout.write('committed\n');
    } catch (error) {
      await txn.abort().catch(() => undefined);
      throw error;
    }
  },
});
