// The SDK consumer's positions and handlers against an in-process broker: seek and seekToTimestamp,
// pause and resume, a failing handler retried, stop() from inside a handler, eachBatch with
// resolved and unresolved offsets.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Harness, sleep, until, type Seen } from './consumer_test_support.ts';
import { PartitionPool } from './consumer_runner.ts';

// ------------------------------------------------------------------ seek, pause

test('seek and seekToTimestamp move the position; a seek before run applies at assignment', async () => {
  const h = await Harness.start('seek');
  try {
    await h.broker.broker.topics.create('ticks', 1);
    const base = 1_700_000_000_000;
    await h.append(
      'ticks',
      0,
      Array.from({ length: 20 }, (_, i) => ({ key: 'k', value: `v${i}`, timestamp_ms: base + i * 1000 })),
    );
    const seen: Seen[] = [];
    const consumer = await h.member('s', seen, { groupId: 'seekers' }, ['ticks']);
    await until(() => seen.length >= 20, '20 messages');
    assert.deepEqual(
      seen.map((s) => s.offset),
      Array.from({ length: 20 }, (_, i) => i),
    );

    consumer.seek({ topic: 'ticks', partition: 0, offset: '5' });
    await until(() => seen.length >= 35, 'offsets 5..19 again');
    assert.deepEqual(
      seen.slice(20).map((s) => s.offset),
      Array.from({ length: 15 }, (_, i) => 5 + i),
    );

    await consumer.seekToTimestamp({ topic: 'ticks', partition: 0, timestamp: base + 12_000 - 500 });
    await until(() => seen.length >= 43, 'offsets 12..19 again');
    assert.deepEqual(
      seen.slice(35).map((s) => s.offset),
      Array.from({ length: 8 }, (_, i) => 12 + i),
    );
    assert.equal(seen[35]!.value, 'v12');

    // Past the last timestamp: the position is the end; only new messages arrive.
    await consumer.seekToTimestamp({ topic: 'ticks', partition: 0, timestamp: base + 100_000 });
    await sleep(200);
    assert.equal(seen.length, 43);
    await h.append('ticks', 0, [{ key: 'k', value: 'v20' }]);
    await until(() => seen.length >= 44, 'the new message');
    assert.equal(seen[43]!.offset, 20);
    await consumer.disconnect();
    assert.equal(h.broker.broker.groups.committed('seekers', 'ticks', 0)?.offset, 21);

    // Broadcast mode, seek before run: reading starts at the sought offset.
    const early: Seen[] = [];
    const reader = h.consumer({});
    await reader.subscribe({ topic: 'ticks', fromBeginning: true });
    reader.seek({ topic: 'ticks', partition: 0, offset: 17 });
    await reader.run({
      eachMessage: async ({ partition, message }) =>
        void early.push({
          member: 'r',
          topic: 'ticks',
          partition,
          offset: Number(message.offset),
          key: '',
          value: message.value!.toString(),
        }),
    });
    await until(() => early.length >= 4, 'offsets 17..20');
    assert.deepEqual(
      early.map((s) => s.offset),
      [17, 18, 19, 20],
    );
    h.assert_no_crashes();
  } finally {
    await h.close();
  }
});

test('pause and resume, by topic partition and from inside a handler', async () => {
  const h = await Harness.start('pause');
  try {
    await h.broker.broker.topics.create('flow', 2);
    const seen: Seen[] = [];
    let resume_p1: (() => void) | null = null;
    const consumer = await h.member('p', seen, { groupId: 'pausers' }, ['flow'], {
      each: ({ partition, message, pause }) => {
        if (partition === 1 && message.value!.toString() === 'p1-stop') resume_p1 = pause();
      },
    });
    consumer.pause([{ topic: 'flow', partitions: [0] }]);
    assert.deepEqual(consumer.paused(), [{ topic: 'flow', partitions: [0] }]);
    await h.append('flow', 0, [
      { key: 'a', value: 'p0-a' },
      { key: 'a', value: 'p0-b' },
    ]);
    await h.append('flow', 1, [{ key: 'b', value: 'p1-a' }]);
    await until(() => seen.length >= 1, 'the unpaused partition');
    await sleep(300);
    assert.deepEqual(
      seen.map((s) => s.value),
      ['p1-a'],
      'nothing from the paused partition',
    );
    consumer.resume([{ topic: 'flow', partitions: [0] }]);
    await until(() => seen.length >= 3, 'the resumed partition');
    assert.deepEqual(
      seen.slice(1).map((s) => s.value),
      ['p0-a', 'p0-b'],
    );

    // pause() from the payload stops the partition right after that message.
    await h.append('flow', 1, [
      { key: 'b', value: 'p1-stop' },
      { key: 'b', value: 'p1-after' },
    ]);
    await until(() => resume_p1 !== null, 'the handler to pause');
    await sleep(300);
    assert.deepEqual(
      seen.slice(3).map((s) => s.value),
      ['p1-stop'],
    );
    assert.deepEqual(consumer.paused(), [{ topic: 'flow', partitions: [1] }]);
    resume_p1!();
    await until(() => seen.length >= 5, 'the message after the pause');
    assert.equal(seen[4]!.value, 'p1-after');

    // A whole topic.
    consumer.pause([{ topic: 'flow' }]);
    await h.append('flow', 0, [{ key: 'a', value: 'late-0' }]);
    await h.append('flow', 1, [{ key: 'b', value: 'late-1' }]);
    await sleep(300);
    assert.equal(seen.length, 5);
    consumer.resume([{ topic: 'flow' }]);
    await until(() => seen.length >= 7, 'both partitions after resuming the topic');
    h.assert_no_crashes();
  } finally {
    await h.close();
  }
});

test('a failing handler is retried from the failed message; stop() inside a handler commits what is done', async () => {
  const h = await Harness.start('handler-error');
  try {
    await h.broker.broker.topics.create('work', 1);
    await h.append(
      'work',
      0,
      Array.from({ length: 10 }, (_, i) => ({ key: 'k', value: `w${i}` })),
    );
    const offsets: number[] = [];
    const crashes: Array<{ restart: boolean }> = [];
    let failed = false;
    const consumer = h.consumer({ groupId: 'workers' });
    consumer.on<{ restart: boolean }>(consumer.events.CRASH, ({ payload }) => void crashes.push(payload));
    await consumer.subscribe({ topic: 'work', fromBeginning: true });
    let stopped: Promise<void> | null = null;
    let stop_wait_ms = -1;
    await consumer.run({
      eachMessage: async ({ message }) => {
        const offset = Number(message.offset);
        offsets.push(offset);
        if (offset === 3 && !failed) {
          failed = true;
          throw new Error('transient failure');
        }
        if (offset === 7) {
          // Must not wait for this very handler to finish (that would never end).
          const started = Date.now();
          await consumer.stop();
          stop_wait_ms = Date.now() - started;
          stopped = Promise.resolve();
        }
      },
    });
    await until(() => stopped !== null, 'the handler to stop the consumer');
    assert.ok(stop_wait_ms >= 0 && stop_wait_ms < 100, `stop() from a handler returns at once (${stop_wait_ms} ms)`);
    await until(
      () => h.broker.broker.groups.describe('workers').members.length === 0,
      'the member to leave the group',
      5_000,
    );
    assert.equal(h.broker.broker.groups.committed('workers', 'work', 0)?.offset, 8, 'offsets up to the stop committed');
    assert.deepEqual(offsets, [0, 1, 2, 3, 3, 4, 5, 6, 7], 'offset 3 retried; nothing after the stop');
    assert.deepEqual(
      crashes.map((c) => c.restart),
      [true],
    );
    h.assert_no_crashes(/transient failure/);
  } finally {
    await h.close();
  }
});

// ------------------------------------------------------------------ eachBatch

test('eachBatch: unresolved messages are fetched again, resolved ones committed', async () => {
  const h = await Harness.start('each-batch');
  try {
    await h.broker.broker.topics.create('bulk', 1);
    await h.append(
      'bulk',
      0,
      Array.from({ length: 10 }, (_, i) => ({ key: 'k', value: `b${i}` })),
    );
    const calls: string[][] = [];
    const uncommitted: unknown[] = [];
    const consumer = h.consumer({ groupId: 'batcher' });
    const crashes: unknown[] = [];
    consumer.on<{ error: unknown }>(consumer.events.CRASH, ({ payload }) => void crashes.push(payload.error));
    await consumer.subscribe({ topic: 'bulk', fromBeginning: true });
    await consumer.run({
      eachBatchAutoResolve: false,
      autoCommitInterval: null,
      eachBatch: async ({ batch, resolveOffset, uncommittedOffsets, commitOffsetsIfNecessary, isRunning, isStale }) => {
        assert.ok(isRunning() && !isStale());
        calls.push(batch.messages.map((m) => m.offset));
        assert.equal(batch.highWatermark, '10');
        if (calls.length === 1) {
          resolveOffset(batch.messages[4]!.offset); // the rest is left unresolved
          uncommitted.push(uncommittedOffsets());
          return;
        }
        for (const message of batch.messages) resolveOffset(message.offset);
        assert.equal(batch.offsetLag(), '0');
        assert.equal(batch.offsetLagLow(), '4');
        await commitOffsetsIfNecessary();
      },
    });
    await until(
      () => calls.length >= 2 && h.broker.broker.groups.committed('batcher', 'bulk', 0)?.offset === 10,
      'the second batch and its commit',
    );
    assert.deepEqual(calls, [Array.from({ length: 10 }, (_, i) => String(i)), ['5', '6', '7', '8', '9']]);
    assert.deepEqual(uncommitted, [{ topics: [{ topic: 'bulk', partitions: [{ partition: 0, offset: '5' }] }] }]);
    assert.deepEqual(crashes, [], 'no handler (assertion) failed');
    h.assert_no_crashes();
  } finally {
    await h.close();
  }
});

// Regression, found by the fault suite (its transactions loop, .ci/run's schedule): a handler that
// failed while the fetch round still waited on another leader ended the process.
test('handler_failure_before_its_round_awaited_it: no unhandled rejection', async () => {
  const unhandled: unknown[] = [];
  const listener = (reason: unknown) => void unhandled.push(reason);
  process.on('unhandledRejection', listener);
  try {
    const job = new PartitionPool(1).run(() => Promise.reject(new Error('handler failed')));
    await sleep(20); // the round is still waiting on another leader's fetch
    const [result] = await Promise.allSettled([job]);
    assert.equal(result!.status, 'rejected');
    assert.deepEqual(unhandled, []);
  } finally {
    process.off('unhandledRejection', listener);
  }
});
