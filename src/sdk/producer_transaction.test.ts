// The SDK's transactions against an in-process broker: commit and abort as read_committed and
// read_uncommitted consumers see them, fencing by a newer producer of the same id, a failed send
// making the transaction abort-only (and the producer writing again after the abort), and
// consume-transform-produce with runInTransactions; under transaction version 2 (KIP-890, what
// the broker offers by default) and, where the two differ, under version 1.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Harness, FAST, until } from './consumer_test_support.ts';
import { Producer, type ProducerConfig } from './producer.ts';
import type { Consumer, ConsumerConfig } from './consumer.ts';
import { KafkaProtocolError, SluiceError } from './errors.ts';
import { ErrorCode } from '../protocol/kafka/error_codes.ts';
import type { Cluster } from './cluster.ts';

const TIMEOUT_MS = 60_000;

async function with_harness(
  name: string,
  topics: Record<string, number>,
  work: (h: Harness) => Promise<void>,
  transaction_version = 2,
) {
  const harness = await Harness.start(name, transaction_version);
  try {
    for (const [topic, partitions] of Object.entries(topics))
      await harness.broker.broker.topics.create(topic, partitions);
    await work(harness);
  } finally {
    await harness.close();
  }
}

function producer(harness: Harness, config: ProducerConfig, cluster: Cluster = harness.cluster()): Producer {
  const made = new Producer(cluster, config);
  harness.on_close(() => made.disconnect().catch(() => undefined));
  return made;
}

/** Every value a consumer of `topic` reads from its start, once it has read `count` of them. */
async function read_all(harness: Harness, topic: string, config: ConsumerConfig, count: number): Promise<string[]> {
  const consumer = harness.consumer({ ...FAST, groupId: `reader-${Math.random()}`, ...config });
  const values: string[] = [];
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({ eachMessage: async ({ message }) => void values.push(message.value!.toString()) });
  await until(() => values.length >= count, `${count} records of ${topic}`);
  await new Promise((resolve) => setTimeout(resolve, 300)); // nothing more arrives
  await consumer.stop();
  return values.sort();
}

for (const version of [2, 1]) {
  test(
    `a transaction over three partitions commits or aborts as a whole (transaction version ${version})`,
    { timeout: TIMEOUT_MS },
    async () => {
      await with_harness(
        `txn-commit-${version}`,
        { out: 3 },
        async (harness) => {
          const sender = producer(harness, { transactionalId: 'copier' });
          await sender.connect();
          const committed = await sender.transaction();
          const messages = (tag: string) => [0, 1, 2].map((partition) => ({ value: `${tag}${partition}`, partition }));
          await committed.send({ topic: 'out', messages: messages('c') });
          await committed.commit();
          assert.equal(committed.isActive(), false);
          const aborted = await sender.transaction();
          await aborted.send({ topic: 'out', messages: messages('a') });
          await aborted.abort();
          const last = await sender.transaction();
          await last.sendBatch({ topicMessages: [{ topic: 'out', messages: messages('d') }] });
          await last.commit();
          assert.deepEqual(await read_all(harness, 'out', {}, 6), ['c0', 'c1', 'c2', 'd0', 'd1', 'd2']);
          const all = await read_all(harness, 'out', { isolationLevel: 'read_uncommitted' }, 9);
          assert.deepEqual(all, ['a0', 'a1', 'a2', 'c0', 'c1', 'c2', 'd0', 'd1', 'd2']);
          await assert.rejects(() => committed.commit(), /has ended/);
          const epoch = harness.broker.broker.transactions.describe('copier')!.producer_epoch;
          assert.equal(epoch, version === 2 ? 3 : 0, 'under version 2 each of the three ends took the next epoch');
        },
        version,
      );
    },
  );
}

test('sends outside a transaction, and transactions without a transactionalId, are refused', async () => {
  await with_harness('txn-misuse', { out: 1 }, async (harness) => {
    const transactional = producer(harness, { transactionalId: 'misuse' });
    await assert.rejects(
      () => transactional.send({ topic: 'out', messages: [{ value: 'x' }] }),
      /inside a transaction/,
    );
    const open = await transactional.transaction();
    await assert.rejects(() => transactional.transaction(), /already open/);
    await open.abort(); // nothing was added: no request, and the producer is ready again
    await (await transactional.transaction()).abort();
    const plain = producer(harness, {});
    await assert.rejects(() => plain.transaction(), /transactionalId/);
    assert.throws(() => new Producer(harness.cluster(), { transactionalId: 'x', idempotent: false }), SluiceError);
    assert.throws(() => harness.consumer({ isolationLevel: 'serializable' as never }), /isolationLevel/);
  });
});

test('a newer producer of the same transactional id fences the older one', { timeout: TIMEOUT_MS }, async () => {
  await with_harness('txn-fence', { out: 2 }, async (harness) => {
    const zombie = producer(harness, { transactionalId: 'fenced', retry: { retries: 1 } });
    const open = await zombie.transaction();
    await open.send({ topic: 'out', messages: [{ value: 'zombie', partition: 0 }] });
    const successor = producer(harness, { transactionalId: 'fenced' });
    await successor.connect(); // aborts the zombie's transaction under a new epoch
    await assert.rejects(
      () => open.commit(),
      (error: unknown) =>
        error instanceof KafkaProtocolError &&
        (error.code === ErrorCode.PRODUCER_FENCED || error.code === ErrorCode.INVALID_PRODUCER_EPOCH),
    );
    await assert.rejects(() => zombie.transaction(), /taken over by a newer producer/);
    const txn = await successor.transaction();
    await txn.send({ topic: 'out', messages: [{ value: 'successor', partition: 1 }] });
    await txn.commit();
    assert.deepEqual(await read_all(harness, 'out', {}, 1), ['successor']);
  });
});

for (const version of [2, 1]) {
  test(
    `a failed send makes the transaction abort-only; after the abort the producer writes again (version ${version})`,
    { timeout: TIMEOUT_MS },
    async () => {
      await with_harness(
        `txn-failed-send-${version}`,
        { out: 1 },
        async (harness) => {
          const cluster = harness.cluster();
          const sender = producer(harness, { transactionalId: 'flaky', retry: { retries: 0 } }, cluster);
          const first = await sender.transaction();
          await first.send({ topic: 'out', messages: [{ value: 'kept-out' }] });
          // The next Produce is refused for good: its sequence numbers become a gap.
          await cluster.refresh_metadata([]);
          const connection = await cluster.node([...cluster.brokers.keys()][0]!);
          const send = connection.send.bind(connection);
          let refuse = true;
          connection.send = ((api, min, max, body) => {
            if (api.api_key === 0 && refuse) {
              refuse = false;
              return Promise.reject(new KafkaProtocolError(ErrorCode.INVALID_RECORD, 'injected'));
            }
            return send(api, min, max, body);
          }) as typeof connection.send;
          await assert.rejects(() => first.send({ topic: 'out', messages: [{ value: 'refused' }] }), /injected/);
          await assert.rejects(() => first.commit(), /cannot commit/);
          await first.abort();
          const second = await sender.transaction();
          await second.send({ topic: 'out', messages: [{ value: 'after' }] });
          await second.commit();
          assert.deepEqual(await read_all(harness, 'out', {}, 1), ['after']);
        },
        version,
      );
    },
  );
}

for (const version of [2, 1]) {
  test(
    `runInTransactions copies every input record exactly once across a restart (transaction version ${version})`,
    { timeout: TIMEOUT_MS },
    async () => {
      await with_harness(
        `txn-ctp-${version}`,
        { input: 3, output: 3 },
        async (harness) => {
          const feeder = producer(harness, {});
          const inputs = Array.from({ length: 300 }, (_, i) => `v${String(i).padStart(3, '0')}`);
          await feeder.send({ topic: 'input', messages: inputs.slice(0, 150).map((value) => ({ value })) });
          const copier = async (fail_after: number | null): Promise<{ consumer: Consumer; copied: () => number }> => {
            const consumer = harness.consumer({ ...FAST, groupId: 'copiers' });
            const out = producer(harness, { transactionalId: 'copier-1' });
            let copied = 0;
            await consumer.subscribe({ topic: 'input', fromBeginning: true });
            await consumer.runInTransactions({
              producer: out,
              eachBatch: async ({ batch, transaction }) => {
                const messages = batch.messages.map((m) => ({ value: m.value, partition: batch.partition }));
                await transaction.send({ topic: 'output', messages });
                if (fail_after !== null && copied + messages.length > fail_after) throw new Error('injected failure');
                copied += messages.length;
              },
            });
            return { consumer, copied: () => copied };
          };
          const first = await copier(100);
          await until(() => first.copied() > 0, 'the first copier to commit');
          await first.consumer.stop();
          await feeder.send({ topic: 'input', messages: inputs.slice(150).map((value) => ({ value })) });
          const second = await copier(null);
          const output = await read_all(harness, 'output', {}, inputs.length);
          assert.deepEqual(output, inputs, 'each input once in the committed output');
          await second.consumer.stop();
          const metadata = second.consumer.groupMetadata();
          assert.equal(metadata.groupId, 'copiers');
        },
        version,
      );
    },
  );
}

test(
  'a delayed message in a transaction is delivered when due if it commits, never if it aborts',
  { timeout: TIMEOUT_MS },
  async () => {
    await with_harness('txn-delayed', { out: 1 }, async (harness) => {
      const sender = producer(harness, { transactionalId: 'delayer' });
      const aborted = await sender.transaction();
      await aborted.send({ topic: 'out', messages: [{ value: 'dropped', delayMs: 0 }] });
      await aborted.abort();
      const committed = await sender.transaction();
      const sent_at = Date.now();
      await committed.send({ topic: 'out', messages: [{ value: 'plain' }, { value: 'later', delayMs: 500 }] });
      await committed.commit();
      // The batch holding a delayed record is delayed as a whole: both arrive when it is due.
      assert.deepEqual(await read_all(harness, 'out', {}, 2), ['later', 'plain']);
      assert.ok(Date.now() - sent_at >= 500, 'not before it is due');
      assert.deepEqual(await read_all(harness, 'out', { isolationLevel: 'read_uncommitted' }, 2), ['later', 'plain']);
    });
  },
);
