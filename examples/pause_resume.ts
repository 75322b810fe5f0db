// Flow control with pause and resume: consumer.pause() stops fetching whole topics or single
// partitions (the position is kept, nothing is skipped) until consumer.resume(); inside a handler,
// the payload's pause() pauses just the current partition after this message and returns a
// function that resumes it. Here: partition 0 feeds a downstream that is "down" for a second, and
// partition 1 is throttled to bursts of 5 messages.
// Start a broker first (`npx sluice start`), then: node --import tsx examples/pause_resume.ts
// (SLUICE_BOOTSTRAP=HOST:PORT points it at another broker.)
import { Sluice } from '../src/sdk/index.ts';

const sluice = new Sluice({ brokers: [process.env.SLUICE_BOOTSTRAP ?? '127.0.0.1:9092'], clientId: 'example-pause' });
const topic = `example-pause-${Date.now()}`;
const per_partition = 15;

const admin = sluice.admin();
await admin.connect();
await admin.createTopics({ topics: [{ topic, numPartitions: 2 }] });

const started = Date.now();
const log = (text: string) => console.log(`${String(Date.now() - started).padStart(5)} ms  ${text}`);
const received = new Map<number, number>([
  [0, 0],
  [1, 0],
]);

const consumer = sluice.consumer({});
await consumer.connect();
await consumer.subscribe({ topics: [topic], fromBeginning: true });

// The downstream of partition 0 is unavailable: do not fetch that partition for now.
consumer.pause([{ topic, partitions: [0] }]);

let in_burst = 0;
await consumer.run({
  eachMessage: async ({ partition, message, pause }) => {
    received.set(partition, received.get(partition)! + 1);
    log(`partition ${partition} offset ${message.offset}: ${message.value}`);
    if (partition === 1 && ++in_burst === 5) {
      // Throttle: after 5 messages, pause this partition for 200 ms (this message counts as done).
      in_burst = 0;
      const resume = pause();
      setTimeout(resume, 200);
    }
  },
});
log(`assigned ${JSON.stringify(consumer.assignments())}, paused ${JSON.stringify(consumer.paused())}`);

const producer = sluice.producer();
await producer.connect();
await producer.send({
  topic,
  messages: [0, 1].flatMap((partition) => Array.from({ length: per_partition }, (_, i) => ({ partition, value: `job ${i} for partition ${partition}` }))),
});
await producer.disconnect();

const wait_for = async (done: () => boolean, what: string) => {
  const deadline = Date.now() + 30_000;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

await wait_for(() => received.get(1) === per_partition, 'partition 1');
await new Promise((resolve) => setTimeout(resolve, 1000)); // the downstream is still down
if (received.get(0) !== 0) throw new Error('partition 0 was paused and should have delivered nothing');
log('downstream is back: resuming partition 0');
consumer.resume([{ topic, partitions: [0] }]);
await wait_for(() => received.get(0) === per_partition, 'partition 0');
await consumer.disconnect();
log(`received ${received.get(0)} + ${received.get(1)} messages`);

await admin.deleteTopics({ topics: [topic] });
await admin.disconnect();
