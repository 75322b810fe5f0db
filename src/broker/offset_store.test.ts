// Regression (finding 37): a write to a coordinator's log that had become a follower copy, or
// was closed as its leadership moved, reached the client as NOT_LEADER_OR_FOLLOWER, on which
// clients do not look the coordinator up again. The offset store answers not_coordinator.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../storage/index.ts';
import { SimFileIO } from '../storage/sim_file_io.ts';
import { open_sim } from '../../test/support/storage.ts';
import { BrokerError } from '../core/errors.ts';
import { OFFSETS_TOPIC, OffsetStore } from './offset_store.ts';

const entry = { topic: 't', partition: 0, offset: 5, metadata: null, leader_epoch: -1 };
const not_coordinator = (error: unknown) => error instanceof BrokerError && error.kind === 'not_coordinator';

test('offsets_log_became_a_follower_answered_not_leader: a commit is told not_coordinator', async () => {
  const storage = await open_sim(new SimFileIO());
  const log = await storage.create_partition(`${OFFSETS_TOPIC}-0`);
  const store = new OffsetStore(log, new ManualClock());
  log.replica_only = true;
  await assert.rejects(() => store.commit('g', [entry]), not_coordinator);
  await assert.rejects(() => store.commit_in_txn('g', { producer_id: 1, producer_epoch: 0 }, [entry]), not_coordinator);
  assert.equal(store.get('g', 't', 0), undefined);
  await storage.close();
});
