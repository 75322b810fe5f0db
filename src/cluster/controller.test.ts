// The controller's decision for one partition, given the live brokers: elections stay within the
// ISR (unless unclean election is on), the epoch rises with every leader change, the ISR never
// empties, and a reassignment completes only once its new replicas are all in sync.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cancelled_reassignment, next_partition_state, preferred_leadership } from './controller.ts';
import type { PartitionState } from './model.ts';

const state = (leader: number, isr: number[], replicas = [1, 2, 3], leader_epoch = 4): PartitionState => ({
  leader,
  leader_epoch,
  isr,
  replicas,
});
const live = (...ids: number[]) => new Set(ids);

test('a live leader with a live ISR needs nothing', () => {
  assert.equal(next_partition_state(state(1, [1, 2, 3]), live(1, 2, 3), false), null);
});

test('dead followers leave the ISR; the leader and epoch stay', () => {
  assert.deepEqual(next_partition_state(state(1, [1, 2, 3]), live(1, 3), false), state(1, [1, 3]));
});

test('a dead leader is replaced by the first live ISR member in replica order, with the epoch raised', () => {
  assert.deepEqual(next_partition_state(state(1, [3, 1, 2]), live(2, 3), false), {
    leader: 2,
    leader_epoch: 5,
    isr: [3, 2],
    replicas: [1, 2, 3],
  });
});

test('never outside the ISR: with no live ISR member the partition has no leader and keeps its ISR', () => {
  const next = next_partition_state(state(1, [1]), live(2, 3), false);
  assert.deepEqual(next, { leader: -1, leader_epoch: 5, isr: [1], replicas: [1, 2, 3] });
  assert.equal(next_partition_state(next!, live(2, 3), false), null, 'and stays so');
  assert.deepEqual(
    next_partition_state(next!, live(1, 2, 3), false),
    { leader: 1, leader_epoch: 6, isr: [1], replicas: [1, 2, 3] },
    'until that replica returns',
  );
});

test('unclean election, when enabled, takes any live replica', () => {
  assert.deepEqual(next_partition_state(state(1, [1]), live(3), true), {
    leader: 3,
    leader_epoch: 5,
    isr: [3],
    replicas: [1, 2, 3],
  });
});

test('a reassignment switches to its target once every target replica is in sync', () => {
  const moving: PartitionState = {
    leader: 1,
    leader_epoch: 4,
    isr: [1, 2, 3],
    replicas: [1, 2, 3, 4],
    target_replicas: [4, 2, 3],
  };
  assert.equal(next_partition_state(moving, live(1, 2, 3, 4), false), null, 'broker 4 is not in sync yet');
  const synced = { ...moving, isr: [1, 2, 3, 4] };
  assert.deepEqual(
    next_partition_state(synced, live(1, 2, 3, 4), false),
    { leader: 4, leader_epoch: 5, isr: [2, 3, 4], replicas: [4, 2, 3] },
    'the leaving leader hands over',
  );
  const keeps_leader = { ...synced, target_replicas: [1, 2, 4] };
  assert.deepEqual(next_partition_state(keeps_leader, live(1, 2, 3, 4), false), {
    leader: 1,
    leader_epoch: 4,
    isr: [1, 2, 4],
    replicas: [1, 2, 4],
  });
});

test('leadership goes back to the preferred replica only when it is alive, in sync and no reassignment runs', () => {
  assert.deepEqual(preferred_leadership(state(2, [2, 3, 1]), live(1, 2, 3)), state(1, [2, 3, 1], [1, 2, 3], 5));
  assert.equal(preferred_leadership(state(1, [1, 2, 3]), live(1, 2, 3)), null, 'already leading');
  assert.equal(preferred_leadership(state(2, [2, 3]), live(1, 2, 3)), null, 'not in sync yet');
  assert.equal(preferred_leadership(state(2, [2, 3, 1]), live(2, 3)), null, 'not alive');
  assert.equal(preferred_leadership(state(-1, [1]), live(2, 3)), null, 'no leader: elections first');
  assert.equal(
    preferred_leadership({ ...state(2, [1, 2, 3], [1, 2, 3, 4]), target_replicas: [4, 2, 3] }, live(1, 2, 3, 4)),
    null,
    'a reassignment picks its own',
  );
});

test('a cancelled reassignment goes back to the replicas from before; it elects only if the leader was new', () => {
  const moving: PartitionState = {
    leader: 1,
    leader_epoch: 4,
    isr: [1, 2, 3, 4],
    replicas: [1, 2, 3, 4],
    target_replicas: [4, 2, 3],
    original_replicas: [1, 2, 3],
  };
  assert.deepEqual(cancelled_reassignment(moving, live(1, 2, 3, 4)), {
    leader: 1,
    leader_epoch: 4,
    isr: [1, 2, 3],
    replicas: [1, 2, 3],
  });
  const led_by_new = { ...moving, leader: 4 };
  assert.deepEqual(cancelled_reassignment(led_by_new, live(1, 2, 3, 4)), {
    leader: 1,
    leader_epoch: 5,
    isr: [1, 2, 3],
    replicas: [1, 2, 3],
  });
  assert.equal(
    cancelled_reassignment({ ...led_by_new, isr: [4] }, live(1, 2, 3, 4)),
    null,
    'no original replica in sync: refused',
  );
  const { original_replicas: _o, ...older } = moving;
  assert.equal(cancelled_reassignment(older, live(1, 2, 3, 4)), null, 'the replicas from before not recorded: refused');
});
