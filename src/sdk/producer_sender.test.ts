// The producer's requests against an in-process broker: in-flight batches resent in order on a new
// connection after a drop, and leader errors that refresh metadata and retry until retries run out.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { KafkaProtocolError } from './errors.ts';
import { TEST_TIMEOUT_MS, with_env, bounded, stored, records_of, error_response } from './producer_test_support.ts';

test(
  'a dropped connection: in-flight batches are resent in order on a new one and stored once',
  { timeout: TEST_TIMEOUT_MS },
  async () => {
    await with_env({ topics: { dropped: 2 } }, async (env) => {
      const { producer, cluster } = env.producer({ lingerMs: 0, batchBytes: 400 });
      await producer.connect();
      cluster.hook = async (forward, _body, index) => {
        const answer = forward();
        if (index === 4) (await cluster.node(1)).connection.close(); // after the fifth request is written
        return answer;
      };
      const sends = Array.from({ length: 200 }, (_, i) =>
        producer.send({ topic: 'dropped', messages: [{ value: `d${i}`, partition: i % 2 }] }),
      );
      await bounded(Promise.all(sends), 20_000, 'sends across a dropped connection');
      const batch_count =
        (await stored(env.broker, 'dropped', 0)).length + (await stored(env.broker, 'dropped', 1)).length;
      assert.ok(
        cluster.produce_batches > batch_count,
        `batches cut off by the drop were resent (${cluster.produce_batches} sent, ${batch_count} stored)`,
      );
      for (const partition of [0, 1]) {
        const batches = await stored(env.broker, 'dropped', partition);
        const expected = Array.from({ length: 100 }, (_, i) => `d${i * 2 + partition}`);
        assert.deepEqual(
          records_of(batches).map((r) => r.value?.toString()),
          expected,
          `partition ${partition}: every message once, in order`,
        );
        let sequence = 0;
        for (const batch of batches) {
          assert.equal(batch.base_sequence, sequence);
          sequence += batch.count;
        }
      }

      // Without idempotence batches carry no producer id.
      const plain = env.producer({ idempotent: false, acks: 1, lingerMs: 0 });
      const [meta] = await plain.producer.send({ topic: 'dropped', messages: [{ value: 'plain', partition: 0 }] });
      assert.equal(meta!.baseOffset, '100');
      const last = (await stored(env.broker, 'dropped', 0)).at(-1)!;
      assert.deepEqual([last.producer_id, last.producer_epoch, last.base_sequence], [-1, -1, -1]);
    });
  },
);

test(
  'leader errors refresh metadata and retry; when retries run out the send fails with the error',
  { timeout: TEST_TIMEOUT_MS },
  async () => {
    await with_env({ topics: { moving: 2 } }, async (env) => {
      const { producer, cluster } = env.producer({ lingerMs: 0, retry: { retries: 3, initialRetryTime: 20 } });
      await producer.connect();
      cluster.hook = async (forward, body, index) =>
        index < 2 ? error_response(body, 6 /* NOT_LEADER_OR_FOLLOWER */) : forward();
      const refreshes = cluster.metadata_refreshes;
      const [meta] = await bounded(
        producer.send({ topic: 'moving', messages: [{ value: 'eventually', partition: 1 }] }),
        10_000,
        'send',
      );
      assert.equal(meta!.partition, 1);
      assert.equal(cluster.produce_requests, 3);
      assert.ok(cluster.metadata_refreshes - refreshes >= 2, 'metadata was fetched again before each retry');
      assert.deepEqual(
        records_of(await stored(env.broker, 'moving', 1)).map((r) => r.value?.toString()),
        ['eventually'],
      );

      const failing = env.producer({
        lingerMs: 0,
        idempotent: false,
        acks: 1,
        retry: { retries: 2, initialRetryTime: 10 },
      });
      failing.cluster.hook = async (_forward, body) => error_response(body, 6);
      await assert.rejects(
        bounded(failing.producer.send({ topic: 'moving', messages: [{ value: 'never' }] }), 10_000, 'send'),
        (error: unknown) => error instanceof KafkaProtocolError && error.type === 'NOT_LEADER_OR_FOLLOWER',
      );
      assert.equal(failing.cluster.produce_requests, 3, 'the first attempt and two retries');
    });
  },
);
