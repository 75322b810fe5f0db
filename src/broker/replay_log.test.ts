// Regression, found by the fault suite (CI seed 20261202): the broker that took over
// __consumer_offsets had not yet heard the high watermark its predecessor reached; the group
// coordinator loaded only up to its own, forgot a commit that had been acknowledged, and the
// group's committed offset went back. Coordinators now replay their log to its end.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../storage/index.ts';
import { SimFileIO } from '../storage/sim_file_io.ts';
import { open_sim } from '../../test/support/storage.ts';
import { OFFSETS_TOPIC, OffsetStore } from './offset_store.ts';
import { SHARE_STATE_TOPIC, ShareStateStore } from './queues/share_state_store.ts';

const entry = (offset: number) => ({ topic: 't', partition: 0, offset, metadata: null, leader_epoch: -1 });

test('coordinator_load_stopped_at_the_high_watermark: commits past it are replayed', async () => {
  const clock = new ManualClock();
  const storage = await open_sim(new SimFileIO());
  const log = await storage.create_partition(`${OFFSETS_TOPIC}-0`);
  log.high_watermark_mode = 'external'; // as on a replica: only replication moves it
  const before = new OffsetStore(log, clock);
  await before.commit('g', [entry(5)]);
  log.set_high_watermark(log.written_offset);
  await before.commit('g', [entry(9)]); // acknowledged by the old leader; this copy never heard so
  assert.ok(log.high_watermark < log.written_offset);
  const after = new OffsetStore(log, clock);
  await after.load();
  assert.equal(after.get('g', 't', 0)?.offset, 9);
  await storage.close();
});

test('share state past the high watermark is replayed too', async () => {
  const clock = new ManualClock();
  const storage = await open_sim(new SimFileIO());
  const log = await storage.create_partition(`${SHARE_STATE_TOPIC}-0`);
  log.high_watermark_mode = 'external';
  const state = { group: 'g', topic: 't', partition: 0, start_offset: 7, end_offset: 7, runs: [], snapshot: true };
  await new ShareStateStore(log, clock).write([state]);
  assert.equal(log.high_watermark, 0);
  const loaded = await new ShareStateStore(log, clock).load();
  assert.equal(loaded[0]?.start_offset, 7);
  await storage.close();
});
