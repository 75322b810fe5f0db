// The storage hooks replication builds on: copies of a leader's batches keep their offsets and
// epochs, truncation cuts a divergent tail at a batch start, the leader epoch cache survives a
// restart, and the ack gate holds appends back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SimFileIO } from './index.ts';
import { make_batch, open_sim, read_all, values_of } from '../../test/support/storage.ts';

test('a follower copy keeps offsets and epochs; a gap is refused', async () => {
  const io = new SimFileIO();
  const storage = await open_sim(io);
  const leader = await storage.create_partition('t-0');
  const follower = await storage.create_partition('t-1');
  leader.leader_epoch = 4;
  await leader.append(make_batch('a', 3));
  await leader.append(make_batch('b', 2));
  const { batches } = await leader.read(0, 1 << 20);
  await follower.append(Buffer.concat(batches), { replicated: true });
  assert.equal(follower.next_offset, 5);
  const copied = await follower.read(0, 1 << 20, 'log_end');
  assert.deepEqual(Buffer.concat(copied.batches), Buffer.concat(batches), 'byte-identical copy');
  assert.equal(copied.batches[0]!.readInt32BE(12), 4, 'leader epoch kept');
  await assert.rejects(follower.append(batches[0]!, { replicated: true }), /does not continue the log/);
  await storage.close();
});

test('truncate_to cuts at a batch start, drops later segments and epochs, and survives a restart', async () => {
  const io = new SimFileIO();
  const storage = await open_sim(io, {}, { log_config: () => ({ segment_bytes: 300 }) });
  const log = await storage.create_partition('t-0', { segment_bytes: 300 });
  for (let epoch = 0; epoch < 4; epoch++) {
    await log.epochs.assign(epoch, log.next_offset);
    log.leader_epoch = epoch;
    for (let i = 0; i < 3; i++) await log.append(make_batch(`e${epoch}b${i}`, 2));
  }
  assert.equal(log.next_offset, 24);
  assert.ok(log.segment_count > 2, 'several segments');
  const end = await log.truncate_to(13); // inside the batch 12..13
  assert.equal(end, 12);
  assert.equal(log.next_offset, 12);
  assert.deepEqual(log.epochs.list(), [
    { epoch: 0, start_offset: 0 },
    { epoch: 1, start_offset: 6 },
  ]);
  assert.deepEqual(log.epochs.end_offset_for(1, log.next_offset), { epoch: 1, end_offset: 12 });
  assert.deepEqual(
    log.epochs.end_offset_for(3, log.next_offset),
    { epoch: 1, end_offset: 12 },
    'an unknown later epoch maps to the latest lower one',
  );
  await log.epochs.assign(5, 12);
  log.leader_epoch = 5;
  await log.append(make_batch('new', 2));
  await storage.close();
  const reopened = await open_sim(io, {}, { log_config: () => ({ segment_bytes: 300 }) });
  const again = reopened.require('t-0');
  const values = (await read_all(again)).map((r) => r.value);
  assert.equal(values.length, 14);
  assert.deepEqual(values.slice(10), ['e1b2:0', 'e1b2:1', 'new:0', 'new:1']);
  assert.deepEqual(again.epochs.list(), [
    { epoch: 0, start_offset: 0 },
    { epoch: 1, start_offset: 6 },
    { epoch: 5, start_offset: 12 },
  ]);
  await reopened.close();
});

test('truncating to a segment boundary and to the start', async () => {
  const io = new SimFileIO();
  const storage = await open_sim(io);
  const log = await storage.create_partition('t-0', { segment_bytes: 200 });
  for (let i = 0; i < 6; i++) await log.append(make_batch(`b${i}`, 1));
  const bases = log.segment_base_offsets();
  assert.ok(bases.length >= 2);
  assert.equal(await log.truncate_to(bases[1]!), bases[1]);
  assert.equal(log.segment_base_offsets().length, 2, 'the segment at the cut is kept, empty');
  assert.equal(await log.truncate_to(0), 0);
  await log.append(make_batch('again', 1));
  assert.deepEqual(values_of((await log.read(0, 1 << 20)).batches), ['again:0']);
  await storage.close();
});

test('the ack gate holds an append until it resolves; local_ack skips it', async () => {
  const io = new SimFileIO();
  const storage = await open_sim(io);
  const log = await storage.create_partition('t-0');
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  log.ack_gate = async (result) => {
    await released;
    return result;
  };
  let gated_done = false;
  const gated = log.append(make_batch('a', 1)).then(() => (gated_done = true));
  const local = await log.append(make_batch('b', 1), { local_ack: true });
  assert.equal(local.base_offset, 1);
  assert.equal(gated_done, false);
  release();
  await gated;
  await storage.close();
});

test('a follower copy refuses appends that are not replicated', async () => {
  const io = new SimFileIO();
  const storage = await open_sim(io);
  const log = await storage.create_partition('t-0');
  log.replica_only = true;
  await assert.rejects(log.append(make_batch('a', 1)), /takes appends only from its leader/);
  const leader = await storage.create_partition('t-1');
  await leader.append(make_batch('a', 1));
  const { batches } = await leader.read(0, 1 << 20);
  await log.append(Buffer.concat(batches), { replicated: true });
  assert.equal(log.next_offset, 1);
  await storage.close();
});

const RESTART_AT = 'restart_at empties a follower behind the leader and starts it at the leader start';

test(`${RESTART_AT}, across a power loss`, async () => {
  const io = new SimFileIO();
  const storage = await open_sim(io, {}, { log_config: () => ({ segment_bytes: 300 }) });
  const log = await storage.create_partition('t-0', { segment_bytes: 300 });
  await log.epochs.assign(0, 0);
  for (let i = 0; i < 6; i++) await log.append(make_batch(`old${i}`, 2));
  assert.ok(log.segment_count > 1, 'several segments');
  await log.restart_at(40);
  assert.equal(log.log_start_offset, 40);
  assert.equal(log.next_offset, 40);
  assert.equal(log.segment_count, 1);
  assert.deepEqual(log.epochs.list(), [], 'no epoch of the old log is left');
  await log.restart_at(37); // still empty: a batch from 37 may hold the leader's log start
  await log.restart_at(40);
  const leader = await storage.create_partition('t-1');
  await leader.append(make_batch('x', 40)); // offsets 0..39: the one that follows is at 40
  const next = await leader.append(make_batch('new', 2));
  const { batches } = await leader.read(next.base_offset, 1 << 20);
  await log.append(Buffer.concat(batches), { replicated: true });
  await assert.rejects(log.restart_at(41), /would drop records/);
  io.crash({ keep_unsynced: false });
  const reopened = await open_sim(io, {}, { log_config: () => ({ segment_bytes: 300 }) });
  const again = reopened.require('t-0');
  assert.equal(again.log_start_offset, 40);
  assert.deepEqual(
    (await read_all(again)).map((r) => r.value),
    ['new:0', 'new:1'],
  );
  await reopened.close();
});
