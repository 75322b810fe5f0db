// A broker that cannot be sure it still holds its role acknowledges nothing: a leader cut off and
// paused past its lease, leaders while etcd is away (nor a retry it held when its lease ran
// out), a second broker claiming a registered node id. Real etcd and broker processes; Produce
// requests go straight to one broker.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { start_broker_process } from '../support/broker_process.ts';
import { partition_bytes } from '../support/cluster.ts';
import { Connection } from '../../src/protocol/kafka/client_connection.ts';
import { ErrorCode } from '../../src/protocol/kafka/error_codes.ts';
import { INIT_PRODUCER_ID } from '../../src/protocol/kafka/messages/22_init_producer_id.ts';
import { PRODUCE } from '../../src/protocol/kafka/messages/00_produce.ts';
import { encode_record_batch } from '../../src/protocol/record_batch.ts';
import { create_replicated_topic, missing, produce_to, send_produce, shared_cluster } from './cluster_support.ts';

const shared = shared_cluster();

/**
 * Deposes `old_leader` by cutting it off and pausing it; the new leader continues the acknowledged
 * log, and a write the old leader reads on waking is refused with a retriable error.
 */
async function depose_paused_leader(topic: string, old_leader: number, follower: number, acknowledged_end: number) {
  const { cluster } = shared;
  const old_port = cluster.direct_ports.get(old_leader)!;
  // Cut off from its followers, the leader takes an acks=1 write they never see; then it is paused
  // past its lease, which cuts it off from etcd too.
  cluster.proxies.get(old_leader)!.cut();
  assert.equal((await produce_to(old_port, topic, ['only-on-old-leader'], 1)).error_code, 0);
  const stale = await Connection.connect('127.0.0.1', old_port);
  cluster.brokers.get(old_leader)!.child.kill('SIGSTOP');
  try {
    await cluster.wait_for(
      'a new leader',
      async () => {
        const { leader } = await cluster.partition_at(follower, topic, 0);
        return leader !== old_leader && leader >= 0;
      },
      20_000,
    );
    const new_leader = (await cluster.partition_at(follower, topic, 0)).leader;
    // The follower may name the new leader a moment before it has taken the role; until then it
    // refuses writes as NOT_LEADER_OR_FOLLOWER, and a client retries.
    let written = { error_code: -1, base_offset: -1 };
    await cluster.wait_for('the new leader taking writes', async () => {
      written = await produce_to(cluster.direct_ports.get(new_leader)!, topic, ['b0', 'b1', 'b2'], -1);
      return written.error_code !== ErrorCode.NOT_LEADER_OR_FOLLOWER;
    });
    assert.equal(written.error_code, 0);
    assert.equal(written.base_offset, acknowledged_end, 'the new leader writes where the acknowledged log ends');
    // Sent while the old leader is paused; it reads this only after it resumes.
    const late = send_produce(stale, topic, ['to-the-deposed-leader'], -1);
    cluster.proxies.get(old_leader)!.heal();
    cluster.brokers.get(old_leader)!.child.kill('SIGCONT');
    const answer = await late;
    assert.notEqual(answer.error_code, 0, 'the deposed leader acknowledged a write');
    const retriable: number[] = [
      ErrorCode.NOT_LEADER_OR_FOLLOWER,
      ErrorCode.NOT_ENOUGH_REPLICAS,
      ErrorCode.REQUEST_TIMED_OUT,
    ];
    assert.ok(retriable.includes(answer.error_code), `error ${answer.error_code}`);
  } finally {
    stale.close();
    cluster.proxies.get(old_leader)!.heal();
    cluster.brokers.get(old_leader)!.child.kill('SIGCONT');
  }
}

test(
  'a leader cut off from its followers and paused past its lease acknowledges nothing, then truncates on return',
  { skip: missing ?? false, timeout: 120_000 },
  async () => {
    const { cluster, admin } = shared;
    const topic = 'paused';
    await create_replicated_topic(shared, topic);
    const old_leader = (await cluster.partition(admin, topic, 0)).leader;
    let acknowledged_end = -1;
    await cluster.wait_for('the leader taking writes', async () => {
      const first = await produce_to(cluster.direct_ports.get(old_leader)!, topic, ['a0', 'a1'], -1);
      acknowledged_end = first.base_offset + 2;
      return first.error_code === 0;
    });
    const follower = [...cluster.brokers.keys()].find((id) => id !== old_leader)!;
    await depose_paused_leader(topic, old_leader, follower, acknowledged_end);
    await cluster.wait_for(
      'the old leader back in the ISR',
      async () => (await cluster.partition_at(follower, topic, 0)).isr.length === 3,
      30_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const logs = [...cluster.brokers.entries()].map(([id, b]) => ({
      id,
      bytes: partition_bytes(b.data_dir, `${topic}-0`),
    }));
    const reference = logs.find((l) => l.id !== old_leader)!.bytes;
    for (const { id, bytes } of logs)
      assert.ok(bytes.equals(reference), `broker ${id}'s log differs (${bytes.length} vs ${reference.length} bytes)`);
    assert.ok(
      !reference.includes(Buffer.from('only-on-old-leader')),
      'the unreplicated acks=1 write was truncated away',
    );
    assert.ok(reference.includes(Buffer.from('b2')));
  },
);

test(
  'etcd lost: leaders keep serving until their lease runs out, then refuse writes with a retriable error',
  { skip: missing ?? false, timeout: 120_000 },
  async () => {
    const { cluster, admin } = shared;
    const topic = 'etcd-loss';
    await create_replicated_topic(shared, topic);
    const leader_port = cluster.direct_ports.get((await cluster.partition(admin, topic, 0)).leader)!;
    cluster.etcd.pause();
    try {
      assert.equal(
        (await produce_to(leader_port, topic, ['while-etcd-is-away'], -1)).error_code,
        0,
        'served within the lease',
      );
      await new Promise((resolve) => setTimeout(resolve, 3000)); // past the 2 s lease
      const refused = await produce_to(leader_port, topic, ['after-the-lease'], -1);
      assert.equal(refused.error_code, ErrorCode.NOT_LEADER_OR_FOLLOWER, 'a retriable refusal');
    } finally {
      cluster.etcd.resume();
    }
    await cluster.wait_for(
      'writes again',
      async () =>
        (
          await produce_to(
            cluster.direct_ports.get((await cluster.partition(admin, topic, 0)).leader)!,
            topic,
            ['back'],
            -1,
          )
        ).error_code === 0,
      30_000,
    );
  },
);

test(
  'a second broker with a registered node id refuses to start, naming the id',
  { skip: missing ?? false, timeout: 60_000 },
  async () => {
    const { cluster } = shared;
    const started = start_broker_process({
      args: ['--etcd', cluster.etcd.endpoint, '--node-id', '1', '--config', cluster.config_file],
    });
    await assert.rejects(
      started.then(async (impostor) => {
        await impostor.stop();
        throw new Error('a second broker 1 started');
      }),
      /broker id 1 is already registered in the cluster by 127\.0\.0\.1:\d+/,
    );
  },
);

// Regression, found by the fault suite (seed 707): a leader cut off from etcd and its followers
// held three idempotent batches waiting for the ISR; the producers sent them again, and the
// retries waited for the originals. When the leader's lease ran out it stepped down, the
// originals failed, and the retries were answered as acknowledged duplicates, because with the
// leadership gone no acknowledgement gate was left to wait on. The new leader lacked them. Now a
// duplicate is acknowledged only under the gate, or below the high watermark.
test(
  'duplicate_acknowledged_after_its_leader_stepped_down: the retry is refused like the original',
  { skip: missing ?? false, timeout: 120_000 },
  async () => {
    const { cluster, admin } = shared;
    const topic = 'dup-step-down';
    await create_replicated_topic(shared, topic);
    const { leader, replicas } = await cluster.partition(admin, topic, 0);
    const followers = replicas.filter((id) => id !== leader);
    const port = cluster.direct_ports.get(leader)!;
    const connect = () => Connection.connect('127.0.0.1', port, { request_timeout_ms: 60_000 });
    const [first, second] = await Promise.all([connect(), connect()]);
    try {
      const { producer_id, producer_epoch } = await first.call(INIT_PRODUCER_ID, 3, {
        transactional_id: null,
        transaction_timeout_ms: 60_000,
        producer_id: -1,
        producer_epoch: -1,
      });
      const batch = () =>
        encode_record_batch([{ key: null, value: Buffer.from('held'), timestamp_ms: Date.now() }], {
          producer_id: Number(producer_id),
          producer_epoch,
          base_sequence: 0,
        });
      const produce = (connection: Connection) =>
        connection
          .call(PRODUCE, 9, {
            transactional_id: null,
            acks: -1,
            timeout_ms: 60_000,
            topic_data: [{ name: topic, partition_data: [{ index: 0, records: batch() }] }],
          })
          .then((response) => response.responses[0]!.partition_responses[0]!.error_code);
      // Nothing can confirm the batch, and nothing can move the leadership: the leader's lease runs out.
      for (const id of followers) cluster.brokers.get(id)!.child.kill('SIGSTOP');
      cluster.etcd.pause();
      try {
        const original = produce(first);
        await new Promise((resolve) => setTimeout(resolve, 300));
        const retry = produce(second); // the same producer id, epoch and sequence: a duplicate
        const [original_code, retry_code] = await Promise.all([original, retry]);
        assert.notEqual(original_code, ErrorCode.NONE, 'the original is not acknowledged');
        assert.equal(retry_code, ErrorCode.NOT_LEADER_OR_FOLLOWER, 'nor is its retry');
      } finally {
        cluster.etcd.resume();
        for (const id of followers) cluster.brokers.get(id)!.child.kill('SIGCONT');
      }
    } finally {
      first.close();
      second.close();
    }
  },
);
