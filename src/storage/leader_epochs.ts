// The leader epoch cache of one partition: for each leader epoch, the first offset written in it.
// Replicas compare these after a leader change to find where their logs diverge (a follower asks
// the new leader where its own latest epoch ends and truncates there). Kept in the partition's
// folder as a small JSON file, replaced atomically, and written before any batch of a new epoch is
// appended, so the file never misses an epoch present in the log.
import path from 'node:path';
import type { FileIO } from './file_io.ts';
import { read_whole_file, replace_file_atomically } from './file_util.ts';
import { assert } from './errors.ts';

export const LEADER_EPOCHS_FILE = 'leader-epochs.json';

export interface EpochEntry {
  epoch: number;
  start_offset: number;
}

export class LeaderEpochCache {
  private entries: EpochEntry[] = [];
  private readonly file: string;
  private saves: Promise<void> = Promise.resolve();

  constructor(
    private readonly io: FileIO,
    dir: string,
  ) {
    this.file = path.join(dir, LEADER_EPOCHS_FILE);
  }

  /** Reads the file; entries starting past `log_end` belong to batches that were never written. */
  async load(log_end: number): Promise<void> {
    const bytes = await read_whole_file(this.io, this.file);
    const parsed = bytes ? (JSON.parse(bytes.toString('utf8')) as { entries: EpochEntry[] }) : { entries: [] };
    this.entries = parsed.entries.filter((entry) => entry.start_offset <= log_end);
  }

  get latest_epoch(): number {
    return this.entries.length === 0 ? -1 : this.entries[this.entries.length - 1]!.epoch;
  }

  list(): EpochEntry[] {
    return this.entries.map((entry) => ({ ...entry }));
  }

  /**
   * Records that `epoch` begins at `start_offset`. Entries it contradicts (a later start, or an
   * epoch not lower) are dropped first. Resolves once the file holds the change.
   */
  assign(epoch: number, start_offset: number): Promise<void> {
    const last = this.entries[this.entries.length - 1];
    if (last && last.epoch === epoch && last.start_offset <= start_offset) return this.saves;
    assert(
      !last || epoch >= last.epoch || start_offset <= last.start_offset,
      () => `epoch ${epoch} at ${start_offset} is older than epoch ${last?.epoch}`,
    );
    this.entries = this.entries.filter((entry) => entry.epoch < epoch && entry.start_offset < start_offset);
    this.entries.push({ epoch, start_offset });
    return this.save();
  }

  /**
   * Where `epoch` ends in this log: the start of the next higher epoch, or `log_end` when it is the
   * latest. For an epoch this log never had, the answer names the highest lower epoch it has
   * (Kafka's OffsetForLeaderEpoch rule); -1/-1 when it has none.
   */
  end_offset_for(epoch: number, log_end: number): { epoch: number; end_offset: number } {
    let found = -1;
    for (let i = 0; i < this.entries.length; i++) if (this.entries[i]!.epoch <= epoch) found = i;
    if (found < 0) return { epoch: -1, end_offset: -1 };
    const next = this.entries[found + 1];
    return { epoch: this.entries[found]!.epoch, end_offset: next ? next.start_offset : log_end };
  }

  /** Drops epochs that begin at or past `end` (the log was truncated there). */
  truncate_to(end: number): Promise<void> {
    const kept = this.entries.filter((entry) => entry.start_offset < end);
    if (kept.length === this.entries.length) return this.saves;
    this.entries = kept;
    return this.save();
  }

  private save(): Promise<void> {
    const content = Buffer.from(`${JSON.stringify({ entries: this.entries })}\n`, 'utf8');
    const next = this.saves.then(() => replace_file_atomically(this.io, this.file, content));
    this.saves = next.catch(() => undefined);
    return next;
  }
}
