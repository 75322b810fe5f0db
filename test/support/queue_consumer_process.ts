// A queue consumer in a process of its own, for the crash tests of the queue model
// (test/queues.test.ts): it acquires up to MAX_RECORDS records, prints `A <offset>` for each
// record its handler receives, and never finishes a handler, so everything it got stays acquired
// until the test kills it with SIGKILL.
//   node --import tsx test/support/queue_consumer_process.ts HOST:PORT GROUP TOPIC MAX_RECORDS
import { Sluice } from '../../src/sdk/index.ts';

const [bootstrap, group, topic, max_records] = process.argv.slice(2) as [string, string, string, string];
const queue = new Sluice({ brokers: [bootstrap], clientId: 'queue-crash-child' }).queueConsumer({
  groupId: group,
  maxRecords: Number(max_records),
  maxWaitTimeInMs: 100,
});
await queue.subscribe({ topics: [topic] });
await queue.run({
  concurrency: Number(max_records),
  eachMessage: async ({ message }) => {
    process.stdout.write(`A ${message.offset}\n`);
    await new Promise(() => {});
  },
});
process.stdout.write('RUNNING\n');
