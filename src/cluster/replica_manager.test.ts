// Found looking into the acknowledged writes the fault suite lost in seed 505 (a replica named in
// the ISR was elected without a record acknowledged before): a leader that had just written an ISR
// expansion to etcd applied a view read before that write landed, went back to the ISR without
// the new member, and could move its high watermark past records that member lacked, while etcd
// named it in sync and so electable. Views older than the leader's own write are now ignored.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SimFileIO } from '../storage/sim_file_io.ts';
import { ManualClock, SILENT_LOGGER, type PartitionLog } from '../storage/index.ts';
import { make_batch, open_sim } from '../../test/support/storage.ts';
import { ReplicaManager } from './replica_manager.ts';
import { REPLICA_SETTINGS_DEFAULT, type ReplicaHost } from './replica.ts';
import { empty_view, partition_key, type PartitionState } from './model.ts';
import type { EtcdStore } from './etcd_store.ts';
import type { Membership } from './membership.ts';
import type { PeerDialer } from './peer_dialer.ts';

/** Resolves once the log has made `end` durable. */
async function flushed(log: PartitionLog, end: number): Promise<void> {
  while (log.flushed_offset < end) await new Promise((resolve) => setTimeout(resolve, 1));
}

test('stale_view_after_an_isr_expansion_undid_it: the high watermark waits for the new member', async () => {
  const storage = await open_sim(new SimFileIO());
  const log = await storage.create_partition('t-0');
  let revision = 10;
  const store = {
    update_partition: async () => String(++revision),
  } as unknown as EtcdStore;
  const host: ReplicaHost = {
    ensure_log: async () => log,
    durable_end: (l) => l.written_offset,
    min_insync_replicas: () => 2,
    on_role: () => undefined,
    on_replicated: () => undefined,
    on_truncated: () => undefined,
    drop_log: async () => undefined,
    suspect_copies: () => [],
  };
  const clock = new ManualClock();
  const manager = new ReplicaManager(
    1,
    store,
    { valid: true } as unknown as Membership,
    host,
    REPLICA_SETTINGS_DEFAULT,
    SILENT_LOGGER,
    () => undefined,
    (() => Promise.reject(new Error('no peers here'))) as unknown as PeerDialer,
    clock,
  );
  const before: PartitionState = { replicas: [1, 2, 3], leader: 1, leader_epoch: 1, isr: [1, 2] };
  const view_of = (state: PartitionState, mod_revision: string) => {
    const view = empty_view();
    view.partitions.set(partition_key('t', 0), { value: state, mod_revision });
    return view;
  };
  const stale = view_of(before, '10');
  await manager.apply_view(stale);
  const first = log.append(make_batch('a', 2)); // acknowledged once the ISR holds it
  await flushed(log, 2);
  manager.replica_fetch(2, 't', 0, 2, 1);
  assert.equal(log.high_watermark, 2);
  await first;
  manager.replica_fetch(3, 't', 0, 2, 1); // caught up: the leader writes ISR [1, 2, 3]
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(manager.get('t', 0)!.state.isr, [1, 2, 3]);

  await manager.apply_view(stale); // read before the write landed
  assert.deepEqual(manager.get('t', 0)!.state.isr, [1, 2, 3], 'the expansion stands');
  const second = log.append(make_batch('b', 2));
  await flushed(log, 4);
  manager.replica_fetch(2, 't', 0, 4, 1);
  assert.equal(log.high_watermark, 2, 'not past what broker 3 lacks');
  manager.replica_fetch(3, 't', 0, 4, 1);
  assert.equal(log.high_watermark, 4);
  await second;
  manager.close();
  await storage.close();
});
