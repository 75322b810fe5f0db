// The producer's batching against an in-process broker: a full buffer (wait, or BufferFullError),
// lingering batches of many small concurrent sends into few requests, batchBytes bounding a batch,
// and without lingerMs a large send going at once while the partition is idle.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BufferFullError, SluiceError } from './errors.ts';
import { TEST_TIMEOUT_MS, with_env, bounded, pending_after, stored, records_of } from './producer_test_support.ts';

test(
  'a full buffer makes send wait, or with bufferFull "error" reject with BufferFullError',
  { timeout: TEST_TIMEOUT_MS },
  async () => {
    await with_env({ topics: { buffered: 1 } }, async (env) => {
      for (const mode of ['wait', 'error'] as const) {
        let open!: () => void;
        const gate = new Promise<void>((resolve) => (open = resolve));
        const { producer, cluster } = env.producer({ lingerMs: 0, bufferBytes: 3000, bufferFull: mode });
        cluster.hook = async (forward) => {
          await gate;
          return forward();
        };
        const a = producer.send({ topic: 'buffered', messages: [{ value: 'a'.repeat(1500) }] });
        const b = producer.send({ topic: 'buffered', messages: [{ value: 'b'.repeat(1000) }] });
        const c = producer.send({ topic: 'buffered', messages: [{ value: 'c'.repeat(1000) }] });
        if (mode === 'wait') {
          assert.ok(await pending_after(c, 200), 'the send waits while the buffer is full');
          open();
          const results = await bounded(Promise.all([a, b, c]), 10_000, 'sends after the buffer drained');
          assert.deepEqual(
            results.map((r) => r[0]!.baseOffset),
            ['0', '1', '2'],
          );
        } else {
          await assert.rejects(bounded(c, 2000, 'rejection'), (error: unknown) => error instanceof BufferFullError);
          open();
          await bounded(Promise.all([a, b]), 10_000, 'sends that fit');
        }
        await assert.rejects(
          producer.send({ topic: 'buffered', messages: [{ value: 'x'.repeat(5000) }] }),
          (error: unknown) => error instanceof SluiceError && /cannot fit/.test(error.message),
        );
        await producer.disconnect();
      }
      assert.deepEqual(
        records_of(await stored(env.broker, 'buffered')).map((r) => r.value![0]),
        [...'abcab'].map((ch) => ch.charCodeAt(0)),
      );
    });
  },
);

test(
  'lingering batches many small concurrent sends into few requests; batchBytes bounds a batch',
  { timeout: TEST_TIMEOUT_MS },
  async () => {
    await with_env({ topics: { linger: 1, sized: 1 } }, async (env) => {
      const { producer, cluster } = env.producer({ lingerMs: 20 });
      await producer.connect();
      const results = await bounded(
        Promise.all(
          Array.from({ length: 200 }, (_, i) =>
            producer.send({ topic: 'linger', messages: [{ value: `small ${i}` }] }),
          ),
        ),
        10_000,
        'sends',
      );
      assert.deepEqual(
        results.map((r) => Number(r[0]!.baseOffset)),
        Array.from({ length: 200 }, (_, i) => i),
      );
      assert.ok(cluster.produce_requests <= 2, `200 sends took ${cluster.produce_requests} Produce requests`);
      assert.ok((await stored(env.broker, 'linger')).length <= 2);

      const sized = env.producer({ lingerMs: 50, batchBytes: 2000 });
      const messages = Array.from({ length: 100 }, (_, i) => ({ value: `${i}`.padStart(100, '.') }));
      await bounded(
        Promise.all(messages.map((message) => sized.producer.send({ topic: 'sized', messages: [message] }))),
        10_000,
        'sends',
      );
      const batches = await stored(env.broker, 'sized');
      assert.equal(records_of(batches).length, 100);
      assert.ok(batches.length >= 8, `${batches.length} batches of at most 2000 bytes`);
      for (const batch of batches) assert.ok(batch.bytes <= 2000, `a batch of ${batch.bytes} bytes`);
    });
  },
);

test(
  'without lingerMs, a large send goes at once while nothing is in flight, the sends after it together',
  { timeout: TEST_TIMEOUT_MS },
  async () => {
    await with_env({ topics: { pipelined: 1, small: 1 } }, async (env) => {
      const { producer, cluster } = env.producer({ lingerMs: 0, maxInFlightRequests: 5 });
      await producer.connect();
      // Four sends of about 20 KB each, made in one turn of the event loop: had they gone as one
      // request, the producer would admit the next sends only once the broker answered all four.
      // The first goes as it is admitted, the other three together in the next request.
      const value = 'v'.repeat(100);
      const sends = Array.from({ length: 4 }, (_, s) =>
        producer.send({ topic: 'pipelined', messages: Array.from({ length: 200 }, () => ({ value, key: `${s}` })) }),
      );
      const results = await bounded(Promise.all(sends), 10_000, 'large sends');
      assert.deepEqual(
        results.map((r) => r[0]!.baseOffset),
        ['0', '200', '400', '600'],
      );
      assert.equal(cluster.produce_requests, 2, 'the first large send alone, the others together');
      assert.deepEqual(
        (await stored(env.broker, 'pipelined')).map((batch) => batch.count),
        [200, 600],
      );

      // 300 one-message sends in one turn: too small to go alone, they go together.
      const before = cluster.produce_requests;
      const small = await bounded(
        Promise.all(
          Array.from({ length: 300 }, (_, i) => producer.send({ topic: 'small', messages: [{ value: `${i}` }] })),
        ),
        10_000,
        'small sends',
      );
      assert.deepEqual(
        small.map((r) => Number(r[0]!.baseOffset)),
        Array.from({ length: 300 }, (_, i) => i),
      );
      const requests = cluster.produce_requests - before;
      assert.ok(requests <= 2, `300 small sends took ${requests} Produce requests`);
      await producer.disconnect();
    });
  },
);
