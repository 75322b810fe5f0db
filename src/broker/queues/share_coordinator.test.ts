import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import type { Broker } from '../broker.ts';
import { open_core, type CoreOptions } from '../../compose/start_broker.ts';
import { BrokerError } from '../../core/errors.ts';
import { decode_record_batch, encode_record_batch } from '../../protocol/record_batch.ts';
import { temp_dir } from '../../../test/support/storage.ts';
import { AckType } from '../../core/types.ts';
import { DLQ_HEADERS } from './dead_letters.ts';
import type { FetchedPartition } from '../../core/types.ts';
import { MONOTONIC_CLOCK, type PartitionLog } from '../../storage/index.ts';
import { batch_base_offset } from '../../format/batch_layout.ts';
import { begin_txn as begin_core_txn } from '../../../test/support/core_txn.ts';
import { is_control_batch } from '../../protocol/control_records.ts';

const FAST = {
  tick_ms: 10,
  session_timeout_ms: 2_000,
  partition: {
    delivery_count_limit: 3,
    record_lock_duration_ms: 200,
    records_in_flight_max: 1_000,
    retry_backoff_ms: [20],
  },
};

/**
 * Runs `work` on a broker over a fresh data directory; `restart` opens another broker on the same
 * directory. Every broker opened is closed before the directory is removed: one left running by a
 * failed assertion keeps writing (share state, dead-letter partitions) while the directory is
 * deleted, and the removal's ENOTEMPTY would then hide the assertion's message.
 */
async function with_broker(
  work: (broker: Broker, restart: () => Promise<Broker>) => Promise<void>,
  lock_ms = FAST.partition.record_lock_duration_ms,
): Promise<void> {
  const data_dir = temp_dir('shares');
  const opened: Broker[] = [];
  const open = async (share_groups: CoreOptions['share_groups'] = FAST): Promise<Broker> => {
    const broker = await open_core({ data_dir, node_id: 1, share_groups });
    opened.push(broker);
    return broker;
  };
  try {
    const first = await open({ ...FAST, partition: { ...FAST.partition, record_lock_duration_ms: lock_ms } });
    await work(first, () => open());
  } finally {
    for (const broker of opened) await broker.close();
    fs.rmSync(data_dir, { recursive: true, force: true });
  }
}

/**
 * The local log of a dead-letter topic once a record is in it. The topic is listed (topics.get)
 * before its partition's log is created, so waiting for the topic alone is not enough.
 */
async function dead_letters(broker: Broker, topic: string, what: string, wait_ms = 5_000): Promise<PartitionLog> {
  const deadline = Date.now() + wait_ms;
  for (;;) {
    const log = broker.topics.get(topic) ? broker.topic_index.local_log(topic, 0) : undefined;
    if (log && log.high_watermark > 0) return log;
    assert.ok(Date.now() < deadline, what);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function produce(broker: Broker, topic: string, values: string[]): Promise<void> {
  await broker.partitions.produce(
    topic,
    0,
    encode_record_batch(
      values.map((v) => ({
        key: Buffer.from(`k-${v}`),
        value: Buffer.from(v),
        timestamp_ms: 1_700_000_000_000,
        headers: [{ key: 'h', value: Buffer.from('x') }],
      })),
    ),
    -1,
  );
}

const join = (broker: Broker, member: string, topics = ['jobs']) =>
  broker.coordinators.shares.heartbeat(
    {
      group_id: 'workers',
      member_id: member,
      member_epoch: 0,
      subscribed_topic_names: topics,
      client_id: 'test',
      client_host: '127.0.0.1',
    },
    broker.monotonic_clock.now_ms(),
  );

/** The values delivered by a fetch, only those inside the acquired ranges. */
function delivered(fetched: FetchedPartition[]): Array<{ offset: number; value: string; deliveries: number }> {
  const out = [];
  for (const p of fetched) {
    for (const batch of p.batches) {
      for (const record of decode_record_batch(batch)) {
        const range = p.acquired.find((r) => record.offset >= r.first_offset && record.offset <= r.last_offset);
        if (range)
          out.push({ offset: record.offset, value: record.value!.toString(), deliveries: range.delivery_count });
      }
    }
  }
  return out;
}

const fetch = (broker: Broker, member: string, records = 100) =>
  broker.coordinators.shares.fetch(
    'workers',
    member,
    [{ topic: 'jobs', partition: 0 }],
    records,
    1 << 20,
    broker.monotonic_clock.now_ms(),
  );
const ack = (broker: Broker, member: string, first: number, last: number, type: number, reason: string | null = null) =>
  broker.coordinators.shares.acknowledge(
    'workers',
    member,
    [
      {
        topic: 'jobs',
        partition: 0,
        batches: [{ first_offset: first, last_offset: last, types: [type as 1], reason }],
      },
    ],
    broker.monotonic_clock.now_ms(),
  );

test('members see every partition; competing members get disjoint records; accepted records are done', async () => {
  await with_broker(async (broker) => {
    await broker.topics.create('jobs', 1);
    await produce(broker, 'jobs', ['a', 'b', 'c', 'd', 'e']);
    const a = join(broker, 'member-a');
    assert.deepEqual([...a.assignment], [['jobs', [0]]]);
    assert.ok(a.member_epoch > 0);
    join(broker, 'member-b');
    const first = delivered(await fetch(broker, 'member-a', 3));
    const second = delivered(await fetch(broker, 'member-b', 10));
    assert.deepEqual(
      first.map((r) => r.value),
      ['a', 'b', 'c'],
    );
    assert.deepEqual(
      second.map((r) => r.value),
      ['d', 'e'],
    );
    assert.deepEqual(delivered(await fetch(broker, 'member-b')), [], 'nothing left');
    const results = await ack(broker, 'member-a', 0, 2, AckType.ACCEPT);
    assert.equal([...results.values()][0], null);
    const wrong = await ack(broker, 'member-a', 3, 4, AckType.ACCEPT);
    assert.match(String([...wrong.values()][0]), /not acquired by this member/);
    assert.throws(
      () =>
        broker.coordinators.shares.heartbeat(
          {
            group_id: 'workers',
            member_id: 'member-a',
            member_epoch: 99,
            subscribed_topic_names: null,
            client_id: 't',
            client_host: 'h',
          },
          broker.monotonic_clock.now_ms(),
        ),
      (e: unknown) => e instanceof BrokerError && e.kind === 'fenced_member_epoch',
    );
    await assert.rejects(
      broker.coordinators.shares.fetch(
        'workers',
        'stranger',
        [{ topic: 'jobs', partition: 0 }],
        10,
        1000,
        broker.monotonic_clock.now_ms(),
      ),
      (e: unknown) => e instanceof BrokerError && e.kind === 'unknown_member_id',
    );
  });
});

test('release and lock timeout redeliver, count raised; at the limit: dead-lettered with its origin', async () => {
  await with_broker(async (broker) => {
    await broker.topics.create('jobs', 1);
    await produce(broker, 'jobs', ['poison', 'fine']);
    join(broker, 'm');
    assert.deepEqual(
      delivered(await fetch(broker, 'm', 1)).map((r) => [r.value, r.deliveries]),
      [['poison', 1]],
    );
    await ack(broker, 'm', 0, 0, AckType.RELEASE, 'boom 1');
    const next = delivered(await fetch(broker, 'm', 10));
    assert.deepEqual(
      next.map((r) => r.value),
      ['fine'],
      'the released record waits for its backoff',
    );
    await new Promise((resolve) => setTimeout(resolve, 30));
    assert.deepEqual(
      delivered(await fetch(broker, 'm', 1)).map((r) => [r.value, r.deliveries]),
      [['poison', 2]],
    );
    // Not acknowledged: the lock runs out (200 ms) and the record comes back.
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.deepEqual(
      delivered(await fetch(broker, 'm', 1)).map((r) => [r.value, r.deliveries]),
      [['poison', 3]],
    );
    await ack(broker, 'm', 0, 0, AckType.RELEASE, 'boom 3');
    const log = await dead_letters(broker, 'jobs.workers.dlq', 'dead letter written');
    const { batches } = await log.read(0, 1 << 20);
    const [letter] = decode_record_batch(batches[0]!);
    assert.equal(letter!.value!.toString(), 'poison');
    assert.equal(letter!.key!.toString(), 'k-poison');
    assert.equal(letter!.timestamp_ms, 1_700_000_000_000);
    const header = (name: string) => letter!.headers!.find((h) => h.key === name)?.value?.toString();
    assert.equal(header('h'), 'x', 'original headers kept');
    assert.equal(header(DLQ_HEADERS.topic), 'jobs');
    assert.equal(header(DLQ_HEADERS.partition), '0');
    assert.equal(header(DLQ_HEADERS.offset), '0');
    assert.equal(header(DLQ_HEADERS.group), 'workers');
    assert.equal(header(DLQ_HEADERS.delivery_count), '3');
    assert.match(header(DLQ_HEADERS.reason)!, /delivery limit 3 reached; last failure: boom 3/);
    assert.ok(Number(header(DLQ_HEADERS.time_ms)) > 1_700_000_000_000);
    assert.equal(broker.coordinators.shares.counters.dead_lettered, 1);
  });
});

// Regression, seed 20261206: records acquired while a broker's wall clock was 76 s fast stayed
// locked 76 s longer once the clock was set right, because locks were measured on the wall clock.
test('acquisition_lock_stretched_by_a_clock_stepped_back: a lock runs out on time all the same', async () => {
  const data_dir = temp_dir('shares-clock');
  let step_ms = 0;
  const wall = { now_ms: () => Date.now() + step_ms };
  const broker = await open_core({
    data_dir,
    node_id: 1,
    share_groups: FAST,
    clock: wall,
    monotonic_clock: MONOTONIC_CLOCK,
  });
  try {
    await broker.topics.create('jobs', 1);
    await produce(broker, 'jobs', ['a']);
    broker.shares.heartbeat({
      group_id: 'workers',
      member_id: 'm',
      member_epoch: 0,
      subscribed_topic_names: ['jobs'],
      client_id: 'test',
      client_host: '127.0.0.1',
    });
    const fetch_one = async () =>
      delivered(await broker.shares.fetch('workers', 'm', [{ topic: 'jobs', partition: 0 }], 1, 1 << 20)).map((r) => [
        r.value,
        r.deliveries,
      ]);
    assert.deepEqual(await fetch_one(), [['a', 1]]);
    step_ms = -76_000; // the wall clock set right while the record is acquired
    await new Promise((resolve) => setTimeout(resolve, 4 * FAST.partition.record_lock_duration_ms));
    assert.deepEqual(await fetch_one(), [['a', 2]], 'delivered again once its 200 ms lock ran out');
  } finally {
    await broker.close();
    fs.rmSync(data_dir, { recursive: true, force: true });
  }
});

test('share state survives a restart: accepted records stay done, acquired ones come back, count raised', async () => {
  await with_broker(async (broker, restart) => {
    await broker.topics.create('jobs', 1);
    await produce(
      broker,
      'jobs',
      Array.from({ length: 10 }, (_, i) => `v${i}`),
    );
    join(broker, 'm');
    await fetch(broker, 'm', 6);
    await ack(broker, 'm', 0, 2, AckType.ACCEPT);
    await ack(broker, 'm', 3, 3, AckType.REJECT, 'bad');
    // offsets 4 and 5 stay acquired across the restart
    await broker.close();

    const again = await restart();
    join(again, 'm2');
    const after = delivered(await fetch(again, 'm2', 100));
    assert.deepEqual(
      after.map((r) => [r.value, r.deliveries]),
      [
        ['v4', 2],
        ['v5', 2],
        ['v6', 1],
        ['v7', 1],
        ['v8', 1],
        ['v9', 1],
      ],
    );
    const log = await dead_letters(again, 'jobs.workers.dlq', 'the rejected record is dead-lettered');
    await new Promise((resolve) => setTimeout(resolve, 50)); // time for a second copy, if one were written
    const { batches } = await log.read(0, 1 << 20);
    assert.deepEqual(
      batches.flatMap((b) => decode_record_batch(b)).map((r) => r.value!.toString()),
      ['v3'],
      'once',
    );
    assert.equal(again.coordinators.shares.partitions_of('workers')[0]!.start_offset, 4);
  });
});

test('a message whose time to live runs out while those before it wait is dead-lettered on time', async () => {
  await with_broker(async (broker) => {
    await broker.topics.create('jobs', 1);
    await broker.partitions.produce(
      'jobs',
      0,
      encode_record_batch([
        { key: null, value: Buffer.from('a'), timestamp_ms: Date.now() },
        { key: null, value: Buffer.from('b'), timestamp_ms: Date.now() },
        {
          key: null,
          value: Buffer.from('short-lived'),
          timestamp_ms: Date.now(),
          headers: [{ key: 'sluice-ttl-ms', value: Buffer.from('300') }],
        },
        { key: null, value: Buffer.from('d'), timestamp_ms: Date.now() },
      ]),
      -1,
    );
    await assert.rejects(
      broker.partitions.produce(
        'jobs',
        0,
        encode_record_batch([
          {
            key: null,
            value: Buffer.from('x'),
            timestamp_ms: Date.now(),
            headers: [{ key: 'sluice-ttl-ms', value: Buffer.from('soon') }],
          },
        ]),
        -1,
      ),
      (e: unknown) => e instanceof BrokerError && e.kind === 'invalid_record' && /sluice-ttl-ms/.test(e.message),
    );
    join(broker, 'm');
    const held = delivered(await fetch(broker, 'm', 2)); // a and b stay unacknowledged
    assert.deepEqual(
      held.map((r) => r.value),
      ['a', 'b'],
    );
    const started = Date.now();
    const log = await dead_letters(broker, 'jobs.workers.dlq', 'dead-lettered', 3_000);
    const waited = Date.now() - started;
    assert.ok(waited < 1_000, `on time (${waited} ms after the fetch, TTL 300 ms)`);
    const { batches } = await log.read(0, 1 << 20);
    const [letter] = decode_record_batch(batches[0]!);
    assert.equal(letter!.value!.toString(), 'short-lived');
    assert.match(letter!.headers!.find((h) => h.key === 'sluice-dlq-reason')!.value!.toString(), /expired/);
    await ack(broker, 'm', 0, 1, AckType.ACCEPT);
    assert.deepEqual(
      delivered(await fetch(broker, 'm', 10)).map((r) => r.value),
      ['d'],
      'the expired message is never delivered',
    );
    assert.equal(broker.coordinators.shares.counters.expired, 1);
  }, 10_000); // the lock duration: a and b stay locked for the whole test
});

test('a topic TTL expires what waits too long; sluice.ttl.expired.action=drop dead-letters nothing', async () => {
  await with_broker(async (broker) => {
    await broker.topics.create('jobs', 1, { 'sluice.message.ttl.ms': '100', 'sluice.ttl.expired.action': 'drop' });
    await produce(broker, 'jobs', ['x', 'y']);
    join(broker, 'm');
    await new Promise((resolve) => setTimeout(resolve, 400));
    assert.deepEqual(delivered(await fetch(broker, 'm', 10)), [], 'both expired before anyone fetched');
    assert.equal(broker.coordinators.shares.counters.expired, 2);
    assert.equal(broker.topics.get('jobs.workers.dlq'), undefined, 'dropped, not dead-lettered');
    assert.equal(broker.coordinators.shares.partitions_of('workers')[0]!.start_offset, 2);
  });
});

test('group configs with a bad value or an unknown name are refused', async () => {
  await with_broker(async (broker) => {
    await assert.rejects(
      broker.shares.set_configs('workers', { 'share.delivery.count.limit': 'many' }),
      (e: unknown) =>
        e instanceof BrokerError && e.kind === 'invalid_config' && /share.delivery.count.limit=many/.test(e.message),
    );
    await assert.rejects(
      broker.shares.set_configs('workers', { 'share.no.such': '1' }),
      /unknown group config share.no.such/,
    );
    await assert.rejects(
      broker.shares.set_configs('workers', { 'sluice.share.retry.backoff.ms': '1,x' }),
      /comma-separated/,
    );
  });
});

test('group configs: delivery limit, backoff and dead-letter topic apply at once and survive a restart', async () => {
  await with_broker(async (broker, restart) => {
    await broker.topics.create('jobs', 1);
    await broker.shares.set_configs('workers', {
      'share.delivery.count.limit': '1',
      'sluice.share.retry.backoff.ms': '0',
      'sluice.share.dlq.topic': 'graveyard',
    });
    await produce(broker, 'jobs', ['once']);
    join(broker, 'm');
    assert.deepEqual(
      delivered(await fetch(broker, 'm')).map((r) => r.value),
      ['once'],
    );
    await ack(broker, 'm', 0, 0, AckType.RELEASE, 'nope');
    await dead_letters(broker, 'graveyard', "dead-lettered to the group's topic after one delivery");
    assert.equal(broker.topics.get('jobs.workers.dlq'), undefined);
    await broker.close();
    const again = await restart();
    assert.deepEqual(again.metadata.group_configs('workers'), {
      'share.delivery.count.limit': '1',
      'sluice.share.retry.backoff.ms': '0',
      'sluice.share.dlq.topic': 'graveyard',
    });
    assert.equal(again.coordinators.shares.settings_of('workers').delivery_count_limit, 1);
    await again.shares.set_configs('workers', {}, { remove: ['share.delivery.count.limit'] });
    assert.equal(
      again.coordinators.shares.settings_of('workers').delivery_count_limit,
      FAST.partition.delivery_count_limit,
    );
  });
});

/** A transaction of its own producer on jobs-0: `end` commits or aborts it (its marker written). */
const begin_txn = (broker: Broker, id: string, values: string[]) => begin_core_txn(broker, id, 'jobs', 0, values);

/** A fetch's records, checked to hold no transaction marker, in its batches or its acquired ranges. */
async function fetch_values(broker: Broker, member: string): Promise<string[]> {
  const fetched = await fetch(broker, member);
  for (const batch of fetched.flatMap((p) => p.batches)) assert.equal(is_control_batch(batch), false, 'a marker sent');
  const { batches } = await broker.topic_index.local_log('jobs', 0)!.read(0, 1 << 20);
  const markers = batches.filter((batch) => is_control_batch(batch)).map((batch) => batch_base_offset(batch, 0));
  for (const range of fetched.flatMap((p) => p.acquired))
    for (const marker of markers)
      assert.ok(marker < range.first_offset || marker > range.last_offset, `the marker at ${marker} acquired`);
  return delivered(fetched).map((r) => r.value);
}

test('read_committed: an open transaction is not acquired until its commit marker; markers never', async () => {
  await with_broker(async (broker) => {
    await broker.topics.create('jobs', 1);
    await produce(broker, 'jobs', ['a']);
    const open = await begin_txn(broker, 'txn-open', ['t1', 't2']);
    await produce(broker, 'jobs', ['b']);
    join(broker, 'm');
    assert.deepEqual(await fetch_values(broker, 'm'), ['a'], 'the open transaction holds everything after it');
    assert.deepEqual(await fetch_values(broker, 'm'), []);
    assert.equal(broker.coordinators.shares.queue_stats('workers')!.available, 0, 'nothing available below the LSO');
    assert.equal(broker.coordinators.shares.has_available('workers', [{ topic: 'jobs', partition: 0 }], 0), false);
    await open.end(true);
    assert.deepEqual(await fetch_values(broker, 'm'), ['t1', 't2', 'b']);
    await ack(broker, 'm', 0, 3, AckType.ACCEPT);
    const [state] = broker.coordinators.shares.partitions_of('workers');
    assert.equal(state!.start_offset, 5, 'the marker at 4 is finished too');
    assert.equal(state!.in_flight, 0);
  });
});

test('read_committed: aborted records and markers are archived, never delivered or dead-lettered', async () => {
  await with_broker(async (broker, restart) => {
    await broker.topics.create('jobs', 1);
    const aborted = await begin_txn(broker, 'txn-abort', ['x', 'y']);
    await aborted.end(false);
    await produce(broker, 'jobs', ['c']);
    const committed = await begin_txn(broker, 'txn-commit', ['z']);
    await committed.end(true);
    join(broker, 'm');
    assert.deepEqual(await fetch_values(broker, 'm'), ['c', 'z']);
    const census = broker.coordinators.shares.queue_stats('workers', { detail: true })!.partitions[0]!.census!;
    assert.equal(census.acquired, 2);
    assert.equal(broker.coordinators.shares.partitions_of('workers')[0]!.start_offset, 3, 'x, y and their marker');
    // Nothing settled: the locks run out and only the delivered records come back, counted twice.
    await new Promise((resolve) => setTimeout(resolve, FAST.partition.record_lock_duration_ms + 100));
    const again = delivered(await fetch(broker, 'm'));
    assert.deepEqual(
      again.map((r) => [r.value, r.deliveries]),
      [
        ['c', 2],
        ['z', 2],
      ],
    );
    await broker.close();
    const after = await restart();
    join(after, 'm2');
    const redelivered = delivered(await fetch(after, 'm2'));
    assert.deepEqual(
      redelivered.map((r) => r.value),
      ['c', 'z'],
      'after a restart as before: the archived records stay archived',
    );
    assert.equal(after.topics.get('jobs.workers.dlq'), undefined, 'no dead letters');
  });
});

test('share.isolation.level=read_uncommitted: open and aborted records are delivered, markers not', async () => {
  await with_broker(async (broker) => {
    await broker.topics.create('jobs', 1);
    await broker.shares.set_configs('workers', { 'share.isolation.level': 'read_uncommitted' });
    const aborted = await begin_txn(broker, 'txn-abort', ['x']);
    await aborted.end(false);
    await begin_txn(broker, 'txn-open', ['o']);
    join(broker, 'm');
    assert.deepEqual(await fetch_values(broker, 'm'), ['x', 'o']);
    await ack(broker, 'm', 0, 0, AckType.ACCEPT);
    await ack(broker, 'm', 2, 2, AckType.ACCEPT);
    assert.equal(
      broker.coordinators.shares.partitions_of('workers')[0]!.start_offset,
      3,
      'the marker at 1 is finished',
    );
    await assert.rejects(
      broker.shares.set_configs('workers', { 'share.isolation.level': 'read_most' }),
      /share.isolation.level=read_most/,
    );
  });
});
