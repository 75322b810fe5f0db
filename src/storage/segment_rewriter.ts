// Rewriting a closed segment's data file (log compaction): the caller reads its batches and writes
// the ones it keeps, each as it was or with fewer records, offsets unchanged; the new file then
// replaces the old one. Storage knows nothing of keys: what to keep is the caller's (the broker's
// cleaner). Crash safety, step by step:
//   1. the new data goes to <base>.log.cleaned, fsynced;      crash: the copy is deleted at open
//   2. the segment's index files are deleted;                 crash: they are rebuilt from the old file
//   3. the copy is renamed over <base>.log, directory fsynced; crash: old or new file, whole either way
//   4. the indexes are rebuilt from the new file and saved.
// Reads are held back (the segment files' gate) from step 2 to 4, so no read pairs an index
// position with the other file. Only a segment wholly below the high watermark and the flushed
// offset is rewritten: nothing that can still be truncated or is not yet durable.
import type { LogContext } from './log_context.ts';
import { assert, os_error_code } from './errors.ts';
import { write_all } from './file_util.ts';
import { batch_base_offset, batch_last_offset, batch_size_at } from '../format/batch_layout.ts';
import type { Segment } from './segment.ts';
import { CLEANED_SUFFIX, type SegmentFiles } from './segment_files.ts';
import { scan_segment } from './segment_io.ts';

/** What a cleaner sees of a closed segment. */
export interface SegmentView {
  base_offset: number;
  /** The next segment's base offset: every offset below it and from base_offset on is this segment's. */
  end_offset: number;
  size_bytes: number;
  /** The largest batch timestamp in the segment; -1 when unknown. */
  max_timestamp_ms: number;
}

export interface RewriteResult {
  bytes_before: number;
  bytes_after: number;
  /** False when nothing changed, or the segment went meanwhile (retention, truncation). */
  swapped: boolean;
}

/** What the rewriter asks of its partition log. */
export interface RewrittenLog {
  /** The offset below which the log is durable and will not be truncated (high watermark, flushed). */
  stable_offset(): number;
  index_interval_bytes(): number;
  /** Forgets the batches below `offset` that the log keeps in memory (the tail cache). */
  drop_cached_below(offset: number): void;
}

export class SegmentRewriter {
  /**
   * Where the log's cleaner stopped: the segments below were compacted against every key they
   * hold (0: unknown, all dirty). Kept in cleaner-offset-checkpoint, so a restart does not map
   * them again; a log truncated below it only means less compaction, never a wrong one.
   */
  cleaned_below = 0;

  constructor(
    private readonly ctx: LogContext,
    private readonly files: SegmentFiles,
    private readonly log: RewrittenLog,
  ) {}

  /** Records where the cleaner stopped, durably. */
  async mark_cleaned_below(offset: number): Promise<void> {
    this.cleaned_below = offset;
    await this.ctx.persist_cleaner_offsets();
  }

  /** The closed segments wholly below the stable offset and `offset_limit`, oldest first. */
  async closed_below(offset_limit: number): Promise<SegmentView[]> {
    const limit = Math.min(offset_limit, this.log.stable_offset());
    const views: SegmentView[] = [];
    const list = this.files.list;
    for (let i = 0; i + 1 < list.length && list[i + 1]!.base_offset <= limit; i++) {
      const segment = list[i]!;
      await this.files.ensure_indexes(segment);
      views.push({
        base_offset: segment.base_offset,
        end_offset: list[i + 1]!.base_offset,
        size_bytes: segment.size_bytes,
        max_timestamp_ms: segment.max_timestamp_ms,
      });
    }
    return views;
  }

  /** The batches of a closed segment in offset order, about `chunk_bytes` at a time (whole batches). */
  async *batches(view: SegmentView, chunk_bytes: number): AsyncGenerator<Buffer[]> {
    let offset = view.base_offset;
    while (offset < view.end_offset) {
      const batches = await this.files.read(offset, chunk_bytes, view.end_offset);
      if (batches.length === 0) return;
      yield batches;
      offset = batch_last_offset(batches.at(-1)!, 0) + 1;
    }
  }

  /**
   * Replaces a closed segment's data by what `fill` writes through `write`: batches of the segment,
   * in offset order, whole or with fewer records. Resolves once the new file is in place; when
   * `fill` answers false (nothing changed), the copy is dropped and the segment left as it was.
   */
  async rewrite(
    view: SegmentView,
    fill: (write: (batches: readonly Buffer[]) => Promise<void>) => Promise<boolean>,
  ): Promise<RewriteResult> {
    const segment = this.segment_of(view);
    const copy = `${segment.log_path}${CLEANED_SUFFIX}`;
    const { io } = this.ctx;
    const fd = await io.open(copy, 'create');
    let bytes_after = 0;
    let changed = false;
    try {
      await io.ftruncate(fd, 0);
      let next = view.base_offset;
      changed = await fill(async (batches) => {
        for (let at = 0; at < batches.length; at++) {
          const batch = batches[at]!;
          const base = batch_base_offset(batch, 0);
          assert(
            base >= next && batch_last_offset(batch, 0) < view.end_offset,
            () => `rewritten batch ${base} out of place`,
          );
          assert(batch_size_at(batch, 0) === batch.length, 'a rewritten batch is one whole batch');
          next = batch_last_offset(batch, 0) + 1;
        }
        await write_all(io, fd, batches, bytes_after);
        for (const batch of batches) bytes_after += batch.length;
      });
      if (changed) await io.fdatasync(fd);
    } catch (error) {
      await io.close(fd).catch(() => undefined);
      await unlink_if_there(io, copy).catch(() => undefined);
      throw error;
    }
    await io.close(fd);
    if (!changed) {
      await io.unlink(copy);
      return { bytes_before: view.size_bytes, bytes_after: view.size_bytes, swapped: false };
    }
    const swapped = await this.files.gate.alone(() => this.swap(segment, view, copy));
    return { bytes_before: view.size_bytes, bytes_after, swapped };
  }

  private segment_of(view: SegmentView): Segment {
    const segment = this.files.list.find((s) => s.base_offset === view.base_offset);
    assert(segment !== undefined && segment !== this.files.active, () => `segment ${view.base_offset} is not closed`);
    return segment;
  }

  /** Steps 2 to 4, reads held back. False (the copy deleted) when the segment is no longer there as it was. */
  private async swap(segment: Segment, view: SegmentView, copy: string): Promise<boolean> {
    const { io, handles, index_cache } = this.ctx;
    const dir = this.files.dir;
    if (segment.deleted || !this.files.list.includes(segment) || segment === this.files.active) {
      await io.unlink(copy);
      return false;
    }
    assert(segment.size_bytes === view.size_bytes, () => `closed segment ${segment.base_offset} changed size`);
    for (const file of [segment.index_path, segment.time_index_path]) await unlink_if_there(io, file);
    index_cache.forget(segment);
    await handles.forget(segment.log_path);
    await io.rename(copy, segment.log_path);
    this.log.drop_cached_below(view.end_offset);
    await io.fsync_dir(dir);
    segment.reset_indexes();
    segment.size_bytes = 0;
    segment.end_offset = segment.base_offset;
    const stop = await scan_segment(io, handles, segment, this.log.index_interval_bytes());
    assert(stop === null, () => `rewritten segment ${segment.base_offset} fails its checks: ${stop?.why}`);
    segment.assigned_bytes = segment.size_bytes;
    await this.files.seal(segment);
    return true;
  }
}

async function unlink_if_there(io: LogContext['io'], file: string): Promise<void> {
  try {
    await io.unlink(file);
  } catch (error) {
    if (os_error_code(error) !== 'ENOENT') throw error;
  }
}
