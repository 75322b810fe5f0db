// A consumer group with rebalance listeners and manual commits: two members share a topic's
// partitions; when the second one joins, the first is told which partitions it loses
// (onPartitionsRevoked) and commits what it processed before they move, then each is told what it
// got (onPartitionsAssigned). With autoCommit off, the application decides when offsets are
// committed: here every 10 messages and whenever partitions are revoked.
// Start a broker first (`npx sluice start`), then: node --import tsx examples/consumer_group.ts
// (SLUICE_BOOTSTRAP=HOST:PORT points it at another broker.)
import { Sluice, type Consumer } from '../src/sdk/index.ts';

const sluice = new Sluice({ brokers: [process.env.SLUICE_BOOTSTRAP ?? '127.0.0.1:9092'], clientId: 'example-group' });
const run = Date.now();
const topic = `example-group-orders-${run}`;
const groupId = `example-group-billing-${run}`;

const admin = sluice.admin();
await admin.connect();
await admin.createTopics({ topics: [{ topic, numPartitions: 4 }] });

const producer = sluice.producer();
await producer.connect();
const produce = (from: number, to: number) =>
  producer.send({ topic, messages: Array.from({ length: to - from }, (_, i) => ({ key: `customer-${(from + i) % 13}`, value: `order ${from + i}` })) });

const processed = new Set<string>();

/** A member that commits by hand: every 10 messages, and for whatever it loses in a rebalance. */
async function member(name: string): Promise<Consumer> {
  // Offsets processed and not committed yet, per partition (the next offset to read, as Kafka commits it).
  const pending = new Map<number, string>();
  const commit = async () => {
    if (pending.size === 0) return;
    const offsets = [...pending].map(([partition, offset]) => ({ topic, partition, offset }));
    await consumer.commitOffsets(offsets);
    for (const o of offsets) if (pending.get(o.partition) === o.offset) pending.delete(o.partition);
    console.log(`${name}: committed ${offsets.map((o) => `${o.partition}@${o.offset}`).join(' ')}`);
  };
  const consumer: Consumer = sluice.consumer({
    groupId,
    heartbeatInterval: 500, // members notice a rebalance at their next heartbeat
    onPartitionsAssigned: (assignment) => console.log(`${name}: assigned ${JSON.stringify(assignment)}`),
    // Called before the partitions go to another member (and when the consumer stops): commit now,
    // or the new owner starts again from the last commit.
    onPartitionsRevoked: async (assignment) => {
      console.log(`${name}: revoked ${JSON.stringify(assignment)}`);
      await commit();
    },
  });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  let since_commit = 0;
  await consumer.run({
    autoCommit: false,
    eachMessage: async ({ partition, message }) => {
      processed.add(message.value!.toString()); // the application's work
      pending.set(partition, String(Number(message.offset) + 1));
      if (++since_commit >= 10) {
        since_commit = 0;
        await commit();
      }
    },
  });
  return consumer;
}

async function until(condition: () => boolean, what: string, timeout_ms = 30_000): Promise<void> {
  const deadline = Date.now() + timeout_ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

await produce(0, 40);
const a = await member('member-a'); // run() resolves once its first assignment is in place
await until(() => processed.size === 40, 'member-a to process the first 40 orders');

const b = await member('member-b'); // joining triggers a rebalance: a loses half the partitions
console.log(`after the rebalance: a has ${JSON.stringify(a.assignments())}, b has ${JSON.stringify(b.assignments())}`);
await produce(40, 80);
await until(() => processed.size === 80, 'the group to process all 80 orders');

await a.disconnect(); // revokes (so commits) and leaves the group
await b.disconnect();
await producer.disconnect();

// Every partition's committed offset is its end: nothing is left to read.
const ends = await admin.fetchTopicOffsets(topic);
const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
for (const p of committed!.partitions) {
  const end = Number(ends.find((e) => e.partition === p.partition)!.high);
  const lag = end - Math.max(0, Number(p.offset)); // offset -1: nothing committed (nothing was there to read)
  console.log(`partition ${p.partition}: committed ${p.offset}, end ${end}, lag ${lag}`);
  if (lag !== 0) throw new Error(`partition ${p.partition} has lag ${lag}`);
}

await admin.deleteGroups([groupId]);
await admin.deleteTopics({ topics: [topic] });
await admin.disconnect();
