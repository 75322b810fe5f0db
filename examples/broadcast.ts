// Broadcast mode: consumers created without a groupId each read every partition of their topics
// themselves, so every one of them receives every message (a cache invalidation feed, a live
// dashboard). There is no group, no rebalance and nothing to commit: each starts from the beginning
// (fromBeginning) or the end, or where you seek.
// Start a broker first (`npx sluice start`), then: node --import tsx examples/broadcast.ts
// (SLUICE_BOOTSTRAP=HOST:PORT points it at another broker.)
import { Sluice } from '../src/sdk/index.ts';

const sluice = new Sluice({ brokers: [process.env.SLUICE_BOOTSTRAP ?? '127.0.0.1:9092'], clientId: 'example-broadcast' });
const topic = `example-broadcast-${Date.now()}`;
const count = 20;

const admin = sluice.admin();
await admin.connect();
await admin.createTopics({ topics: [{ topic, numPartitions: 3 }] });

/** A consumer without a groupId, collecting what it receives. */
async function listener(name: string) {
  const received: string[] = [];
  const consumer = sluice.consumer({}); // no groupId: broadcast mode
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      received.push(message.value!.toString());
      if (received.length === count) console.log(`${name}: all ${count} messages (the last from partition ${partition})`);
    },
  });
  console.log(`${name}: reading partitions ${JSON.stringify(consumer.assignments())}`);
  return { consumer, received };
}

const first = await listener('dashboard-1');
const second = await listener('dashboard-2');

const producer = sluice.producer();
await producer.connect();
await producer.send({ topic, messages: Array.from({ length: count }, (_, i) => ({ key: `sensor-${i % 5}`, value: `reading ${i}` })) });
await producer.disconnect();

const deadline = Date.now() + 30_000;
while (first.received.length < count || second.received.length < count) {
  if (Date.now() > deadline) throw new Error(`timed out: dashboard-1 has ${first.received.length}, dashboard-2 has ${second.received.length} of ${count}`);
  await new Promise((resolve) => setTimeout(resolve, 50));
}
await first.consumer.disconnect();
await second.consumer.disconnect();

const expected = Array.from({ length: count }, (_, i) => `reading ${i}`).sort().join();
if (first.received.sort().join() !== expected || second.received.sort().join() !== expected) throw new Error('each dashboard should have every reading exactly once');
const groups = (await admin.listGroups()).groups.filter((g) => g.groupId.includes('broadcast'));
console.log(`both dashboards received every message; consumer groups created: ${groups.length}`);

await admin.deleteTopics({ topics: [topic] });
await admin.disconnect();
