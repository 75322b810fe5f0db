// Regression, found by the fault suite (seed 101): with its ISR shrunk to itself alone (below
// min.insync.replicas), a leader still moved its high watermark over what only it held, and so
// answered an idempotent producer's retry of a batch it held as acknowledged. The replicas that had
// left the ISR stayed eligible to lead, one was elected, and the acknowledged records were lost.
// Now the high watermark moves only while the ISR is at least min.insync.replicas (KIP-966).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Kafka, logLevel } from 'kafkajs';
import { create_replicated_topic, missing, shared_cluster } from './cluster_support.ts';

const shared = shared_cluster();

test(
  'high_watermark_held_while_the_isr_is_below_min_insync: nothing only the leader holds is committed',
  { skip: missing ?? false, timeout: 180_000 },
  async () => {
    const { cluster, admin } = shared;
    const topic = 'isr-below-min';
    await create_replicated_topic(shared, topic);
    const producer = cluster.kafka('isr-below-min-producer').producer({ idempotent: true });
    await producer.connect();
    await producer.send({ topic, acks: -1, messages: Array.from({ length: 10 }, (_, i) => ({ value: `v${i}` })) });
    const { leader, replicas } = await cluster.partition(admin, topic, 0);
    const followers = replicas.filter((id) => id !== leader);
    for (const id of followers) cluster.brokers.get(id)!.child.kill('SIGSTOP');
    try {
      await cluster.wait_for('the ISR down to the leader', async () => {
        const state = await cluster.partition_at(leader, topic, 0);
        return state.isr.length === 1;
      });
      // Only the leader answers: the others are stopped.
      const at_leader = new Kafka({
        clientId: 'isr-below-min-leader',
        brokers: [`127.0.0.1:${cluster.ports.get(leader)}`],
        logLevel: logLevel.NOTHING,
      });
      const alone = at_leader.producer();
      await alone.connect();
      const [written] = await alone.send({ topic, acks: 1, messages: [{ value: 'only-on-the-leader' }] });
      await alone.disconnect();
      assert.equal(written!.baseOffset, '10');
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const leader_admin = at_leader.admin();
      await leader_admin.connect();
      const [offsets] = await leader_admin.fetchTopicOffsets(topic);
      await leader_admin.disconnect();
      assert.equal(offsets!.high, '10', 'the high watermark stays below what only the leader holds');
    } finally {
      for (const id of followers) cluster.brokers.get(id)!.child.kill('SIGCONT');
    }
    await cluster.wait_for('an ISR of 3 and the record committed', async () => {
      const state = await cluster.partition(admin, topic, 0);
      const [offsets] = await admin.fetchTopicOffsets(topic);
      return state.isr.length === 3 && offsets!.high === '11';
    });
    await producer.disconnect();
  },
);
