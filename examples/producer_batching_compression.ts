// Producer batching and compression: many send() calls in flight at once share batches per
// partition (a batch leaves when it reaches `batchBytes` or `lingerMs` after its first message),
// batches are compressed as a whole (`compression` on the producer, or per send), and a consumer
// reads compressed batches without any setting of its own.
// Start a broker first (`npx sluice start`), then: node --import tsx examples/producer_batching_compression.ts
// (SLUICE_BOOTSTRAP=HOST:PORT points it at another broker.)
import { Sluice } from '../src/sdk/index.ts';

const sluice = new Sluice({ brokers: [process.env.SLUICE_BOOTSTRAP ?? '127.0.0.1:9092'], clientId: 'example-batching' });
const topic = `example-batching-${Date.now()}`;

const admin = sluice.admin();
await admin.connect();
await admin.createTopics({ topics: [{ topic, numPartitions: 3 }] });

const producer = sluice.producer({
  compression: 'lz4', // also 'gzip', 'snappy', 'zstd' or 'none' (the default)
  lingerMs: 20, // wait up to 20 ms for more messages to a partition before sending its batch
  batchBytes: 64 * 1024, // ... or send as soon as the batch holds 64 KiB
  // idempotent: true and acks: -1 are the defaults: a retried batch is stored once, after fsync.
});
await producer.connect();

// 1. Ten thousand sends started together, not awaited one by one: they are admitted in call order
//    and coalesce into a few large compressed batches per partition.
const count = 10_000;
const started = performance.now();
const sends = Array.from({ length: count }, (_, i) =>
  producer.send({ topic, messages: [{ key: `customer-${i % 50}`, value: JSON.stringify({ order: i, note: 'the same text compresses well '.repeat(4) }) }] }),
);
await Promise.all(sends);
console.log(`${count} concurrent sends acknowledged in ${(performance.now() - started).toFixed(0)} ms`);

// 2. One send with many messages, compressed with another codec than the producer's default.
const [first] = await producer.send({
  topic,
  compression: 'gzip',
  messages: Array.from({ length: 500 }, (_, i) => ({ key: 'bulk', value: `bulk message ${i}` })),
});
console.log(`a gzip batch of 500 messages went to partition ${first!.partition} at base offset ${first!.baseOffset}`);

// 3. sendBatch: several topics (here one) in one call; flush() sends what is still lingering.
await producer.sendBatch({ topicMessages: [{ topic, messages: [{ value: 'from sendBatch' }] }] });
await producer.flush();
await producer.disconnect();

const total = count + 500 + 1;
const offsets = await admin.fetchTopicOffsets(topic);
for (const o of offsets) console.log(`partition ${o.partition}: offsets ${o.low}..${o.high}`);
const stored = offsets.reduce((n, o) => n + Number(o.high) - Number(o.low), 0);
if (stored !== total) throw new Error(`expected ${total} messages in ${topic}, the broker has ${stored}`);

// 4. Reading back: decompression is transparent (here with a consumer without a group).
const consumer = sluice.consumer({});
await consumer.connect();
await consumer.subscribe({ topics: [topic], fromBeginning: true });
let received = 0;
await new Promise<void>((resolve) => {
  void consumer.run({
    eachBatch: async ({ batch }) => {
      received += batch.messages.length;
      if (received >= total) resolve();
    },
  });
});
await consumer.disconnect();
console.log(`read back ${received} messages`);

await admin.deleteTopics({ topics: [topic] });
await admin.disconnect();
