// Regression, found by the fault suite (seed 8): a follower that was away while its leader deleted
// the records it had not yet copied (the delayed-delivery log prunes itself; retention and
// delete-records do the same) asked for an offset below the leader's log start, was answered
// OFFSET_OUT_OF_RANGE, found nothing to truncate, and asked again, a few times a millisecond,
// forever: it never rejoined the ISR. Now it starts its log again at the leader's log start.
//
// Regression, found by the fault suite (seed 20261202): when the leader's log start fell inside a
// batch (the share-state log prunes itself there), the restarted follower got that batch, whose
// base is below its log start, and stopped on a broken invariant. An empty log now starts at the
// batch's base and takes it whole; a follower's log start follows its leader's.
//
// And a follower away while its leader compacted a compacted topic: the leader's log has gaps
// where its cleaner removed records; the follower copies across them and, made leader, serves
// each key's latest value.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { create_replicated_topic, missing, read_until, shared_cluster } from './cluster_support.ts';
import { Sluice } from '../../src/sdk/index.ts';

// A short cleaner interval for the compacted topic's test.
const shared = shared_cluster({ args: ['--cleaner-interval-ms', '300'] });
const MESSAGES = 200;
const BATCH = 20;

async function follower_catches_up_after_delete(topic: string, delete_before: number): Promise<void> {
  const { cluster, admin } = shared;
  await create_replicated_topic(shared, topic);
  const { leader, replicas } = await cluster.partition(admin, topic, 0);
  // Not broker 1: a client's first bootstrap address is its proxy, which accepts and then closes
  // every connection while the broker is down, and kafkajs keeps asking it.
  const away = replicas.find((id) => id !== leader && id !== 1)!;
  await cluster.brokers.get(away)!.kill();
  await cluster.wait_for('the ISR without the stopped follower', async () => {
    const state = await cluster.partition_at(leader, topic, 0);
    return !state.isr.includes(away);
  });
  const producer = cluster.kafka(`${topic}-producer`).producer({ idempotent: true });
  await producer.connect();
  const values = Array.from({ length: MESSAGES }, (_, i) => `v${i}`);
  for (let i = 0; i < MESSAGES; i += BATCH)
    await producer.send({ topic, acks: -1, messages: values.slice(i, i + BATCH).map((value) => ({ value })) });
  await producer.disconnect();
  await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: String(delete_before) }] });

  await cluster.start(away);
  await cluster.wait_for('the follower back in the ISR', async () => {
    const state = await cluster.partition(admin, topic, 0);
    return state.isr.includes(away);
  });
  // It holds what the leader holds, from the same log start: made leader, it serves the same records.
  await cluster.brokers.get(leader)!.kill();
  await cluster.wait_for('a new leader', async () => {
    const state = await cluster.partition(admin, topic, 0);
    return state.leader >= 0 && state.leader !== leader;
  });
  const [offsets] = await admin.fetchTopicOffsets(topic);
  assert.equal(Number(offsets!.low), delete_before, 'the new leader starts where the old one did');
  const wanted = MESSAGES - delete_before;
  const read = await read_until(shared, topic, `${topic}-check`, (seen) => seen.length >= wanted);
  assert.deepEqual(read.slice(0, wanted), values.slice(delete_before), 'the records above the log start');
  await cluster.start(leader);
}

test(
  'follower_behind_the_leader_log_start_catches_up: it starts again where the leader begins',
  { skip: missing ?? false, timeout: 180_000 },
  () => follower_catches_up_after_delete('behind-log-start', MESSAGES / 2),
);

test(
  'follower_restarted_inside_a_batch: the leader log start within a batch, the follower takes it whole',
  { skip: missing ?? false, timeout: 180_000 },
  () => follower_catches_up_after_delete('behind-log-start-mid-batch', MESSAGES / 2 + BATCH / 2),
);

test(
  'follower_copies_a_compacted_leader: across the gaps of its cleaner; made leader, the latest value of each key',
  { skip: missing ?? false, timeout: 180_000 },
  async () => {
    const { cluster, admin } = shared;
    const topic = 'compacted-follower';
    await create_replicated_topic(shared, topic, 1, {
      'cleanup.policy': 'compact',
      'segment.bytes': String(16 * 1024),
      'min.cleanable.dirty.ratio': '0.01',
    });
    const { leader, replicas } = await cluster.partition(admin, topic, 0);
    const away = replicas.find((id) => id !== leader && id !== 1)!;
    await cluster.brokers.get(away)!.kill();
    const producer = cluster.kafka(`${topic}-producer`).producer({ idempotent: true });
    await producer.connect();
    const latest = new Map<string, string>();
    for (let i = 0; i < 5_000; i += 100) {
      const messages = Array.from({ length: 100 }, (_, j) => ({ key: `k${(i + j) % 50}`, value: `v${i + j}` }));
      for (const m of messages) latest.set(m.key, m.value);
      await producer.send({ topic, acks: -1, messages });
    }
    await producer.disconnect();
    const sdk = new Sluice({ brokers: cluster.bootstrap });
    const sdk_admin = sdk.admin();
    await sdk_admin.connect();
    await cluster.wait_for('the leader compacted', async () => {
      const dirs = await sdk_admin.describeLogDirs({ topics: [{ topic }] });
      const mine = dirs.find((d) => d.brokerId === leader)?.logDirs[0]?.topics[0]?.partitions[0];
      return (mine?.compaction?.lastCleanedMs ?? -1) > 0;
    });
    await sdk_admin.disconnect();
    await cluster.start(away);
    await cluster.wait_for('the follower back in the ISR', async () =>
      (await cluster.partition(admin, topic, 0)).isr.includes(away),
    );
    await cluster.brokers.get(leader)!.kill();
    await cluster.wait_for('a new leader', async () => {
      const state = await cluster.partition(admin, topic, 0);
      return state.leader >= 0 && state.leader !== leader;
    });
    const read = await read_until(shared, topic, `${topic}-check`, (values) => values.includes('v4999'));
    const last_read = new Map<string, number>();
    read.forEach((value) => last_read.set(`k${Number(value.slice(1)) % 50}`, Number(value.slice(1))));
    assert.deepEqual(
      [...latest].map(([key]) => `${key}=v${last_read.get(key)}`),
      [...latest].map(([key, value]) => `${key}=${value}`),
    );
    assert.ok(read.length < 5_000, `compacted: ${read.length} records read`);
    await cluster.start(leader);
  },
);
