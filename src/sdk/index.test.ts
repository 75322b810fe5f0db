import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { Sluice, KafkaProtocolError } from './index.ts';
import { start_broker } from '../compose/start_broker.ts';
import { temp_dir } from '../../test/support/storage.ts';

test('the Sluice facade: admin, producer and a consumer group end to end', { timeout: 60_000 }, async () => {
  const data_dir = temp_dir('sdk-facade');
  const broker = await start_broker({ data_dir, kafka: { host: '127.0.0.1', port: 0 } });
  const { host, port } = broker.kafka_address;
  const sluice = new Sluice({ brokers: [`${host}:${port}`], clientId: 'facade-test' });
  try {
    const admin = sluice.admin();
    await admin.connect();
    assert.equal(await admin.createTopics({ topics: [{ topic: 'orders', numPartitions: 3 }] }), true);
    await assert.rejects(admin.createTopics({ topics: [{ topic: 'bad name', numPartitions: 1 }] }), KafkaProtocolError);

    const producer = sluice.producer({ compression: 'gzip' });
    await producer.connect();
    await producer.send({
      topic: 'orders',
      messages: Array.from({ length: 300 }, (_, i) => ({ key: `k${i % 10}`, value: `v${i}` })),
    });
    await producer.disconnect();

    const consumer = sluice.consumer({ groupId: 'billing', heartbeatInterval: 200, sessionTimeout: 6000 });
    await consumer.connect();
    await consumer.subscribe({ topics: ['orders'], fromBeginning: true });
    const seen: string[] = [];
    await consumer.run({ eachMessage: async ({ message }) => void seen.push(message.value!.toString()) });
    const deadline = Date.now() + 20_000;
    while (seen.length < 300 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    await consumer.disconnect();
    assert.equal(new Set(seen).size, 300);
    const committed = await admin.fetchOffsets({ groupId: 'billing', topics: ['orders'] });
    assert.equal(
      committed[0]!.partitions.reduce((sum, p) => sum + Number(p.offset), 0),
      300,
      'the group committed everything on disconnect',
    );
    await admin.disconnect();
  } finally {
    await broker.close();
    fs.rmSync(data_dir, { recursive: true, force: true });
  }
});
