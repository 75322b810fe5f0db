// Regression, found by the fault suite (seed 4343): a consumer whose cached metadata had a
// partition without a leader (one being elected) failed every fetch round on it, so none of its
// partitions was fetched until the metadata max age (5 minutes) refreshed the cache. Now a
// leaderless partition waits for the next round, and its leader is looked up again meanwhile.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Consumer } from './consumer.ts';
import { FAST, Harness, until } from './consumer_test_support.ts';

test('leaderless_partition_held_back_every_partition: the others are fetched, its leader looked up again', async () => {
  const harness = await Harness.start('leaderless');
  try {
    await harness.broker.broker.topics.create('two', 2);
    await harness.append('two', 0, [{ key: 'a', value: 'p0' }]);
    await harness.append('two', 1, [{ key: 'b', value: 'p1' }]);
    const cluster = harness.cluster();
    const consumer = new Consumer(cluster, { ...FAST, metadataMaxAge: 300_000 });
    harness.on_close(() => consumer.disconnect());
    await consumer.subscribe({ topic: 'two', fromBeginning: true });
    const seen: string[] = [];
    await consumer.run({ eachMessage: async ({ message }) => void seen.push(message.value!.toString()) });
    await until(() => seen.length === 2, 'both partitions read', 5_000);
    // As a Metadata answer during an election has it: partition 1 without a leader.
    cluster.topics.get('two')!.partitions.find((p) => p.partition === 1)!.leader = -1;
    await harness.append('two', 0, [{ key: 'a', value: 'p0-again' }]);
    await harness.append('two', 1, [{ key: 'b', value: 'p1-again' }]);
    await until(() => seen.length === 4, 'both partitions read again', 5_000);
    assert.deepEqual(seen.sort(), ['p0', 'p0-again', 'p1', 'p1-again']);
  } finally {
    await harness.close();
  }
});
