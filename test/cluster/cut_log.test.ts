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

/** The segment file of partition 0 of `topic` in a broker's data directory. */
function segment_of(data_dir: string, topic: string): string {
  const dir = path.join(data_dir, `${topic}-0`);
  const name = fs
    .readdirSync(dir)
    .filter((file) => file.endsWith('.log'))
    .sort()[0]!;
  return path.join(dir, name);
}

/** Where each record batch of a segment file begins (base offset int64, then its length int32). */
function batch_starts(segment: string): number[] {
  const bytes = fs.readFileSync(segment);
  const starts: number[] = [];
  for (let at = 0; at + 12 <= bytes.length; at += 12 + bytes.readInt32BE(at + 8)) starts.push(at);
  return starts;
}

/** A replicated topic with MESSAGES values, each batch of 20 acknowledged with acks=all. */
async function write_acknowledged(topic: string): Promise<string[]> {
  await create_replicated_topic(shared, topic);
  const producer = shared.cluster.kafka(`${topic}-producer`).producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const values = Array.from({ length: MESSAGES }, (_, i) => `v${i}`);
  for (let i = 0; i < MESSAGES; i += 20)
    await producer.send({ topic, acks: -1, messages: values.slice(i, i + 20).map((value) => ({ value })) });
  await producer.disconnect();
  return values;
}

test(
  'sole_isr_member_with_a_cut_log_does_not_lead: acknowledged writes survive its lost tail',
  { skip: missing ?? false, timeout: 180_000 },
  async () => {
    const { cluster, admin } = shared;
    const topic = 'cut-log';
    const values = await write_acknowledged(topic);

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
    const segment = segment_of(victim.data_dir, topic);
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

// A broker under a durability policy other than fsync acknowledges writes it has not flushed, so
// a crash of its machine can take the tail of a log with them, cut anywhere, even exactly at a
// batch boundary, where recovery finds the log whole. Back within its lease it would still be in
// the ISR, and could be elected while its leader is away, without those acknowledged records (as
// the fault suite's lost_writes showed in seeds 505 and 707). After an unclean shutdown such a
// broker's logs leave the ISR at start (KIP-966's unclean shutdown) and rejoin once caught up.
test(
  'tail_lost_at_a_batch_boundary_after_unclean_shutdown: that replica (durability interval) does not lead',
  { skip: missing ?? false, timeout: 180_000 },
  async () => {
    const { cluster, admin } = shared;
    const topic = 'boundary-cut';
    const values = await write_acknowledged(topic);
    const { leader, replicas } = await cluster.partition(admin, topic, 0);
    const [follower, other] = replicas.filter((id) => id !== leader) as [number, number];

    // The follower dies and loses its newer half, cut where a batch begins: recovery finds it whole.
    const victim = cluster.brokers.get(follower)!;
    await victim.kill();
    const segment = segment_of(victim.data_dir, topic);
    const starts = batch_starts(segment);
    fs.truncateSync(segment, starts[Math.floor(starts.length / 2)]!);
    // It comes back while the leader is stopped (so it cannot catch up) and the other is dead.
    cluster.brokers.get(leader)!.child.kill('SIGSTOP');
    try {
      await cluster.brokers.get(other)!.kill();
      process.env.SLUICE_DURABILITY = 'interval:50'; // what the restarted broker runs under
      try {
        await cluster.start(follower);
      } finally {
        delete process.env.SLUICE_DURABILITY;
      }
      await new Promise((resolve) => setTimeout(resolve, 6000)); // past the others' leases
      const meanwhile = await cluster.partition_at(follower, topic, 0);
      assert.notEqual(meanwhile.leader, follower, 'the replica that lost its tail leads');
      assert.ok(!meanwhile.isr.includes(follower), 'it left the ISR at start');
    } finally {
      cluster.brokers.get(leader)!.child.kill('SIGCONT');
    }
    await cluster.start(other);
    await cluster.wait_for('a leader and an ISR of 3', async () => {
      const state = await cluster.partition(admin, topic, 0);
      return state.leader >= 0 && state.isr.length === 3;
    });
    const read = await read_until(shared, topic, 'boundary-cut-check', (seen) => seen.length >= MESSAGES);
    assert.deepEqual(read.slice(0, MESSAGES), values, 'every acknowledged record, in order');
  },
);
