import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ShareStateWriter } from './share_state_writer.ts';
import { SharePartition } from './share_partition.ts';
import { ReadAhead } from './read_ahead.ts';
import type { PartitionState, ShareGroup } from './share_group.ts';
import type { ShareStateKey, ShareStateStore, ShareStateWrite } from './share_state_store.ts';

/** A store that remembers what it was asked to write and refuses while `full`. */
class FakeStore {
  full = false;
  written: ShareStateWrite[] = [];
  private readonly snapshotted = new Set<string>();
  wants_snapshot(key: ShareStateKey): boolean {
    return !this.snapshotted.has(`${key.group}/${key.topic}/${key.partition}`);
  }
  snapshot_next(key: ShareStateKey): void {
    this.snapshotted.delete(`${key.group}/${key.topic}/${key.partition}`);
  }
  async write(writes: readonly ShareStateWrite[]): Promise<void> {
    if (this.full) throw new Error('ENOSPC');
    for (const w of writes) if (w.snapshot) this.snapshotted.add(`${w.group}/${w.topic}/${w.partition}`);
    this.written.push(...writes);
  }
}

const FAILED_WRITE =
  'a state write that failed is written again, as a snapshot (share_state_delta_lost_to_a_failed_write)';

test(FAILED_WRITE, async () => {
  const store = new FakeStore();
  const writer = new ShareStateWriter(store as unknown as ShareStateStore);
  const settings = {
    delivery_count_limit: 3,
    record_lock_duration_ms: 1000,
    records_in_flight_max: 50,
    retry_backoff_ms: [100],
  };
  const share = new SharePartition(0, settings);
  const state = { topic: 't', partition: 0, share, ahead: new ReadAhead(0), letters: [] } as unknown as PartitionState;
  const group = { id: 'g' } as ShareGroup;
  writer.mark_dirty(group, state);
  await writer.persist();
  assert.equal(store.written.at(-1)?.snapshot, true, 'the first write is a snapshot');

  share.acquire('m', 5, 5, 0);
  writer.mark_dirty(group, state);
  store.full = true;
  await assert.rejects(writer.persist(), /ENOSPC/);
  store.full = false;
  await writer.persist(); // nothing newly changed: the failed change alone is written again
  const again = store.written.at(-1)!;
  assert.equal(store.written.length, 2);
  assert.equal(again.snapshot, true, 'its delta was taken by the failed write: a snapshot carries it');
  assert.deepEqual(
    again.runs.map((r) => [r.first_offset, r.last_offset]),
    [[0, 4]],
    'the acquired records are in it',
  );
});
