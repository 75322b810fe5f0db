import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { open_core } from '../compose/start_broker.ts';
import { BrokerError } from '../core/errors.ts';
import { encode_record_batch } from '../protocol/record_batch.ts';
import { temp_dir } from '../../test/support/storage.ts';

function idempotent_batch(producer_id: number, epoch: number, sequence: number, count: number): Buffer {
  const records = Array.from({ length: count }, (_, i) => ({
    key: null,
    value: Buffer.from(`s${sequence + i}`),
    timestamp_ms: 1_700_000_000_000,
  }));
  return encode_record_batch(records, { producer_id, producer_epoch: epoch, base_sequence: sequence });
}

test('idempotent producers across restarts: duplicates get their first offset; gaps, old epochs refused', async () => {
  const data_dir = temp_dir('idem');
  try {
    let broker = await open_core({ data_dir, node_id: 1 });
    await broker.topics.create('t', 1);
    const pid = await broker.allocate_producer_id();
    const first = await broker.partitions.produce('t', 0, idempotent_batch(pid, 0, 0, 3), -1);
    const second = await broker.partitions.produce('t', 0, idempotent_batch(pid, 0, 3, 2), -1);
    assert.deepEqual([first.base_offset, second.base_offset], [0, 3]);
    // A retry of either batch is answered with its original offset and appends nothing.
    assert.equal((await broker.partitions.produce('t', 0, idempotent_batch(pid, 0, 0, 3), -1)).base_offset, 0);
    assert.equal((await broker.partitions.produce('t', 0, idempotent_batch(pid, 0, 3, 2), -1)).base_offset, 3);
    assert.equal(broker.topic_index.local_log('t', 0)!.high_watermark, 5);
    await assert.rejects(
      broker.partitions.produce('t', 0, idempotent_batch(pid, 0, 9, 1), -1),
      (e: unknown) => e instanceof BrokerError && e.kind === 'out_of_order_sequence',
    );
    // Concurrent duplicates of an in-flight batch wait for it and share its offset.
    const [x, y] = await Promise.all([
      broker.partitions.produce('t', 0, idempotent_batch(pid, 0, 5, 1), -1),
      broker.partitions.produce('t', 0, idempotent_batch(pid, 0, 5, 1), -1),
    ]);
    assert.equal(x.base_offset, y.base_offset);
    await broker.close();

    // After a clean restart (snapshot) the state is back.
    broker = await open_core({ data_dir, node_id: 1 });
    assert.equal((await broker.partitions.produce('t', 0, idempotent_batch(pid, 0, 5, 1), -1)).base_offset, 5);
    const next = await broker.partitions.produce('t', 0, idempotent_batch(pid, 0, 6, 1), -1);
    assert.equal(next.base_offset, 6);
    // A new epoch must start at sequence 0; an old epoch is fenced afterwards.
    await assert.rejects(
      broker.partitions.produce('t', 0, idempotent_batch(pid, 1, 7, 1), -1),
      (e: unknown) => e instanceof BrokerError && e.kind === 'out_of_order_sequence',
    );
    await broker.partitions.produce('t', 0, idempotent_batch(pid, 1, 0, 1), -1);
    await assert.rejects(
      broker.partitions.produce('t', 0, idempotent_batch(pid, 0, 7, 1), -1),
      (e: unknown) => e instanceof BrokerError && e.kind === 'invalid_producer_epoch',
    );
    // Without a fresh snapshot (as after a crash) the state is rebuilt from the log itself.
    await broker.storage.checkpoint();
    fs.rmSync(`${data_dir}/producer-state.json`);
    broker.coordinators.release_group_waiters();
    await broker.storage.close();
    broker = await open_core({ data_dir, node_id: 1 });
    assert.equal(
      (await broker.partitions.produce('t', 0, idempotent_batch(pid, 1, 0, 1), -1)).base_offset,
      7,
      'duplicate recognised from the replayed log',
    );
    await assert.rejects(
      broker.partitions.produce('t', 0, idempotent_batch(pid, 1, 5, 1), -1),
      (e: unknown) => e instanceof BrokerError && e.kind === 'out_of_order_sequence',
    );
    await broker.close();
  } finally {
    fs.rmSync(data_dir, { recursive: true, force: true });
  }
});

test('reused_sequence_with_other_records_is_refused: such a batch is not acknowledged as a duplicate', async () => {
  // Found by the fault suite: kafkajs, after a request timeout, gave the sequence numbers of the
  // timed-out send to the next one, which was then answered as a duplicate of the first, with
  // its offset, and never stored.
  const data_dir = temp_dir('reused-seq');
  try {
    const broker = await open_core({ data_dir, node_id: 1 });
    await broker.topics.create('t', 1);
    const pid = await broker.allocate_producer_id();
    const batch = (value: string, timestamp_ms: number) =>
      encode_record_batch([{ key: Buffer.from('k'), value: Buffer.from(value), timestamp_ms }], {
        producer_id: pid,
        producer_epoch: 0,
        base_sequence: 0,
      });
    assert.equal((await broker.partitions.produce('t', 0, batch('first', 1000), -1)).base_offset, 0);
    await assert.rejects(
      broker.partitions.produce('t', 0, batch('second', 1000), -1),
      (e: unknown) => e instanceof BrokerError && e.kind === 'out_of_order_sequence' && /reused/.test(e.message),
    );
    // A true retry, stamped anew, is still a duplicate.
    assert.equal((await broker.partitions.produce('t', 0, batch('first', 2000), -1)).base_offset, 0);
    assert.equal(broker.topic_index.local_log('t', 0)!.high_watermark, 1);
    await broker.close();
  } finally {
    fs.rmSync(data_dir, { recursive: true, force: true });
  }
});

test('producer ids are unique across restarts', async () => {
  const data_dir = temp_dir('pids');
  try {
    let broker = await open_core({ data_dir, node_id: 1 });
    const before = [await broker.allocate_producer_id(), await broker.allocate_producer_id()];
    await broker.close();
    broker = await open_core({ data_dir, node_id: 1 });
    const after = await broker.allocate_producer_id();
    assert.ok(after > Math.max(...before));
    await broker.close();
  } finally {
    fs.rmSync(data_dir, { recursive: true, force: true });
  }
});
