// Replaying from a point in time: messages carry timestamps (the producer's, or one you give);
// admin.fetchTopicOffsetsByTimestamp finds, per partition, the first offset at or after a time, and
// consumer.seekToTimestamp moves a consumer there. Here: a day of hourly events, replayed from 18:00
// (UTC).
// Start a broker first (`npx sluice start`), then: node --import tsx examples/seek_by_timestamp.ts
// (SLUICE_BOOTSTRAP=HOST:PORT points it at another broker.)
import { Sluice } from '../src/sdk/index.ts';

const sluice = new Sluice({ brokers: [process.env.SLUICE_BOOTSTRAP ?? '127.0.0.1:9092'], clientId: 'example-seek' });
const topic = `example-seek-${Date.now()}`;

const admin = sluice.admin();
await admin.connect();
await admin.createTopics({ topics: [{ topic, numPartitions: 2 }] });

// Yesterday (UTC), one event per hour, alternating between the two partitions.
const HOUR = 3_600_000;
const midnight = new Date();
midnight.setUTCHours(0, 0, 0, 0);
const day = midnight.getTime() - 24 * HOUR;
const producer = sluice.producer();
await producer.connect();
await producer.send({
  topic,
  messages: Array.from({ length: 24 }, (_, hour) => ({ partition: hour % 2, timestamp: day + hour * HOUR, value: `event at ${String(hour).padStart(2, '0')}:00` })),
});
await producer.disconnect();

const from = day + 18 * HOUR;
console.log(`replaying from ${new Date(from).toISOString()}`);

// Where 18:00 is in each partition (an admin lookup; the consumer does the same below).
for (const { partition, offset } of await admin.fetchTopicOffsetsByTimestamp(topic, from)) console.log(`partition ${partition}: first offset at or after 18:00 is ${offset}`);

// A consumer (here without a group) positioned by time: a seek before run() applies as soon as the
// partition is assigned; in a group, seek in onPartitionsAssigned or before run().
const consumer = sluice.consumer({});
await consumer.connect();
await consumer.subscribe({ topics: [topic] });
for (const partition of [0, 1]) await consumer.seekToTimestamp({ topic, partition, timestamp: from });
const replayed: Array<{ time: number; value: string }> = [];
await consumer.run({
  eachMessage: async ({ message }) => {
    replayed.push({ time: Number(message.timestamp), value: message.value!.toString() });
    console.log(`${new Date(Number(message.timestamp)).toISOString()}  ${message.value}`);
  },
});

const deadline = Date.now() + 30_000;
while (replayed.length < 6) {
  if (Date.now() > deadline) throw new Error(`timed out: replayed ${replayed.length} of 6 events`);
  await new Promise((resolve) => setTimeout(resolve, 50));
}
await new Promise((resolve) => setTimeout(resolve, 500)); // nothing else should arrive
await consumer.disconnect();

if (replayed.length !== 6 || replayed.some((e) => e.time < from)) throw new Error(`expected the 6 events from 18:00 on, got ${replayed.map((e) => e.value).join(', ')}`);
console.log('replayed the 6 events from 18:00 to 23:00');

await admin.deleteTopics({ topics: [topic] });
await admin.disconnect();
