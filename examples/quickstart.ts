// Quickstart with the SDK: create a topic, send keyed messages, read them in a consumer group.
// Start a broker first (`npx sluice start`), then: node --import tsx examples/quickstart.ts
import { Sluice } from '../src/sdk/index.ts';

const sluice = new Sluice({ brokers: [process.env.SLUICE_BOOTSTRAP ?? '127.0.0.1:9092'], clientId: 'quickstart' });

const admin = sluice.admin();
await admin.connect();
await admin.createTopics({ topics: [{ topic: 'quickstart-orders', numPartitions: 3 }] });
await admin.disconnect();

const producer = sluice.producer(); // idempotent, acks after the broker's fsync
await producer.connect();
const sent = await producer.send({
  topic: 'quickstart-orders',
  messages: [
    { key: 'customer-7', value: 'order #1' },
    { key: 'customer-7', value: 'order #2' },
    { key: 'customer-9', value: 'order #3' },
  ],
});
console.log('sent', sent);
await producer.disconnect();

const consumer = sluice.consumer({ groupId: 'quickstart-billing' });
await consumer.connect();
await consumer.subscribe({ topics: ['quickstart-orders'], fromBeginning: true });
let received = 0;
await new Promise<void>((resolve) => {
  void consumer.run({
    eachMessage: async ({ partition, message }) => {
      console.log(`partition ${partition} offset ${message.offset}: ${message.key?.toString()} ${message.value?.toString()}`);
      if (++received === 3) resolve();
    },
  });
});
await consumer.disconnect(); // commits what was processed and leaves the group
