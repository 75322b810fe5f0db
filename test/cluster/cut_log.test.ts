// Regression, found by the fault suite (seed 5): the sole ISR member of a partition lost the tail
// of its log on disk (a cut segment file), restarted, led again with what was left, and the other
// replicas truncated the acknowledged records they held to match it. Now replicas that left the
// ISR once it was below min.insync.replicas stay eligible to lead (they hold every acknowledged
// record), and a broker whose recovery cut a log short gives up its place in the ISR on start.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { create_replicated_topic, missing, read_until, shared_cluster } from './cluster_support.ts';

const shared = shared_cluster();
const MESSAGES = 200;

test(
  'sole_isr_member_with_a_cut_log_does_not_lead: acknowledged writes survive its lost tail',
  { skip: missing ?? false, timeout: 180_000 },
  async () => {
    const { cluster, admin } = shared;
    const topic = 'cut-log';
    await create_replicated_topic(shared, topic);
    const producer = cluster.kafka('cut-log-producer').producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const values = Array.from({ length: MESSAGES }, (_, i) => `v${i}`);
    for (let i = 0; i < MESSAGES; i += 20)
      await producer.send({ topic, acks: -1, messages: values.slice(i, i + 20).map((value) => ({ value })) });
    await producer.disconnect();

    const { leader, replicas } = await cluster.partition(admin, topic, 0);
    const followers = replicas.filter((id) => id !== leader);
    for (const id of followers) await cluster.brokers.get(id)!.kill();
    await cluster.wait_for('the ISR down to the leader', async () => {
      const state = await cluster.partition_at(leader, topic, 0);
      return state.isr.length === 1 && state.isr[0] === leader;
    });

    // The leader dies too, and its copy loses its second half on disk.
    const victim = cluster.brokers.get(leader)!;
    await victim.kill();
    const dir = path.join(victim.data_dir, `${topic}-0`);
    const segment = path.join(
      dir,
      fs
        .readdirSync(dir)
        .filter((name) => name.endsWith('.log'))
        .sort()[0]!,
    );
    fs.truncateSync(segment, Math.floor(fs.statSync(segment).size / 2));

    // It returns first: it must not lead with what is left.
    await cluster.start(leader);
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const meanwhile = await cluster.partition_at(leader, topic, 0);
    assert.notEqual(meanwhile.leader, leader, 'the broker with the cut log leads again');
    for (const id of followers) await cluster.start(id);
    await cluster.wait_for('a leader and an ISR of 3', async () => {
      const state = await cluster.partition(admin, topic, 0);
      return state.leader >= 0 && state.isr.length === 3;
    });
    const read = await read_until(shared, topic, 'cut-log-check', (seen) => seen.length >= MESSAGES);
    assert.deepEqual(read.slice(0, MESSAGES), values, 'every acknowledged record, in order');
  },
);
