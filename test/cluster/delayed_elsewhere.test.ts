// Delayed records whose partition is led by a broker other than the one running delayed delivery
// (the leader of __sluice_delayed): they reach their partition once, when due, and not before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { missing, read_until, shared_cluster } from './cluster_support.ts';

const shared = shared_cluster();
const DELAY_MS = 2000;

test(
  'delayed_delivered_to_a_partition_led_elsewhere: once, when due',
  { skip: missing ?? false, timeout: 120_000 },
  async () => {
    const { cluster, admin } = shared;
    const topic = 'delayed-elsewhere';
    const partitions = cluster.brokers.size;
    await admin.createTopics({ topics: [{ topic, numPartitions: partitions, replicationFactor: 1 }] });
    const producer = cluster.kafka('delayed-elsewhere-producer').producer();
    await producer.connect();
    // The first delayed produce starts delayed delivery somewhere; its host is then known.
    const sent_ms = Date.now();
    for (let p = 0; p < partitions; p++) {
      await producer.send({
        topic,
        acks: -1,
        messages: [{ partition: p, value: `late-${p}`, headers: { 'sluice-delay-ms': String(DELAY_MS) } }],
      });
    }
    const host = (await cluster.partition(admin, '__sluice_delayed', 0)).leader;
    const leaders = await Promise.all(
      Array.from({ length: partitions }, async (_, p) => (await cluster.partition(admin, topic, p)).leader),
    );
    assert.ok(
      leaders.some((leader) => leader !== host),
      'a partition is led elsewhere',
    );
    const values = await read_until(shared, topic, 'delayed-elsewhere-reader', (seen) => seen.length >= partitions);
    const read_ms = Date.now();
    assert.deepEqual(
      [...values].sort(),
      Array.from({ length: partitions }, (_, p) => `late-${p}`),
    );
    assert.ok(read_ms - sent_ms >= DELAY_MS, 'not before due');
    assert.ok(read_ms - sent_ms < DELAY_MS + 10_000, `delivered ${read_ms - sent_ms} ms after sending`);
    // Nothing is delivered a second time.
    await new Promise((resolve) => setTimeout(resolve, DELAY_MS * 2));
    const offsets = await admin.fetchTopicOffsets(topic);
    assert.deepEqual(
      offsets.map((o) => Number(o.high)),
      Array.from({ length: partitions }, () => 1),
    );
    await producer.disconnect();
  },
);
