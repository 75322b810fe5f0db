// The SDK consumer against an in-process broker: groups (exactly once across a rebalance, a member
// joining, restart from committed offsets), broadcast mode and static membership. Positions and
// handlers are in consumer_runner.test.ts, kafkajs interplay in consumer_interop.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ConsumerConfig } from './consumer.ts';
import { PartitionAssigners } from './assignors.ts';
import {
  Harness,
  assert_exactly_once,
  assert_key_order,
  covers,
  expected_values,
  partitions_of,
  sleep,
  until,
  type Seen,
} from './consumer_test_support.ts';

// ------------------------------------------------------------------ groups

test('a group of two consumers gets every message of a 3-partition topic exactly once, in order per key', async () => {
  const h = await Harness.start('group');
  try {
    await h.broker.broker.topics.create('orders', 3);
    await h.produce_keyed('orders', 3, 0, 150);
    const seen: Seen[] = [];
    const config = { groupId: 'billing' };
    const [a, b] = await Promise.all([
      h.member('a', seen, config, ['orders']),
      h.member('b', seen, config, ['orders']),
    ]);
    await until(() => covers([a.assignments(), b.assignments()], 'orders', 3), 'the group to settle on two members');
    await h.produce_keyed('orders', 3, 150, 150);
    await until(() => seen.length >= 300, 'all 300 messages');
    await sleep(300); // anything received twice would show up now
    assert_exactly_once(seen, expected_values(0, 300));
    assert_key_order(seen);
    const late = seen.slice(-150);
    assert.ok(
      late.some((s) => s.member === 'a') && late.some((s) => s.member === 'b'),
      'both members consume once the group is settled',
    );
    // What the group committed is everything.
    await Promise.all([a.disconnect(), b.disconnect()]);
    const committed = [0, 1, 2].map((p) => h.broker.broker.groups.committed('billing', 'orders', p)?.offset);
    const ends = [0, 1, 2].map((p) => h.broker.broker.topic_index.local_log('orders', p)!.high_watermark);
    assert.deepEqual(committed, ends, 'the committed offsets are the log ends after a graceful disconnect');
    h.assert_no_crashes();
  } finally {
    await h.close();
  }
});

test('a third member joining rebalances the group without losing a message', async () => {
  const h = await Harness.start('rebalance');
  try {
    await h.broker.broker.topics.create('events', 3);
    const seen: Seen[] = [];
    const revoked: string[] = [];
    const config = (name: string): ConsumerConfig => ({
      groupId: 'workers',
      onPartitionsRevoked: (assignment) => void revoked.push(`${name}:${partitions_of([assignment]).join(',')}`),
    });
    const a = await h.member('a', seen, config('a'), ['events']);
    const b = await h.member('b', seen, config('b'), ['events']);
    await until(() => covers([a.assignments(), b.assignments()], 'events', 3), 'two members to settle');
    // Produce continuously while the third member joins.
    let produced = 0;
    let producing = true;
    const producer = (async () => {
      while (producing) {
        await h.produce_keyed('events', 3, produced, 15);
        produced += 15;
        await sleep(10);
      }
    })();
    await sleep(200);
    const c = await h.member('c', seen, config('c'), ['events']);
    await until(
      () => covers([a.assignments(), b.assignments(), c.assignments()], 'events', 3) && c.assignments().length > 0,
      'three members to settle',
    );
    await sleep(200);
    producing = false;
    await producer;
    await until(() => new Set(seen.map((s) => s.value)).size >= produced, `all ${produced} messages`);
    await sleep(300);
    assert_exactly_once(seen, expected_values(0, produced));
    assert_key_order(seen);
    assert.deepEqual(
      partitions_of([a.assignments(), b.assignments(), c.assignments()].filter((x) => x.length > 0)).length,
      3,
    );
    assert.ok(
      [a, b, c].every((m) => m.assignments().flatMap((t) => t.partitions).length === 1),
      'one partition each',
    );
    assert.ok(
      revoked.some((r) => r.startsWith('a:')) && revoked.some((r) => r.startsWith('b:')),
      'the old members were told of the revocation',
    );
    assert.ok(
      seen.some((s) => s.member === 'c'),
      'the new member consumes',
    );
    h.assert_no_crashes();
  } finally {
    await h.close();
  }
});

test('a restarted consumer resumes from the committed offset (auto commit on disconnect, commitOffsets)', async () => {
  const h = await Harness.start('restart');
  try {
    await h.broker.broker.topics.create('jobs', 3);
    await h.produce_keyed('jobs', 3, 0, 90);
    const first: Seen[] = [];
    const range = { groupId: 'jobs-group', partitionAssigners: [PartitionAssigners.range] };
    const c1 = h.consumer(range);
    const protocols: string[] = [];
    c1.on<{ groupProtocol: string }>(c1.events.GROUP_JOIN, ({ payload }) => void protocols.push(payload.groupProtocol));
    await c1.subscribe({ topic: 'jobs', fromBeginning: true });
    await c1.run({
      eachMessage: async ({ partition, message }) =>
        void first.push({
          member: 'c1',
          topic: 'jobs',
          partition,
          offset: Number(message.offset),
          key: '',
          value: message.value!.toString(),
        }),
    });
    assert.deepEqual(protocols, ['range']);
    await until(() => first.length >= 90, '90 messages');
    await c1.disconnect();
    await h.produce_keyed('jobs', 3, 90, 60);
    const second: Seen[] = [];
    const c2 = await h.member('c2', second, range, ['jobs']);
    await until(() => second.length >= 60, '60 new messages');
    await sleep(200);
    assert_exactly_once(second, expected_values(90, 60));

    // Manual commits: autoCommit off, offset 4 committed for partition 0; a restart starts there.
    await c2.stop();
    const manual = h.consumer({ groupId: 'manual' });
    await manual.subscribe({ topic: 'jobs', fromBeginning: true });
    const got: Seen[] = [];
    await manual.run({
      autoCommit: false,
      eachMessage: async ({ partition, message }) =>
        void got.push({
          member: 'm',
          topic: 'jobs',
          partition,
          offset: Number(message.offset),
          key: '',
          value: message.value!.toString(),
        }),
    });
    await until(() => got.length >= 150, 'the whole topic');
    await manual.commitOffsets([{ topic: 'jobs', partition: 0, offset: '4' }]);
    await manual.disconnect();
    assert.equal(
      h.broker.broker.groups.committed('manual', 'jobs', 0)?.offset,
      4,
      'only the explicit commit is stored',
    );
    assert.equal(h.broker.broker.groups.committed('manual', 'jobs', 1), undefined, 'nothing auto-committed');
    const again: Seen[] = [];
    await h.member('again', again, { groupId: 'manual' }, ['jobs']);
    await until(() => again.filter((s) => s.partition === 0).length >= 46, 'partition 0 from offset 4');
    assert.equal(Math.min(...again.filter((s) => s.partition === 0).map((s) => s.offset)), 4);
    h.assert_no_crashes();
  } finally {
    await h.close();
  }
});

// ------------------------------------------------------------------ broadcast mode

test('group_idle_after_assigning_without_its_topic: the leader rebalances once the topic shows', async () => {
  const h = await Harness.start('missing-topic');
  try {
    // The metadata the leader assigns from may miss a topic that exists (a broker not caught up
    // after a restart); a topic deleted between subscribe and join does the same here.
    await h.broker.broker.topics.create('late', 2);
    const seen: Seen[] = [];
    const consumer = h.consumer({ groupId: 'late-group', allowAutoTopicCreation: false });
    await consumer.connect();
    await consumer.subscribe({ topic: 'late', fromBeginning: true });
    await h.broker.broker.topics.delete('late');
    await consumer.run({
      eachMessage: async ({ partition, message }) =>
        void seen.push({
          member: 'c',
          topic: 'late',
          partition,
          offset: Number(message.offset),
          key: message.key?.toString() ?? '',
          value: message.value?.toString() ?? '',
        }),
    });
    assert.deepEqual(partitions_of([consumer.assignments()]), [], 'nothing to assign while the topic is gone');
    await h.broker.broker.topics.create('late', 2);
    await h.produce_keyed('late', 2, 0, 10);
    await until(() => seen.length >= 10, 'the messages of the topic once it is back', 10_000);
    assert_exactly_once(seen, expected_values(0, 10));
  } finally {
    await h.close();
  }
});

test('broadcast mode: two consumers without a group each receive everything', async () => {
  const h = await Harness.start('broadcast');
  try {
    await h.broker.broker.topics.create('news', 3);
    await h.produce_keyed('news', 3, 0, 120);
    const one: Seen[] = [];
    const two: Seen[] = [];
    const a = await h.member('one', one, {}, ['news']);
    const b = await h.member('two', two, {}, ['news'], { run: { partitionsConsumedConcurrently: 3 } });
    assert.equal(partitions_of([a.assignments()]).length, 3);
    assert.equal(partitions_of([b.assignments()]).length, 3);
    await until(() => one.length >= 120 && two.length >= 120, 'both to read the backlog');
    await h.produce_keyed('news', 3, 120, 30);
    await until(() => one.length >= 150 && two.length >= 150, 'both to read the new messages');
    await sleep(200);
    assert_exactly_once(one, expected_values(0, 150));
    assert_exactly_once(two, expected_values(0, 150));
    assert_key_order(one);
    assert_key_order(two);
    await assert.rejects(a.commitOffsets([{ topic: 'news', partition: 0, offset: '1' }]), /groupId/);
    // Without fromBeginning a consumer starts at the end.
    const late: Seen[] = [];
    await h.member('late', late, {}, ['news'], { fromBeginning: false });
    await h.produce_keyed('news', 3, 150, 3);
    await until(() => late.length >= 3, 'the messages produced after it started');
    await sleep(200);
    assert.deepEqual(late.map((s) => s.value).sort(), expected_values(150, 3).sort());
    h.assert_no_crashes();
  } finally {
    await h.close();
  }
});

// ------------------------------------------------------------------ static membership

test('static membership: a member restarted with its groupInstanceId takes over, no session timeout', async () => {
  const h = await Harness.start('static');
  try {
    await h.broker.broker.topics.create('cache', 2);
    await h.produce_keyed('cache', 2, 0, 20, 4);
    const seen: Seen[] = [];
    const config = { groupId: 'static', groupInstanceId: 'node-1', sessionTimeout: 20_000 };
    const s1 = await h.member('s1', seen, config, ['cache']);
    await until(() => seen.length >= 20, '20 messages');
    await s1.disconnect();
    assert.equal(
      h.broker.broker.groups.describe('static').members.length,
      1,
      'a static member stays in the group after it stops',
    );
    await h.produce_keyed('cache', 2, 20, 10, 4);
    const started = Date.now();
    const s2 = await h.member('s2', seen, config, ['cache']);
    assert.ok(Date.now() - started < 5_000, 'no wait for the old session to expire');
    assert.equal(partitions_of([s2.assignments()]).length, 2);
    await until(() => seen.length >= 30, 'the 10 new messages');
    await sleep(200);
    assert_exactly_once(seen, expected_values(0, 30, 4));
    assert.equal(h.broker.broker.groups.describe('static').members.length, 1);
    h.assert_no_crashes();
  } finally {
    await h.close();
  }
});
