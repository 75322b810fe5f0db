// De-duplication: dedupe(handler, { store }) wraps an eachMessage handler so a message whose id was
// already processed is skipped. The id is the `message-id` header: the SDK producer gives every
// message a UUID unless the application sets one. An application that resends a message (say its
// acknowledgement was lost) must send it with the same message-id for the resend to be recognised;
// here payment requests carry their request id as their message-id, and two of them are resent.
// MemoryStore keeps the ids in this process (an LRU, optionally with a TTL); RedisStore and SqlStore
// share them across processes (see docs/sdk.md, "De-duplication").
// Start a broker first (`npx sluice start`), then: node --import tsx examples/dedupe.ts
// (SLUICE_BOOTSTRAP=HOST:PORT points it at another broker.)
import { dedupe, MemoryStore, Sluice } from '../src/sdk/index.ts';

const sluice = new Sluice({ brokers: [process.env.SLUICE_BOOTSTRAP ?? '127.0.0.1:9092'], clientId: 'example-dedupe' });
const topic = `example-dedupe-${Date.now()}`;
const groupId = `${topic}-payments`;

const admin = sluice.admin();
await admin.connect();
await admin.createTopics({ topics: [{ topic, numPartitions: 2 }] });

const producer = sluice.producer();
await producer.connect();
const payment = (request: string, customer: string, cents: number) => ({
  key: customer,
  value: JSON.stringify({ request, cents }),
  headers: { 'message-id': request }, // the application's own id: a resend carries the same one
});
await producer.send({ topic, messages: [payment('req-1', 'alice', 500), payment('req-2', 'bob', 700), payment('req-3', 'alice', 200)] });
// The application did not see the acknowledgement of req-1 and req-2 and sends them again.
await producer.send({ topic, messages: [payment('req-1', 'alice', 500), payment('req-2', 'bob', 700)] });
// A message without an explicit id gets a fresh UUID: it is never taken for a duplicate.
await producer.send({ topic, messages: [{ key: 'carol', value: JSON.stringify({ request: 'req-4', cents: 900 }) }] });
await producer.disconnect();
const sent = 6;

const charged: string[] = [];
const duplicates: string[] = [];
let delivered = 0;
const store = new MemoryStore({ max_ids: 10_000, ttl_ms: 24 * 3600_000 });
const charge = dedupe(
  async ({ message }) => {
    const { request, cents } = JSON.parse(message.value!.toString()) as { request: string; cents: number };
    charged.push(request);
    console.log(`charged ${message.key!.toString()} ${cents} cents (${request})`);
  },
  { store, onDuplicate: (id) => duplicates.push(id) },
);

const consumer = sluice.consumer({ groupId });
await consumer.connect();
await consumer.subscribe({ topics: [topic], fromBeginning: true });
await consumer.run({
  eachMessage: async (payload) => {
    await charge(payload);
    delivered++;
  },
});

const deadline = Date.now() + 30_000;
while (delivered < sent) {
  if (Date.now() > deadline) throw new Error(`timed out: ${delivered} of ${sent} messages delivered`);
  await new Promise((resolve) => setTimeout(resolve, 20));
}
await consumer.disconnect();

console.log(`delivered ${delivered}, charged ${charged.length}, skipped as duplicates: ${duplicates.sort().join(', ')}`);
if (charged.slice().sort().join() !== 'req-1,req-2,req-3,req-4') throw new Error(`each request should be charged once, charged: ${charged.join(', ')}`);
if (duplicates.join() !== 'req-1,req-2') throw new Error(`the resends of req-1 and req-2 should be skipped, skipped: ${duplicates.join(', ')}`);
if (!(await store.seen('req-3'))) throw new Error('req-3 should be marked as processed');

await admin.deleteGroups([groupId]);
await admin.deleteTopics({ topics: [topic] });
await admin.disconnect();
