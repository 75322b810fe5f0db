// The queue model: three queue consumers of one share group compete for the messages of a topic
// (each message goes to one of them), settle each message on its own, retry one after a delay and
// reject one, which lands in the dead-letter topic <topic>.<group>.dlq with its origin in headers.
// Start a broker first (`npx sluice start`), then: node --import tsx examples/queue_consumer.ts
// (SLUICE_BOOTSTRAP=HOST:PORT points it at another broker.)
import { Sluice } from '../src/sdk/index.ts';

const sluice = new Sluice({ brokers: [process.env.SLUICE_BOOTSTRAP ?? '127.0.0.1:9092'], clientId: 'example-queue' });
const topic = `example-emails-${Date.now()}`;
const group = 'mailers';
const count = 30;

const producer = sluice.producer();
await producer.connect();
await producer.send({ topic, messages: Array.from({ length: count }, (_, i) => ({ key: `user-${i}`, value: i === 7 ? 'not-an-address' : `user${i}@example.com` })) });
await producer.disconnect();

const sent = new Map<string, number>();
let retried = false;
const workers = [];
for (const name of ['worker-a', 'worker-b', 'worker-c']) {
  const queue = sluice.queueConsumer({ groupId: group, maxRecords: 5, maxWaitTimeInMs: 200 });
  await queue.subscribe({ topics: [topic] });
  let handled = 0;
  await queue.run({
    concurrency: 2,
    eachMessage: async ({ message, deliveryCount, release, reject }) => {
      const address = message.value!.toString();
      if (!address.includes('@')) return reject('not an e-mail address');
      if (address === 'user3@example.com' && deliveryCount === 1) {
        retried = true;
        return release({ delayMs: 300, reason: 'mail server busy' });
      }
      sent.set(address, (sent.get(address) ?? 0) + 1);
      handled++;
    },
  });
  workers.push({ name, queue, handled: () => handled });
}

const deadline = Date.now() + 20_000;
while (sent.size < count - 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
for (const worker of workers) console.log(`${worker.name} sent ${worker.handled()} e-mails`);
for (const worker of workers) await worker.queue.disconnect();
if (sent.size !== count - 1 || [...sent.values()].some((n) => n !== 1) || !retried) throw new Error(`expected ${count - 1} e-mails sent once each with one retry, got ${sent.size}`);
console.log(`all ${sent.size} valid e-mails sent once; user3 was retried after 300 ms`);

// The rejected message, read from the dead-letter topic (a broadcast consumer: no group).
const dlq = `${topic}.${group}.dlq`;
const reader = sluice.consumer({ maxWaitTimeInMs: 100 });
let letter: { value: string; reason: string } | null = null;
for (let attempt = 0; attempt < 100 && !(await topic_exists(dlq)); attempt++) await new Promise((resolve) => setTimeout(resolve, 100));
await reader.subscribe({ topics: [dlq], fromBeginning: true });
await reader.run({ eachMessage: async ({ message }) => void (letter = { value: message.value!.toString(), reason: String(message.headers?.['sluice-dlq-reason']) }) });
while (!letter && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
await reader.disconnect();
if (!letter) throw new Error('no dead letter');
const { value, reason } = letter as { value: string; reason: string };
console.log(`dead letter in ${dlq}: ${value} (${reason})`);

async function topic_exists(name: string): Promise<boolean> {
  const admin = sluice.admin();
  await admin.connect();
  try {
    return (await admin.listTopics()).includes(name);
  } finally {
    await admin.disconnect();
  }
}
