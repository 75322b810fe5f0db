// Ordered parallel processing: run({ eachMessage, concurrency, orderBy: 'key' }) handles up to
// `concurrency` messages at once across the assigned partitions, while the messages of one key
// (within its partition) never overlap and run strictly in offset order. Here: account events of
// 6 accounts on 2 partitions, each handled slowly (20 ms); 8 run at a time, yet every account's
// balance updates apply one after the other, in the order they were produced. Offsets are committed
// only up to the lowest unfinished message of each partition, so a crash loses nothing.
// Start a broker first (`npx sluice start`), then: node --import tsx examples/ordered_processing.ts
// (SLUICE_BOOTSTRAP=HOST:PORT points it at another broker.)
import { Sluice } from '../src/sdk/index.ts';

const sluice = new Sluice({ brokers: [process.env.SLUICE_BOOTSTRAP ?? '127.0.0.1:9092'], clientId: 'example-ordered' });
const topic = `example-ordered-${Date.now()}`;
const groupId = `${topic}-ledger`;
const accounts = 6;
const per_account = 10;
const total = accounts * per_account;

const admin = sluice.admin();
await admin.connect();
await admin.createTopics({ topics: [{ topic, numPartitions: 2 }] });

// Each account's events carry a sequence number: 0, 1, 2, ... in the order they are produced.
const producer = sluice.producer();
await producer.connect();
const messages = [];
for (let seq = 0; seq < per_account; seq++) {
  for (let a = 0; a < accounts; a++) messages.push({ key: `account-${a}`, value: JSON.stringify({ seq, amount: 10 + seq }) });
}
await producer.send({ topic, messages });
await producer.disconnect();

const applied = new Map<string, number[]>(); // account -> sequence numbers in the order applied
const running = new Set<string>(); // accounts with a handler running now
let in_flight = 0;
let most_in_flight = 0;
let overlaps = 0;

const consumer = sluice.consumer({ groupId });
await consumer.connect();
await consumer.subscribe({ topics: [topic], fromBeginning: true });
await consumer.run({
  concurrency: 8,
  orderBy: 'key',
  eachMessage: async ({ message }) => {
    const account = message.key!.toString();
    const { seq } = JSON.parse(message.value!.toString()) as { seq: number };
    if (running.has(account)) overlaps++; // never happens with orderBy: 'key'
    running.add(account);
    most_in_flight = Math.max(most_in_flight, ++in_flight);
    await new Promise((resolve) => setTimeout(resolve, 20)); // a slow side effect (a database write, an API call)
    if (!applied.has(account)) applied.set(account, []);
    applied.get(account)!.push(seq);
    running.delete(account);
    in_flight--;
  },
});

const deadline = Date.now() + 30_000;
const done = () => [...applied.values()].reduce((sum, list) => sum + list.length, 0);
while (done() < total) {
  if (Date.now() > deadline) throw new Error(`timed out: ${done()} of ${total} events applied`);
  await new Promise((resolve) => setTimeout(resolve, 20));
}
await consumer.disconnect(); // waits for running handlers, commits, leaves the group

console.log(`applied ${done()} events, at most ${most_in_flight} at once, overlaps within an account: ${overlaps}`);
for (const [account, seqs] of [...applied].sort()) console.log(`  ${account}: ${seqs.join(' ')}`);
const in_order = Array.from({ length: per_account }, (_, i) => i).join();
const wrong = [...applied].filter(([, seqs]) => seqs.join() !== in_order).map(([account]) => account);
if (applied.size !== accounts || wrong.length > 0) throw new Error(`every account's events should apply once, in order; wrong: ${wrong.join(', ') || `${applied.size} accounts`}`);
if (overlaps > 0) throw new Error(`${overlaps} handler(s) of one account overlapped`);
if (most_in_flight < 2 || most_in_flight > 8) throw new Error(`expected between 2 and 8 handlers at once (different accounts in parallel), saw ${most_in_flight}`);

// Everything is committed: the group has no lag.
const committed = (await admin.fetchOffsets({ groupId, topics: [topic] }))[0]!.partitions;
const ends = await admin.fetchTopicOffsets(topic);
for (const end of ends) {
  const offset = committed.find((p) => p.partition === end.partition)?.offset;
  if (offset !== end.high) throw new Error(`partition ${end.partition}: committed ${offset}, end ${end.high}`);
}
console.log('every partition committed to its end');

await admin.deleteGroups([groupId]);
await admin.deleteTopics({ topics: [topic] });
await admin.disconnect();
