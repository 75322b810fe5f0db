// Eligible replicas: who may lead without losing an acknowledged (acks=all) record once the ISR
// has fallen below min.insync.replicas, and a replica whose log recovery cut short giving up its
// place. Pure functions; the fault suite's run that lost writes to a cut log is replayed in
// test/cluster/cut_log.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { disown, elect_eligible, with_isr } from './eligible_replicas.ts';
import { next_partition_state } from './controller.ts';
import type { PartitionState } from './model.ts';

const state = (leader: number, isr: number[], elr?: number[]): PartitionState => ({
  leader,
  leader_epoch: 4,
  isr,
  replicas: [1, 2, 3],
  ...(elr ? { elr } : {}),
});
const live = (...ids: number[]) => new Set(ids);

test('replicas leaving an ISR that falls below min.insync.replicas become eligible; others do not', () => {
  assert.deepEqual(with_isr(state(1, [1, 2, 3]), [1, 2], 2), state(1, [1, 2]), 'still at the minimum');
  assert.deepEqual(with_isr(state(1, [1, 2]), [1], 2), state(1, [1], [2]), 'below it: 2 holds every ack');
  assert.deepEqual(with_isr(state(1, [1, 2, 3]), [1], 2), state(1, [1], [2, 3]), 'both left at once');
  assert.deepEqual(with_isr(state(1, [1], [2]), [1, 3], 2), state(1, [1, 3]), 'back at the minimum: none');
  assert.deepEqual(with_isr(state(1, [1, 2, 3]), [1], 1), state(1, [1]), 'min.insync.replicas 1: never');
});

test('with no live ISR member, a live eligible replica leads; the dead ISR member becomes eligible', () => {
  const next = next_partition_state(state(1, [1], [2, 3]), live(3), false, 2);
  assert.deepEqual(next, { leader: 3, leader_epoch: 5, isr: [3], elr: [2, 1], replicas: [1, 2, 3] });
  assert.equal(elect_eligible(state(1, [1], [2]), live(3), 2), null, 'no live eligible replica');
  assert.deepEqual(
    next_partition_state(state(1, [1], [2]), live(3), false, 2),
    { leader: -1, leader_epoch: 5, isr: [1], elr: [2], replicas: [1, 2, 3] },
    'then the partition waits',
  );
});

test('a replica whose log was cut short leaves the ISR and its leadership, unless no other could lead', () => {
  assert.deepEqual(disown(state(1, [1], [2, 3]), 1), {
    leader: -1,
    leader_epoch: 5,
    isr: [],
    elr: [2, 3],
    replicas: [1, 2, 3],
  });
  assert.deepEqual(disown(state(2, [2, 1, 3]), 1), state(2, [2, 3]));
  assert.deepEqual(disown(state(2, [2], [1]), 1), state(2, [2]));
  assert.equal(disown(state(1, [1]), 1), null, 'its copy is the best there is');
  assert.equal(disown(state(2, [2, 3]), 1), null, 'not in sync anyway');
  const after = disown(state(1, [1], [2]), 1)!;
  assert.deepEqual(next_partition_state(after, live(1, 2), false, 2), {
    leader: 2,
    leader_epoch: 6,
    isr: [2],
    replicas: [1, 2, 3],
  });
});
