// Where a follower cuts its log after asking the leader about its latest epoch (OffsetForLeaderEpoch),
// including the case where the leader never saw that epoch at all; and a copied tail cut across a
// leader's batch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FollowerFetcher, divergence_point } from './follower_fetcher.ts';
import { DiskFullError, SILENT_LOGGER, SimFileIO } from '../storage/index.ts';
import { make_batch, open_sim, values_of } from '../../test/support/storage.ts';

const never = (() => {
  throw new Error('not used here');
}) as never;

/** A log whose epochs begin at the given offsets, ending at `next_offset`. */
function log_with(starts: Array<[epoch: number, start_offset: number]>, next_offset: number) {
  const end_offset_for = (epoch: number, log_end: number) => {
    let found = -1;
    for (let i = 0; i < starts.length; i++) if (starts[i]![0] <= epoch) found = i;
    if (found < 0) return { epoch: -1, end_offset: -1 };
    return { epoch: starts[found]![0], end_offset: starts[found + 1]?.[1] ?? log_end };
  };
  return { next_offset, epochs: { end_offset_for } } as unknown as Parameters<typeof divergence_point>[3];
}

test('the leader knows the epoch: the log is cut where the leader says it ends', () => {
  assert.equal(divergence_point(9, 50_210, 9, log_with([[9, 50_000]], 50_240)), 50_210);
  assert.equal(divergence_point(9, 50_300, 9, log_with([[9, 50_000]], 50_240)), 50_240, 'never past its own end');
});

test('the leader never saw the epoch: the log is cut where its own copy of the answered epoch ends', () => {
  // Epoch 9 wrote up to 50,210 on the new leader; this replica led epoch 10 from 50,200 and its
  // batch there (a retry of one the new leader has from epoch 9) must go.
  const replica = log_with(
    [
      [9, 50_000],
      [10, 50_200],
    ],
    50_240,
  );
  assert.equal(divergence_point(9, 50_210, 10, replica), 50_200);
});

test('the leader knows nothing as old: the whole log goes', () => {
  assert.equal(divergence_point(-1, -1, 2, log_with([[2, 0]], 100)), 0);
});

/** A batch of `count` records stamped as a leader stores it: its base offset and leader epoch. */
function stored_batch(tag: string, base_offset: number, count: number, leader_epoch: number): Buffer {
  const batch = make_batch(tag, count);
  batch.writeBigInt64BE(BigInt(base_offset), 0);
  batch.writeInt32BE(leader_epoch, 12);
  return batch;
}

test('follower_copy_cut_across_a_leader_batch: a batch covering the log end replaces the tail', async () => {
  const storage = await open_sim(new SimFileIO());
  const log = await storage.create_partition('t-0');
  // Copied from a leader since deposed: 0..2 and 3..4, in epoch 1.
  await log.append(Buffer.concat([stored_batch('old', 0, 3, 1), stored_batch('old', 3, 2, 1)]), {
    replicated: true,
  });
  const replica = { name: 't-0', log, role: 'follower', epoch: 2, needs_truncation: false, truncating: null };
  const truncated: number[] = [];
  const host = { on_truncated: (_log: unknown, end: number) => truncated.push(end), on_replicated: () => undefined };
  const fetcher = new FollowerFetcher(2, 1, {} as never, host as never, SILENT_LOGGER, () => undefined, never, never);
  // The new leader's copy: 0..2 as before, then 3..7 in one batch of epoch 2, asked for from 5.
  const row = { records: stored_batch('new', 3, 5, 2), high_watermark: 8, log_start_offset: 0 };
  await (fetcher as unknown as { apply(r: unknown, row: unknown, e: number): Promise<void> }).apply(replica, row, 2);
  assert.equal(log.next_offset, 8, 'the leader batch taken whole');
  assert.deepEqual(truncated, [3], 'the tail from 3 was cut first');
  const { batches } = await log.read(3, 1 << 20, 'log_end');
  assert.deepEqual(values_of(batches), ['new:0', 'new:1', 'new:2', 'new:3', 'new:4']);
  await storage.close();
});

test('follower_append_failed_on_a_full_disk_leaves_no_producer_state: the copied batch is handed back', async () => {
  const io = new SimFileIO();
  const storage = await open_sim(io);
  const log = await storage.create_partition('t-0');
  await log.epochs.assign(1, 0);
  await log.append(stored_batch('before', 0, 3, 1), { replicated: true });
  const replica = { name: 't-0', log, role: 'follower', epoch: 1, needs_truncation: false, truncating: null };
  // The producer state as the broker keeps it: the base offsets of the batches it has learnt.
  let learnt: number[] = [];
  const host = {
    on_replicated: (_log: unknown, batches: Buffer) => learnt.push(Number(batches.readBigInt64BE(0))),
    on_truncated: (_log: unknown, end: number) => (learnt = learnt.filter((base) => base < end)),
  };
  const fetcher = new FollowerFetcher(2, 1, {} as never, host as never, SILENT_LOGGER, () => undefined, never, never);
  const apply = (row: unknown) =>
    (fetcher as unknown as { apply(r: unknown, row: unknown, e: number): Promise<void> }).apply(replica, row, 1);
  const row = { records: stored_batch('copied', 3, 2, 1), high_watermark: 3, log_start_offset: 0 };
  io.capacity_bytes = io.used_bytes() + 10;
  await assert.rejects(apply(row), DiskFullError);
  assert.equal(log.next_offset, 3);
  assert.deepEqual(learnt, [], 'a batch that never entered the log is not a producer batch');
  io.capacity_bytes = null;
  await apply(row);
  assert.equal(log.next_offset, 5);
  assert.deepEqual(learnt, [3]);
  await storage.close();
});
