// A consumer in a process of its own, for the crash test of ordered parallel processing
// (src/sdk/ordered.test.ts): it consumes with `concurrency` and `orderBy: 'key'`, handlers sleeping
// 0–5 ms, and prints `S <partition> <offset>` when a handler starts and `D <partition> <offset>`
// right before it returns (stdout to a pipe is synchronous on Linux, so a D line is out before the
// offset can be committed). The handler of the message whose value is HANG never returns. The test
// kills the process with SIGKILL part way through.
//   node --import tsx test/support/ordered_consumer_process.ts HOST:PORT GROUP INSTANCE TOPIC [HANG]
import { Cluster, RETRY_DEFAULT } from '../../src/sdk/cluster.ts';
import { Consumer } from '../../src/sdk/consumer.ts';

const [bootstrap, group, instance, topic, hang] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string | undefined,
];
const cluster = new Cluster({
  brokers: [bootstrap],
  client_id: 'ordered-crash-child',
  retry: { ...RETRY_DEFAULT, retries: 5, initial_retry_ms: 50, max_retry_ms: 500 },
  request_timeout_ms: 10_000,
  max_in_flight: 16,
});
const consumer = new Consumer(cluster, {
  groupId: group,
  groupInstanceId: instance,
  sessionTimeout: 20_000,
  rebalanceTimeout: 5_000,
  heartbeatInterval: 100,
  maxWaitTimeInMs: 100,
});
await consumer.subscribe({ topic, fromBeginning: true });
await consumer.run({
  concurrency: 16,
  orderBy: 'key',
  autoCommitThreshold: 50,
  autoCommitInterval: null,
  eachMessage: async ({ partition, message }) => {
    process.stdout.write(`S ${partition} ${message.offset}\n`);
    if (message.value?.toString() === hang) await new Promise(() => {});
    await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 6)));
    process.stdout.write(`D ${partition} ${message.offset}\n`);
  },
});
process.stdout.write('RUNNING\n');
