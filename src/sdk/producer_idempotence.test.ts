// The idempotent producer against an in-process broker: contiguous sequences from 0, a batch
// resent after a lost answer stored once, and a new epoch after a fatal sequence error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConnectionError, KafkaProtocolError } from './errors.ts';
import { TEST_TIMEOUT_MS, with_env, bounded, stored, records_of, error_response } from './producer_test_support.ts';

test(
  'idempotence: contiguous sequences from 0, and a batch resent after a lost answer is stored once',
  { timeout: TEST_TIMEOUT_MS },
  async () => {
    await with_env({ topics: { idem: 1 } }, async (env) => {
      const { producer, cluster } = env.producer({ lingerMs: 0, batchBytes: 300, maxInFlightRequests: 5 });
      // The third Produce reaches the broker and is written, but its answer is lost.
      cluster.hook = async (forward, _body, index) => {
        const answer = await forward();
        if (index === 2) throw new ConnectionError('simulated lost answer');
        return answer;
      };
      const sends = Array.from({ length: 60 }, (_, i) =>
        producer.send({ topic: 'idem', messages: [{ value: `m${i}` }] }),
      );
      const results = await bounded(Promise.all(sends), 20_000, 'idempotent sends');
      assert.deepEqual(
        results.map((r) => r[0]!.baseOffset),
        Array.from({ length: 60 }, (_, i) => String(i)),
        'each send got its own offset, in send order',
      );
      const batches = await stored(env.broker, 'idem');
      assert.deepEqual(
        records_of(batches).map((r) => r.value?.toString()),
        Array.from({ length: 60 }, (_, i) => `m${i}`),
        'no duplicate, no gap, in order',
      );
      assert.ok(batches.length > 3, 'several batches');
      assert.ok(
        cluster.produce_requests === batches.length + 1,
        `one resend (${cluster.produce_requests} requests for ${batches.length} batches)`,
      );
      let sequence = 0;
      for (const batch of batches) {
        assert.equal(batch.producer_id, batches[0]!.producer_id);
        assert.ok(batch.producer_id >= 0);
        assert.equal(batch.producer_epoch, 0);
        assert.equal(batch.base_sequence, sequence, 'sequences are contiguous');
        sequence += batch.count;
      }
    });
  },
);

test(
  'a fatal sequence error fails the send with KafkaProtocolError; the partition goes on in a new epoch',
  { timeout: TEST_TIMEOUT_MS },
  async () => {
    await with_env({ topics: { fatal: 1 } }, async (env) => {
      const { producer, cluster } = env.producer({ lingerMs: 0 });
      cluster.hook = async (forward, body, index) => (index === 1 ? error_response(body, 45) : forward());
      await producer.send({ topic: 'fatal', messages: [{ value: 'first' }] });
      await assert.rejects(
        producer.send({ topic: 'fatal', messages: [{ value: 'refused' }] }),
        (error: unknown) => error instanceof KafkaProtocolError && error.type === 'OUT_OF_ORDER_SEQUENCE_NUMBER',
      );
      await producer.send({ topic: 'fatal', messages: [{ value: 'after' }] });
      const batches = await stored(env.broker, 'fatal');
      assert.deepEqual(
        batches.map((b) => [b.records[0]!.value?.toString(), b.producer_epoch, b.base_sequence]),
        [
          ['first', 0, 0],
          ['after', 1, 0],
        ],
      );
    });
  },
);
