// Makes share-partition changes durable: partitions changed since the last write are collected
// and written together, one write at a time, as a delta or (when the store asks) a snapshot.
import type { ShareStateStore, ShareStateWrite } from './share_state_store.ts';
import { key_of, type PartitionState, type ShareGroup } from './share_group.ts';

export class ShareStateWriter {
  /** Partitions changed since the last state write. */
  private readonly dirty = new Map<string, { group: ShareGroup; state: PartitionState }>();
  private writing: Promise<void> = Promise.resolve();
  private queued_write: Promise<void> | null = null;

  constructor(private readonly store: ShareStateStore) {}

  mark_dirty(group: ShareGroup, state: PartitionState): void {
    this.dirty.set(`${group.id}\u0000${key_of(state.topic, state.partition)}`, { group, state });
  }

  /**
   * Makes every change made so far durable: joins the write that has not started yet, or queues
   * one after the running write (which may have taken its deltas before these changes).
   */
  persist(): Promise<void> {
    if (this.queued_write) return this.queued_write;
    const next = this.writing.then(() => {
      this.queued_write = null;
      return this.write_dirty();
    });
    this.queued_write = next;
    this.writing = next.catch(() => undefined);
    return next;
  }

  private async write_dirty(): Promise<void> {
    if (this.dirty.size === 0) return;
    const taken = [...this.dirty];
    const writes: ShareStateWrite[] = taken.map(([, { group, state }]) => this.write_of(group, state));
    this.dirty.clear();
    try {
      await this.store.write(writes);
    } catch (error) {
      // The deltas were taken and not written (a full disk): the next write of these partitions
      // is a whole snapshot, so nothing of this change is missing from the log.
      for (const write of writes) this.store.snapshot_next(write);
      for (const [key, entry] of taken) if (!this.dirty.has(key)) this.dirty.set(key, entry);
      throw error;
    }
  }

  private write_of(group: ShareGroup, state: PartitionState): ShareStateWrite {
    const key = { group: group.id, topic: state.topic, partition: state.partition };
    const delta = state.share.take_delta();
    if (this.store.wants_snapshot(key)) {
      const { start_offset, end_offset, runs } = state.share.snapshot();
      return { ...key, start_offset, end_offset, runs, snapshot: true };
    }
    const end_offset = state.share.end_offset;
    return { ...key, start_offset: delta.start_offset, end_offset, runs: delta.runs, snapshot: false };
  }
}
