// Coordinators follow the internal partitions this broker leads. Regression, found by the fault
// suite: a broker whose disk was full took over __share_group_state, the share coordinator's load
// failed to write the state it restores, and the rejection went unhandled and stopped the broker.
// Now a failed start is logged and tried again while the broker still leads the partition.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock } from '../storage/index.ts';
import { SimFileIO } from '../storage/sim_file_io.ts';
import { open_sim } from '../../test/support/storage.ts';
import { Coordinators } from './coordinators.ts';
import { GROUP_SETTINGS_DEFAULT } from './group_coordinator.ts';
import { DELAYED_SETTINGS_DEFAULT } from './delayed/delayed_delivery.ts';
import { SHARE_GROUP_SETTINGS_DEFAULT } from './queues/group_config.ts';
import { SHARE_STATE_TOPIC, ShareStateStore } from './queues/share_state_store.ts';
import type { TopicManager } from './topics.ts';

test('full_disk_while_taking_over_coordinators_keeps_the_broker_up: started once space returns', async () => {
  const io = new SimFileIO();
  const clock = new ManualClock();
  const storage = await open_sim(io);
  const log = await storage.create_partition(`${SHARE_STATE_TOPIC}-0`);
  const state = { group: 'g', topic: 'orders', partition: 0, start_offset: 0, end_offset: 0, runs: [], snapshot: true };
  await new ShareStateStore(log, clock).write([state]);
  const warnings: string[] = [];
  const logger = {
    info: () => undefined,
    warn: (_: object, message: string) => void warnings.push(message),
    error: () => undefined,
  };
  const coordinators = new Coordinators({
    node_id: 1,
    // Only what the share coordinator's load asks: does the state's topic exist?
    topics: { get: () => ({ name: 'orders', partitions: 1, configs: {} }) } as unknown as TopicManager,
    logger,
    clock,
    monotonic_clock: clock,
    reader: () => Promise.reject(new Error('not read here')),
    reader_now: () => {
      throw new Error('not read here');
    },
    append: () => Promise.reject(new Error('not appended here')),
    ensure_topic: () => Promise.resolve(),
    group_configs: () => ({}),
    allocate_producer_id: () => Promise.reject(new Error('no producer ids here')),
    write_marker: () => Promise.reject(new Error('no markers here')),
    settings: {
      groups: GROUP_SETTINGS_DEFAULT,
      shares: SHARE_GROUP_SETTINGS_DEFAULT,
      delayed: DELAYED_SETTINGS_DEFAULT,
      transactions: { timeout_max_ms: 900_000, id_expiration_ms: 604_800_000, checks_max: 15, version: 2 },
    },
  });
  io.capacity_bytes = io.used_bytes(); // the disk is full
  const activation = coordinators.on_role(SHARE_STATE_TOPIC, 0, 'leader', log);
  while (!warnings.includes('coordinator could not start here; trying again'))
    await new Promise((resolve) => setTimeout(resolve, 10));
  assert.equal(coordinators.share_host, null, 'not started on a full disk');
  io.capacity_bytes = null;
  await activation;
  assert.ok(coordinators.share_host, 'started once the disk had room');
  await coordinators.on_role(SHARE_STATE_TOPIC, 0, 'follower', log);
  await storage.close();
});
