// Where a follower cuts its log after asking the leader about its latest epoch (OffsetForLeaderEpoch),
// including the case where the leader never saw that epoch at all.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { divergence_point } from './follower_fetcher.ts';

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
