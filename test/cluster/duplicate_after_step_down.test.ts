// Regression, found by the fault suite (seed 707): a leader cut off from etcd and its followers
// held three idempotent batches waiting for the ISR; the producers sent them again, and the
// retries waited for the originals. When the leader's lease ran out it stepped down, the
// originals failed, and the retries were answered as acknowledged duplicates, because with the
// leadership gone no acknowledgement gate was left to wait on. The new leader lacked them. Now a
// duplicate is acknowledged only under the gate, or below the high watermark.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Connection } from '../../src/protocol/kafka/client_connection.ts';
import { INIT_PRODUCER_ID } from '../../src/protocol/kafka/messages/22_init_producer_id.ts';
import { PRODUCE } from '../../src/protocol/kafka/messages/00_produce.ts';
import { ErrorCode } from '../../src/protocol/kafka/error_codes.ts';
import { encode_record_batch } from '../../src/protocol/record_batch.ts';
import { create_replicated_topic, missing, shared_cluster } from './cluster_support.ts';

const shared = shared_cluster();

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
