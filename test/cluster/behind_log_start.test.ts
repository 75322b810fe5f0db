// Regression, found by the fault suite (seed 8): a follower that was away while its leader deleted
// the records it had not yet copied (the delayed-delivery log prunes itself; retention and
// delete-records do the same) asked for an offset below the leader's log start, was answered
// OFFSET_OUT_OF_RANGE, found nothing to truncate, and asked again, a few times a millisecond,
// forever: it never rejoined the ISR. Now it starts its log again at the leader's log start.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { create_replicated_topic, missing, read_until, shared_cluster } from './cluster_support.ts';

const shared = shared_cluster();
const MESSAGES = 200;

test(
  'follower_behind_the_leader_log_start_catches_up: it starts again where the leader begins',
  { skip: missing ?? false, timeout: 180_000 },
  async () => {
    const { cluster, admin } = shared;
    const topic = 'behind-log-start';
    await create_replicated_topic(shared, topic);
    const { leader, replicas } = await cluster.partition(admin, topic, 0);
    const away = replicas.find((id) => id !== leader)!;
    await cluster.brokers.get(away)!.kill();
    await cluster.wait_for('the ISR without the stopped follower', async () => {
      const state = await cluster.partition_at(leader, topic, 0);
      return !state.isr.includes(away);
    });
    const producer = cluster.kafka('behind-producer').producer({ idempotent: true });
    await producer.connect();
    const values = Array.from({ length: MESSAGES }, (_, i) => `v${i}`);
    for (let i = 0; i < MESSAGES; i += 20)
      await producer.send({ topic, acks: -1, messages: values.slice(i, i + 20).map((value) => ({ value })) });
    await producer.disconnect();
    await admin.deleteTopicRecords({ topic, partitions: [{ partition: 0, offset: String(MESSAGES / 2) }] });

    await cluster.start(away);
    await cluster.wait_for('the follower back in the ISR', async () => {
      const state = await cluster.partition(admin, topic, 0);
      return state.isr.includes(away);
    });
    // It holds what the leader holds: made leader, it serves the same records.
    await cluster.brokers.get(leader)!.kill();
    await cluster.wait_for('a new leader', async () => {
      const state = await cluster.partition(admin, topic, 0);
      return state.leader >= 0 && state.leader !== leader;
    });
    const read = await read_until(shared, topic, 'behind-check', (seen) => seen.length >= MESSAGES / 2);
    assert.deepEqual(read.slice(0, MESSAGES / 2), values.slice(MESSAGES / 2), 'the records above the log start');
    await cluster.start(leader);
  },
);
