import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import type { Broker } from './broker.ts';
import { open_core } from '../compose/start_broker.ts';
import { BrokerError } from '../core/errors.ts';
import { decode_record_batch, encode_record_batch } from '../protocol/record_batch.ts';
import { temp_dir } from '../../test/support/storage.ts';
import { AckType } from '../core/types.ts';

async function with_broker(work: (broker: Broker) => Promise<void>): Promise<void> {
  const data_dir = temp_dir('overflow');
  try {
    const broker = await open_core({ data_dir, node_id: 1 });
    try {
      await work(broker);
    } finally {
      await broker.close();
    }
  } finally {
    fs.rmSync(data_dir, { recursive: true, force: true });
  }
}

const batch = (...values: string[]) =>
  encode_record_batch(values.map((v) => ({ key: null, value: Buffer.from(v), timestamp_ms: 1_700_000_000_000 })));

async function values(broker: Broker, topic: string): Promise<string[]> {
  const log = broker.topic_index.local_log(topic, 0)!;
  if (log.high_watermark === log.log_start_offset) return [];
  const { batches } = await log.read(log.log_start_offset, 1 << 20);
  return batches
    .flatMap((b) => decode_record_batch(b))
    .filter((r) => r.offset >= log.log_start_offset)
    .map((r) => r.value!.toString());
}

const is_full = (e: unknown) =>
  e instanceof BrokerError &&
  e.kind === 'queue_full' &&
  /is full: .* messages wait \(sluice.max.messages=5\)/.test(e.message);

test('reject: a produce past sluice.max.messages is refused whole; consumed messages make room', async () => {
  await with_broker(async (broker) => {
    await broker.topics.create('q', 1, { 'sluice.max.messages': '5' });
    await broker.partitions.produce('q', 0, batch('1', '2', '3', '4', '5'), -1);
    await assert.rejects(broker.partitions.produce('q', 0, batch('6'), -1), is_full);
    await assert.rejects(broker.partitions.produce('q', 0, batch('6', '7'), -1), is_full);
    assert.deepEqual(await values(broker, 'q'), ['1', '2', '3', '4', '5'], 'nothing of a refused produce is kept');
    // A share group accepts three: three more fit.
    broker.coordinators.shares.heartbeat(
      {
        group_id: 'g',
        member_id: 'm',
        member_epoch: 0,
        subscribed_topic_names: ['q'],
        client_id: 't',
        client_host: 'h',
      },
      broker.monotonic_clock.now_ms(),
    );
    await broker.coordinators.shares.fetch(
      'g',
      'm',
      [{ topic: 'q', partition: 0 }],
      3,
      1 << 20,
      broker.monotonic_clock.now_ms(),
    );
    await broker.coordinators.shares.acknowledge(
      'g',
      'm',
      [{ topic: 'q', partition: 0, batches: [{ first_offset: 0, last_offset: 2, types: [AckType.ACCEPT] }] }],
      broker.monotonic_clock.now_ms(),
    );
    await broker.partitions.produce('q', 0, batch('6', '7', '8'), -1);
    await assert.rejects(broker.partitions.produce('q', 0, batch('9'), -1), is_full);
    assert.equal(broker.overflow.counters.rejected, 4);
  });
});

test('reject: sluice.max.bytes caps the bytes the partition holds', async () => {
  await with_broker(async (broker) => {
    await broker.topics.create('b', 1, { 'sluice.max.bytes': '200' });
    await broker.partitions.produce('b', 0, batch('x'.repeat(50)), -1);
    await assert.rejects(
      broker.partitions.produce('b', 0, batch('y'.repeat(100)), -1),
      (e: unknown) => e instanceof BrokerError && e.kind === 'queue_full' && /sluice.max.bytes=200/.test(e.message),
    );
  });
});

test('archive-oldest: the oldest messages are copied to <topic>.archive, then leave the queue', async () => {
  await with_broker(async (broker) => {
    await broker.topics.create('q', 1, { 'sluice.max.messages': '5', 'sluice.overflow.policy': 'archive-oldest' });
    await broker.partitions.produce('q', 0, batch('1', '2', '3', '4', '5'), -1);
    await broker.partitions.produce('q', 0, batch('6', '7'), -1);
    assert.deepEqual(await values(broker, 'q.archive'), ['1', '2']);
    assert.deepEqual(
      await values(broker, 'q'),
      ['3', '4', '5', '6', '7'],
      'no share group reads it: the archived messages are deleted',
    );

    // With a share group reading, archived messages are skipped by the group (the log keeps them).
    broker.coordinators.shares.heartbeat(
      {
        group_id: 'g',
        member_id: 'm',
        member_epoch: 0,
        subscribed_topic_names: ['q'],
        client_id: 't',
        client_host: 'h',
      },
      broker.monotonic_clock.now_ms(),
    );
    // The member acquires one record: '3', the oldest left.
    await broker.coordinators.shares.fetch(
      'g',
      'm',
      [{ topic: 'q', partition: 0 }],
      1,
      1 << 20,
      broker.monotonic_clock.now_ms(),
    );
    await broker.partitions.produce('q', 0, batch('8'), -1);
    assert.deepEqual(await values(broker, 'q.archive'), ['1', '2', '3']);
    const fetched = await broker.coordinators.shares.fetch(
      'g',
      'm',
      [{ topic: 'q', partition: 0 }],
      10,
      1 << 20,
      broker.monotonic_clock.now_ms(),
    );
    const got = fetched.flatMap((f) =>
      f.batches
        .flatMap((b) => decode_record_batch(b))
        .filter((r) => f.acquired.some((a) => r.offset >= a.first_offset && r.offset <= a.last_offset)),
    );
    assert.deepEqual(
      got.map((r) => r.value!.toString()),
      ['4', '5', '6', '7', '8'],
    );
    assert.equal(broker.overflow.counters.archived, 3);
  });
});
