// Transactional messages with check-back against a broker process: a half message is invisible
// until committed and gone when rolled back; one whose producer died is settled by the answer of
// another producer of its group when that one connects; one nobody answers lands in the
// unresolved topic after the last check, and read_committed consumers never see it. The broker
// is killed (SIGKILL) and restarted while the dead producer's half messages wait.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { start_broker_process, type BrokerProcess } from '../support/broker_process.ts';
import { half_messages_of_a_dead_producer } from '../support/dead_half_producer.ts';
import { Sluice, type Consumer, type HalfMessageCheck } from '../../src/sdk/index.ts';
import { TXN_CHECKS_TOPIC, TXN_UNRESOLVED_TOPIC } from '../../src/protocol/half_messages.ts';

const WAIT_MS = 30_000;
const BROKER_ARGS = ['--transaction-checks-max', '2'];

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** A consumer without a group reading `topic` from its start into `seen` (values, and headers). */
async function follow(sluice: Sluice, topic: string, seen: Array<{ value: string; headers: Record<string, string> }>) {
  const consumer: Consumer = sluice.consumer({ maxWaitTimeInMs: 50 });
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => {
      const headers: Record<string, string> = {};
      for (const [key, value] of Object.entries(message.headers ?? {})) headers[key] = String(value);
      seen.push({ value: message.value!.toString(), headers });
    },
  });
  return consumer;
}

type Seen = Array<{ value: string; headers: Record<string, string> }>;

/** Half messages committed and rolled back by the producer that wrote them. */
async function settled_by_their_producer(sluice: Sluice, orders: Seen, closers: Array<() => Promise<unknown>>) {
  const own = sluice.producer({ transactionGroup: 'shop', halfTimeout: 60_000 });
  closers.push(() => own.disconnect());
  const kept = await own.sendHalf({ topic: 'orders', message: { value: 'kept' } });
  const dropped = await own.sendHalf({ topic: 'orders', message: { value: 'dropped' } });
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal(orders.length, 0, 'nothing is visible before commit');
  await kept.commit();
  await dropped.rollback();
  await until(() => orders.length === 1, 'the committed half message');
  await assert.rejects(() => kept.commit(), /already settled/);
}

/** What a test gets: its broker process (a restart replaces it), the SDK on it, what to close. */
interface Env {
  broker: BrokerProcess;
  sluice: Sluice;
  closers: Array<() => Promise<unknown>>;
}

/** Runs `work` on a broker process with the topic `orders`; closes and removes everything after. */
async function with_orders_broker(client_id: string, args: string[], work: (env: Env) => Promise<void>) {
  const broker = await start_broker_process({ args });
  const env: Env = { broker, sluice: new Sluice({ brokers: [broker.bootstrap], clientId: client_id }), closers: [] };
  try {
    const admin = env.sluice.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'orders', numPartitions: 1 }] });
    await admin.disconnect();
    await work(env);
  } finally {
    for (const close of env.closers.reverse()) await close().catch(() => undefined);
    await env.broker.stop();
    fs.rmSync(env.broker.data_dir, { recursive: true, force: true });
  }
}

test(
  'check-back: half messages settled by their producer, by another producer of the group, or unresolved',
  { timeout: 120_000 },
  async () => {
    await with_orders_broker('check-back-test', BROKER_ARGS, async (env) => {
      const { sluice, closers } = env;
      const orders: Seen = [];
      const reader = await follow(sluice, 'orders', orders);
      closers.push(() => reader.disconnect());

      await settled_by_their_producer(sluice, orders, closers);

      await half_messages_of_a_dead_producer(env.broker.bootstrap, 'orders', 'shop', 1000, [
        'commit-me',
        'rollback-me',
        'ask-later',
      ]);
      // The half messages and their checks outlive a crash of the broker.
      await env.broker.kill();
      const { data_dir, port } = env.broker;
      env.broker = await start_broker_process({ data_dir, port, args: BROKER_ARGS });

      // Another producer of the group answers the broker's checks once it connects.
      const checks: HalfMessageCheck[] = [];
      const answering = sluice.producer({
        transactionGroup: 'shop',
        checkTransaction: (message) => {
          checks.push(message);
          const value = message.value?.toString();
          return value === 'commit-me' ? 'commit' : value === 'rollback-me' ? 'rollback' : 'unknown';
        },
      });
      closers.push(() => answering.disconnect());
      await answering.connect();
      await until(() => orders.some((o) => o.value === 'commit-me'), 'the half message committed by the check');
      const unresolved: Seen = [];
      const unresolved_reader = await follow(sluice, TXN_UNRESOLVED_TOPIC, unresolved);
      closers.push(() => unresolved_reader.disconnect());
      await until(() => unresolved.length > 0, 'the unanswered half message in the unresolved topic');
      assert.equal(unresolved[0]!.value, 'ask-later');
      assert.equal(unresolved[0]!.headers['sluice-txn-topic'], 'orders');
      assert.equal(unresolved[0]!.headers['sluice-txn-group'], 'shop');
      await new Promise((resolve) => setTimeout(resolve, 500));
      assert.deepEqual(
        orders.map((o) => o.value).sort(),
        ['commit-me', 'kept'],
        'read_committed readers see only the committed half messages',
      );
      const asked = checks.filter((c) => c.value?.toString() === 'ask-later');
      assert.ok(asked.length >= 2, `the unanswered one was asked ${asked.length} times`);
      assert.equal(asked.at(-1)!.checksMax, 2);
      assert.equal(checks.find((c) => c.value?.toString() === 'commit-me')?.topic, 'orders');
    });
  },
);

// Regression, found by the fault suite (seed 4343): a producer carries its half messages one after
// another under one transactional id; a check of the first, answered late by another producer of
// the group, ended the second (EndTxn names the id and epoch, not the transaction). Each half
// message now ends with its carrier taking a new epoch, so the late answer is refused.
test('late_check_answer_ended_the_next_half_message', { timeout: 60_000 }, async () => {
  await with_orders_broker('late-answer-test', [], async ({ sluice, closers }) => {
    const checks: Seen = [];
    const check_reader = await follow(sluice, TXN_CHECKS_TOPIC, checks);
    closers.push(() => check_reader.disconnect());
    const writer = sluice.producer({ transactionGroup: 'late', halfTimeout: 1000, maxOpenHalfMessages: 1 });
    closers.push(() => writer.disconnect());
    const first = await writer.sendHalf({ topic: 'orders', message: { value: 'first' } });
    await until(() => checks.some((c) => c.value === 'first'), 'a check of the first half message');
    await first.rollback();
    const second = await writer.sendHalf({ topic: 'orders', message: { value: 'second' } });
    let answered = false;
    const late = sluice.producer({
      transactionGroup: 'late',
      checkTransaction: (message) => {
        if (message.value?.toString() !== 'first') return 'unknown';
        answered = true;
        return 'rollback';
      },
    });
    closers.push(() => late.disconnect());
    await late.connect();
    await until(() => answered, 'the late answer to the first check');
    await new Promise((resolve) => setTimeout(resolve, 500)); // its EndTxn sent
    await second.commit();
    const orders: Seen = [];
    const reader = await follow(sluice, 'orders', orders);
    closers.push(() => reader.disconnect());
    await until(() => orders.length === 1, 'the second half message, committed');
    assert.equal(orders[0]!.value, 'second');
  });
});
