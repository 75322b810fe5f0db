// Consumer groups and share groups in a cluster: they keep going when the broker coordinating them
// is killed, and a share group reads partitions led by brokers other than its coordinator; delayed
// records reach partitions led by brokers other than the one running delayed delivery. Real
// etcd and broker processes, driven by kafkajs and the Sluice SDK.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Producer } from 'kafkajs';
import { Sluice } from '../../src/sdk/index.ts';
import { type SharedCluster, create_replicated_topic, missing, read_until, shared_cluster } from './cluster_support.ts';

// KIP-848 members hear of assignment changes on their heartbeats: every half second here.
const shared = shared_cluster({ args: ['--group-consumer-heartbeat-interval-ms', '500'] });

const RETRY = { retries: 60, initialRetryTime: 100, maxRetryTime: 1000 };

/** A consumer group and a share group reading `topic` from the start, each into a set of values. */
async function start_both_groups({ cluster }: SharedCluster, topic: string) {
  const in_group = new Set<string>();
  const consumer = cluster
    .kafka('coordinated-group')
    .consumer({ groupId: 'billing', sessionTimeout: 10_000, heartbeatInterval: 500, retry: RETRY });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({ eachMessage: async ({ message }) => void in_group.add(message.value!.toString()) });

  const in_queue = new Set<string>();
  const queue = new Sluice({ brokers: cluster.bootstrap, clientId: 'coordinated-queue', retry: RETRY }).queueConsumer({
    groupId: 'mailers',
    maxWaitTimeInMs: 200,
  });
  await queue.subscribe({ topics: [topic] });
  await queue.run({ eachMessage: async ({ message }) => void in_queue.add(message.value!.toString()) });
  return { in_group, in_queue, consumer, queue };
}

test(
  'consumer groups and share groups keep working when their coordinator is killed',
  { skip: missing ?? false, timeout: 180_000 },
  async () => {
    const { cluster, admin } = shared;
    const topic = 'coordinated';
    await create_replicated_topic(shared, topic, 3);
    const producer = cluster.kafka('coordinated-producer').producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    // One partition per send: kafkajs 2.2.4 can resolve a send spanning partitions without writing
    // one whose leader moved to a broker that already answered for another (docs/kafka-compatibility.md).
    const send = async (from: number, count: number) => {
      for (let i = from; i < from + count; i += 10) {
        await producer.send({
          topic,
          acks: -1,
          messages: Array.from({ length: 10 }, (_, j) => ({
            partition: (i / 10) % 3,
            key: `k${i + j}`,
            value: `c${i + j}`,
          })),
        });
      }
    };
    await send(0, 300);
    const { in_group, in_queue, consumer, queue } = await start_both_groups(shared, topic);
    await cluster.wait_for('both groups under way', async () => in_group.size >= 300 && in_queue.size >= 300, 60_000);
    const coordinator = (await cluster.partition(admin, '__consumer_offsets', 0)).leader;
    await cluster.brokers.get(coordinator)!.kill();
    await send(300, 300);
    await cluster
      .wait_for(
        'every message through both groups after the coordinator died',
        async () => in_group.size === 600 && in_queue.size === 600,
        90_000,
      )
      .catch(async (error: Error) => {
        const missing_ids = [...Array(600).keys()].map((i) => `c${i}`).filter((id) => !in_group.has(id));
        const group = `group ${in_group.size}/600 (missing ${missing_ids.slice(0, 20).join(',')})`;
        throw new Error(`${error.message}: ${group}, queue ${in_queue.size}/600`);
      });
    const moved = (await cluster.partition(admin, '__consumer_offsets', 0)).leader;
    assert.notEqual(moved, coordinator, 'another broker coordinates now');
    await cluster.wait_for(
      'the group commits its position with the new coordinator',
      async () => {
        const offsets = await admin.fetchOffsets({ groupId: 'billing', topics: [topic] });
        const committed = offsets[0]!.partitions.reduce((sum, p) => sum + Number(p.offset), 0);
        return committed === 600;
      },
      30_000,
    );
    await consumer.disconnect();
    await queue.disconnect();
    await producer.disconnect();
    await cluster.start(coordinator);
  },
);

/** An SDK member of the KIP-848 group `ledgers`, collecting what it reads. */
async function kip848_member({ cluster }: SharedCluster, topic: string, seen: Set<string>) {
  const sluice = new Sluice({ brokers: cluster.bootstrap, clientId: 'kip848-member', retry: RETRY });
  const consumer = sluice.consumer({ groupId: 'ledgers', groupProtocol: 'consumer', maxWaitTimeInMs: 200 });
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await consumer.run({
    autoCommitInterval: 200,
    eachMessage: async ({ message }) => void seen.add(message.value!.toString()),
  });
  return { sluice, consumer };
}

test(
  'a KIP-848 consumer group shares partitions and keeps going when its coordinator is killed',
  { skip: missing ?? false, timeout: 180_000 },
  async () => {
    const { cluster, admin } = shared;
    const topic = 'ledger-entries';
    await create_replicated_topic(shared, topic, 4);
    const producer = cluster.kafka('kip848-producer').producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    await send_to_each(producer, topic, 4, 'a', 50);
    const seen = new Set<string>();
    const members = [await kip848_member(shared, topic, seen), await kip848_member(shared, topic, seen)];
    const owned = () => members.map((m) => m.consumer.assignments().flatMap((t) => t.partitions).length);
    await cluster.wait_for(
      'two members with two partitions each, every message read',
      async () => {
        return owned().join() === '2,2' && seen.size === 200;
      },
      60_000,
    );
    const coordinator = (await cluster.partition(admin, '__consumer_offsets', 0)).leader;
    await cluster.brokers.get(coordinator)!.kill();
    await send_to_each(producer, topic, 4, 'b', 50);
    await cluster.wait_for('every message read after the coordinator died', async () => seen.size === 400, 90_000);
    const check = members[0]!.sluice.admin();
    await cluster.wait_for(
      'the group back to two members at the new coordinator',
      async () => {
        const [group] = (await check.describeConsumerGroups(['ledgers']).catch(() => ({ groups: [] }))).groups;
        return group?.state === 'Stable' && group.members.length === 2 && owned().join() === '2,2';
      },
      60_000,
    );
    await cluster.wait_for(
      'the commits cover every message',
      async () => {
        const offsets = await admin.fetchOffsets({ groupId: 'ledgers', topics: [topic] });
        return offsets[0]!.partitions.reduce((sum, p) => sum + Number(p.offset), 0) === 400;
      },
      30_000,
    );
    await check.disconnect();
    for (const m of members) await m.consumer.disconnect();
    await producer.disconnect();
    await cluster.start(coordinator);
    await settled(shared);
  },
);

/**
 * The restarted broker back in every coordinator partition's ISR and leading where it is the
 * preferred replica: the controller would otherwise move coordinators under the next test.
 */
async function settled({ cluster, admin }: SharedCluster) {
  for (const topic of ['__consumer_offsets', '__share_group_state']) {
    await cluster.wait_for(
      `${topic} settled after the restart`,
      async () => {
        const state = await cluster.partition(admin, topic, 0);
        return state.isr.length === cluster.brokers.size && state.leader === state.replicas[0];
      },
      60_000,
    );
  }
}

/** Sends `per_partition` messages `${prefix}-${partition}-${i}` to each partition. */
async function send_to_each(
  producer: Producer,
  topic: string,
  partitions: number,
  prefix: string,
  per_partition: number,
) {
  for (let p = 0; p < partitions; p++) {
    await producer.send({
      topic,
      acks: -1,
      messages: Array.from({ length: per_partition }, (_, i) => ({ partition: p, value: `${prefix}-${p}-${i}` })),
    });
  }
}

/** A share group that releases every tenth message once (then accepts it) and rejects every 25th. */
async function start_picky_queue({ cluster }: SharedCluster, topic: string) {
  const accepted = new Set<string>();
  const released = new Set<string>();
  const rejected = new Set<string>();
  const queue = new Sluice({ brokers: cluster.bootstrap, clientId: 'spread-queue' }).queueConsumer({
    groupId: 'spreaders',
    maxWaitTimeInMs: 2_000,
  });
  await queue.subscribe({ topics: [topic] });
  await queue.run({
    eachMessage: async ({ message, release, reject }) => {
      const value = message.value!.toString();
      const n = Number(value.split('-')[2]);
      if (n % 25 === 0) {
        rejected.add(value);
        reject('not wanted');
      } else if (n % 10 === 5 && !released.has(value)) {
        released.add(value);
        release({ delayMs: 0 });
      } else accepted.add(value);
    },
  });
  return { accepted, released, rejected, queue };
}

/** The rejected ones reach the dead-letter topic with their original values (read from the leaders). */
async function assert_dead_lettered({ cluster, admin }: SharedCluster, topic: string, rejected: Set<string>) {
  const dlq = `${topic}.spreaders.dlq`;
  const letters = new Set<string>();
  const reader = cluster.kafka('spread-dlq').consumer({ groupId: 'spread-dlq' });
  await reader.connect();
  await cluster.wait_for('the dead-letter topic', async () => (await admin.listTopics()).includes(dlq), 30_000);
  await reader.subscribe({ topic: dlq, fromBeginning: true });
  await reader.run({ eachMessage: async ({ message }) => void letters.add(message.value!.toString()) });
  await cluster.wait_for('every rejected message dead-lettered', async () => letters.size === rejected.size, 30_000);
  assert.deepEqual([...letters].sort(), [...rejected].sort());
  await reader.disconnect();
}

test(
  'a share group reads partitions that have no replica on its coordinator',
  { skip: missing ?? false, timeout: 120_000 },
  async (t) => {
    const { cluster, admin } = shared;
    const topic = 'spread';
    const partitions = cluster.brokers.size;
    await admin.createTopics({ topics: [{ topic, numPartitions: partitions, replicationFactor: 1 }] });
    const coordinator = (await cluster.partition(admin, '__share_group_state', 0)).leader;
    const elsewhere: number[] = [];
    for (let p = 0; p < partitions; p++)
      if (!(await cluster.partition(admin, topic, p)).replicas.includes(coordinator)) elsewhere.push(p);
    assert.ok(elsewhere.length > 0, 'some partitions live only on other brokers');

    const producer = cluster.kafka('spread-producer').producer();
    await producer.connect();
    await send_to_each(producer, topic, partitions, 'a', 50);
    const { accepted, released, rejected, queue } = await start_picky_queue(shared, topic);
    // A failure below must not leave the queue consumer running: the file would never end.
    t.after(() => Promise.all([queue.disconnect(), producer.disconnect()]).catch(() => undefined));
    const total = 50 * partitions;
    const rejected_count = 2 * partitions;
    await cluster.wait_for('every message settled', async () => accepted.size + rejected.size === total, 60_000);
    assert.equal(rejected.size, rejected_count);
    assert.equal(released.size, 4 * partitions); // 5, 15, 35, 45 (25 is rejected)

    // A message produced while the consumer waits wakes its long poll (the leader's high watermark
    // reaches the coordinator by the partition being watched).
    const sent_ms = Date.now();
    await producer.send({ topic, acks: -1, messages: [{ partition: elsewhere[0]!, value: `b-${elsewhere[0]}-1` }] });
    await cluster.wait_for('the late message', async () => accepted.has(`b-${elsewhere[0]}-1`), 10_000);
    const wake_ms = Date.now() - sent_ms;
    assert.ok(wake_ms < 1_900, `delivered in ${wake_ms} ms, before the 2 s long poll ran out`);

    await assert_dead_lettered(shared, topic, rejected);

    // The admin API of a broker without a replica browses the partition on its leader.
    const http = cluster.brokers.get(coordinator)!.http!;
    const page = (await (
      await fetch(`http://${http}/api/v1/topics/${topic}/partitions/${elsewhere[0]}/messages?offset=0&limit=5`)
    ).json()) as { items: Array<{ value: string }>; high_watermark: number };
    assert.deepEqual(
      page.items.map((m) => m.value),
      [0, 1, 2, 3, 4].map((i) => `a-${elsewhere[0]}-${i}`),
    );
    assert.equal(page.high_watermark, 51);
    await queue.disconnect();
    await producer.disconnect();
  },
);

// Delayed records whose partition is led by a broker other than the one running delayed delivery
// (the leader of __sluice_delayed): they reach their partition once, when due, and not before.
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
