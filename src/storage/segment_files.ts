// The segments of one partition on disk, oldest first: finding them at open and recovering the
// tail, finding the one holding an offset, reading batches from their files through their sparse
// indexes (loaded, rebuilt or evicted through the index cache), time lookups, and removing whole
// segments. The partition log (partition_log.ts) decides what to append, keep and delete; this
// holds the files.
import path from 'node:path';
import type { LogContext } from './log_context.ts';
import { CorruptDataError, assert, os_error_code, rethrow_assertion } from './errors.ts';
import { write_all } from './file_util.ts';
import type { Fd } from './file_io.ts';
import { MAX_TIMESTAMP_LOOKUP } from './log_types.ts';
import { Segment } from './segment.ts';
import { batch_records_count } from '../format/batch_layout.ts';
import { ReadGate } from './read_gate.ts';
import { find_offset_by_time, load_saved_indexes, read_segment, save_indexes, scan_segment } from './segment_io.ts';

/** A compacted copy of a segment's data file, before it is swapped in (segment_rewriter.ts). */
export const CLEANED_SUFFIX = '.cleaned';

export class SegmentFiles {
  /** Never empty once loaded; the last one is the active segment (it takes appends). */
  readonly list: Segment[] = [];
  /** Where recovery cut this log short (a torn, cut or corrupt tail), if it did. */
  recovery_cut: { offset: number; why: string } | null = null;
  /** Told the offset where a read met corrupt data. */
  on_corrupt: ((offset: number) => void) | null = null;
  /** Reads run together; a segment's file is swapped (compaction), cut or deleted alone. */
  readonly gate = new ReadGate();

  constructor(
    private readonly ctx: LogContext,
    readonly name: string,
    readonly dir: string,
    /** The log's current index density (its config may change while it is open). */
    private readonly index_interval_bytes: () => number,
  ) {}

  get active(): Segment {
    return this.list[this.list.length - 1]!;
  }

  get count(): number {
    return this.list.length;
  }

  get size_bytes(): number {
    let total = 0;
    for (const segment of this.list) total += segment.size_bytes;
    return total;
  }

  // ---------------------------------------------------------------- opening and recovery

  /**
   * Finds the segment files (removing leftovers of interrupted writes, and segments wholly below
   * the log start); returns the log start offset.
   */
  async load(log_start_checkpoint: number | undefined): Promise<number> {
    const { io } = this.ctx;
    const names = await io.readdir(this.dir);
    const bases: number[] = [];
    const stems = new Set<string>();
    for (const name of names) {
      // Unfinished atomic replacements, and compacted copies never swapped in (segment_rewriter.ts).
      if (name.endsWith('.tmp') || name.endsWith(CLEANED_SUFFIX)) await io.unlink(path.join(this.dir, name));
      const match = /^(\d{20})\.log$/.exec(name);
      if (match) {
        bases.push(Number(match[1]));
        stems.add(match[1]!);
      }
    }
    for (const name of names) {
      const match = /^(\d{20})\.(index|timeindex)$/.exec(name);
      if (match && !stems.has(match[1]!)) await io.unlink(path.join(this.dir, name));
    }
    bases.sort((a, b) => a - b);
    const now = this.ctx.clock.now_ms();
    for (const base of bases) {
      const segment = new Segment(this.dir, base, 0, now);
      const stat = await io.stat(segment.log_path);
      segment.size_bytes = segment.assigned_bytes = stat?.size ?? 0;
      segment.file_durable = true;
      this.list.push(segment);
    }
    const log_start_offset = log_start_checkpoint ?? this.list[0]?.base_offset ?? 0;
    // Segments wholly below the log start were deleted by delete-records or retention before a crash.
    await this.delete_below(log_start_offset);
    if (this.list.length === 0) this.roll(log_start_offset, now);
    for (let i = 0; i + 1 < this.list.length; i++) this.list[i]!.end_offset = this.list[i + 1]!.base_offset;
    return log_start_offset;
  }

  /**
   * Checks every batch from the segment holding `recovery_point` on and truncates a torn or corrupt
   * tail; returns the end offset of what is left.
   */
  async recover(recovery_point: number, clean_shutdown: boolean): Promise<number> {
    const first = this.list.findIndex(
      (_segment, i) => i === this.list.length - 1 || this.list[i + 1]!.base_offset > recovery_point,
    );
    for (let i = first; i < this.list.length; i++) {
      const is_last = i === this.list.length - 1;
      const stopped = await this.recover_segment(this.list[i]!, is_last && clean_shutdown);
      if (stopped) {
        for (const dropped of this.list.splice(i + 1)) await this.remove(dropped);
        break;
      }
      if (!is_last) await this.seal(this.list[i]!);
    }
    return this.active.end_offset;
  }

  /** Rebuilds one segment's indexes by scanning it; true when its tail had to be cut. */
  private async recover_segment(segment: Segment, trust_saved_indexes: boolean): Promise<boolean> {
    const { io, handles } = this.ctx;
    // After a clean shutdown the saved indexes are exact; the scan resumes at their last entry.
    if (!(trust_saved_indexes && segment.size_bytes > 0 && (await this.resume_from_saved_indexes(segment)))) {
      segment.reset_indexes();
      segment.size_bytes = 0;
      segment.end_offset = segment.base_offset;
    }
    const file_exists = (await io.stat(segment.log_path)) !== null;
    const stop = file_exists ? await scan_segment(io, handles, segment, this.index_interval_bytes()) : null;
    segment.assigned_bytes = segment.size_bytes;
    if (stop !== null) {
      this.ctx.logger.warn(
        { partition: this.name, segment: segment.base_offset, position: stop.position, why: stop.why },
        'truncating log tail that failed recovery checks',
      );
      await handles.with_handle(segment.log_path, (fd) => io.ftruncate(fd, stop.position));
      this.recovery_cut = { offset: segment.end_offset, why: stop.why };
    }
    if (file_exists) await handles.with_handle(segment.log_path, (fd) => io.fdatasync(fd));
    return stop !== null;
  }

  private async resume_from_saved_indexes(segment: Segment): Promise<boolean> {
    if (!(await load_saved_indexes(this.ctx.io, this.ctx.handles, segment))) return false;
    const index = segment.index!;
    const resume = index.count === 0 ? 0 : index.position_at(index.count - 1);
    segment.end_offset =
      index.count === 0 ? segment.base_offset : segment.base_offset + index.relative_offset_at(index.count - 1);
    index.truncate_to_position(resume);
    segment.time_index!.truncate_to_offset(segment.end_offset - segment.base_offset + 1);
    segment.size_bytes = resume;
    return true;
  }

  // ---------------------------------------------------------------- finding and reading

  /** Index of the last segment whose base offset is <= `offset`. */
  index_of(offset: number): number {
    let low = 0;
    let high = this.list.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >>> 1;
      if (this.list[middle]!.base_offset <= offset) low = middle;
      else high = middle - 1;
    }
    return low;
  }

  /** Whole batches from the one holding `offset`, below `limit`, about `bytes_max` bytes. */
  read(offset: number, bytes_max: number, limit: number): Promise<Buffer[]> {
    return this.gate.read(() => this.read_now(offset, bytes_max, limit));
  }

  /**
   * A read that found only empty batches (a compacted segment's producer batches, kept without
   * records) goes on into the next segment: a client that steps over a response only by its records
   * (kafkajs) would otherwise ask for the same offset for ever.
   */
  private async read_now(offset: number, bytes_max: number, limit: number): Promise<Buffer[]> {
    const { io, handles } = this.ctx;
    const out: Buffer[] = [];
    let bytes = 0;
    for (let i = this.index_of(offset); i < this.list.length; i++) {
      const segment = this.list[i]!;
      await this.ensure_indexes(segment);
      const batches = await read_segment(io, handles, segment, offset, this.index_interval_bytes(), {
        bytes_max: Math.max(0, bytes_max - bytes),
        offset_limit: limit,
        verify_crc: this.ctx.storage.verify_reads,
        partition: this.name,
      }).catch((error: unknown) => {
        if (error instanceof CorruptDataError) this.on_corrupt?.(error.offset);
        throw error;
      });
      for (const batch of batches) bytes += batch.length;
      out.push(...batches);
      if (segment.end_offset >= limit || out.some((batch) => batch_records_count(batch, 0) > 0)) return out;
    }
    return out;
  }

  /** Loads a closed segment's indexes from their files, or rebuilds them by scanning. */
  async ensure_indexes(segment: Segment): Promise<void> {
    if (segment === this.active) return;
    if (!segment.indexes_loaded) {
      if (!(await load_saved_indexes(this.ctx.io, this.ctx.handles, segment))) await this.rebuild_indexes(segment);
    }
    this.ctx.index_cache.touch(segment);
  }

  /** The indexes of a segment made active again (after a failed write): in memory, not cached. */
  async reload_active_indexes(segment: Segment): Promise<void> {
    if (!segment.indexes_loaded && !(await load_saved_indexes(this.ctx.io, this.ctx.handles, segment)))
      await this.rebuild_indexes(segment);
    this.ctx.index_cache.forget(segment);
  }

  private async rebuild_indexes(segment: Segment): Promise<void> {
    const { io, handles, logger } = this.ctx;
    logger.warn({ partition: this.name, segment: segment.base_offset }, 'index files missing or damaged; rebuilding');
    const size_bytes = segment.size_bytes;
    segment.reset_indexes();
    segment.size_bytes = 0;
    segment.end_offset = segment.base_offset;
    const stop = await scan_segment(io, handles, segment, this.index_interval_bytes());
    if (stop !== null) {
      // A closed segment is never truncated here: reads past the damage report corrupt data.
      logger.error(
        { partition: this.name, segment: segment.base_offset, ...stop },
        'closed segment has damaged batches',
      );
      segment.size_bytes = size_bytes;
    }
    segment.assigned_bytes = segment.size_bytes;
    await this.seal(segment);
  }

  /**
   * The first offset at or after `timestamp_ms` in [log_start_offset, high_watermark) (batch-granular
   * if compressed); for MAX_TIMESTAMP_LOOKUP, the batch with the largest timestamp and that timestamp
   * (max_timestamp). Null when there is none.
   */
  offset_for_timestamp(
    timestamp_ms: number,
    log_start_offset: number,
    high_watermark: number,
  ): Promise<{ offset: number; timestamp_ms: number } | null> {
    if (timestamp_ms === MAX_TIMESTAMP_LOOKUP)
      return this.gate.read(() => this.max_timestamp(log_start_offset, high_watermark));
    return this.gate.read(() => this.offset_by_time(timestamp_ms, log_start_offset, high_watermark));
  }

  private async offset_by_time(
    timestamp_ms: number,
    log_start_offset: number,
    high_watermark: number,
  ): Promise<{ offset: number; timestamp_ms: number } | null> {
    const { io, handles } = this.ctx;
    for (const segment of [...this.list]) {
      if (segment.end_offset <= log_start_offset || segment.base_offset >= high_watermark) continue;
      await this.ensure_indexes(segment);
      if (segment.max_timestamp_ms < timestamp_ms) continue;
      const offset = await find_offset_by_time(io, handles, segment, timestamp_ms, high_watermark, this.name);
      if (offset !== null) return { offset: Math.max(offset, log_start_offset), timestamp_ms };
    }
    return null;
  }

  /**
   * The batch with the largest timestamp in [log_start_offset, high_watermark): its base offset and
   * that timestamp (the first such batch on a tie, by segment: one whose largest is at or past the
   * high watermark is passed over); null when there is none.
   */
  private async max_timestamp(
    log_start_offset: number,
    high_watermark: number,
  ): Promise<{ offset: number; timestamp_ms: number } | null> {
    let found: { offset: number; timestamp_ms: number } | null = null;
    for (const segment of [...this.list]) {
      if (segment.end_offset <= log_start_offset || segment.base_offset >= high_watermark) continue;
      await this.ensure_indexes(segment);
      const offset = Math.max(segment.offset_of_max_timestamp, log_start_offset);
      if (segment.max_timestamp_ms < 0 || offset >= high_watermark) continue;
      if (!found || segment.max_timestamp_ms > found.timestamp_ms)
        found = { offset, timestamp_ms: segment.max_timestamp_ms };
    }
    return found;
  }

  /** Bytes of a write read back to check where it landed: the batch's base offset and length. */
  static readonly VERIFY_BYTES = 12;

  /**
   * Writes `buffers` at `position` of the segment's file; returns the head of what landed there,
   * read back at once for the caller to compare.
   */
  write(segment: Segment, buffers: readonly Buffer[], position: number): Promise<Buffer> {
    const write_and_read_back = async (fd: Fd) => {
      await write_all(this.ctx.io, fd, buffers, position);
      return this.read_back(fd, position);
    };
    return this.ctx.handles.with_handle(segment.log_path, write_and_read_back, true);
  }

  /**
   * The head of what a write through `fd` just put at `position` (its first batch's base offset and
   * length): still in the page cache, so a blocking read is the cheap one.
   */
  private read_back(fd: Fd, position: number): Buffer {
    const head = Buffer.allocUnsafe(SegmentFiles.VERIFY_BYTES);
    return head.subarray(0, this.ctx.io.read_sync(fd, head, 0, head.length, position));
  }

  // ---------------------------------------------------------------- changing the list

  /** Starts a new active segment at `base_offset`; a previous one with nothing left to write is sealed. */
  roll(base_offset: number, now_ms: number): void {
    const segment = new Segment(this.dir, base_offset, 0, now_ms);
    segment.reset_indexes();
    const previous = this.list.length > 0 ? this.active : null;
    this.list.push(segment);
    if (previous && previous.assigned_bytes === previous.size_bytes) void this.seal_quietly(previous);
  }

  /**
   * The log start offset that retention allows: closed segments are dropped, oldest first, while
   * every record of the segment is older than `retention_ms` or the rest still holds
   * `retention_bytes`; a segment reaching the high watermark stays. -1 disables a limit.
   */
  async retention_start(
    { retention_ms, retention_bytes }: { retention_ms: number; retention_bytes: number },
    log_start_offset: number,
    high_watermark: number,
    now_ms: number,
  ): Promise<number> {
    let total_bytes = this.size_bytes;
    let start = log_start_offset;
    for (let i = 0; i < this.list.length - 1; i++) {
      const segment = this.list[i]!;
      const next = this.list[i + 1]!;
      if (next.base_offset > high_watermark) break;
      await this.ensure_indexes(segment);
      const expired =
        retention_ms >= 0 && segment.max_timestamp_ms >= 0 && segment.max_timestamp_ms < now_ms - retention_ms;
      const oversized = retention_bytes >= 0 && total_bytes - segment.size_bytes >= retention_bytes;
      if (!expired && !oversized) break;
      total_bytes -= segment.size_bytes;
      start = next.base_offset;
    }
    return start;
  }

  /** Removes the segments wholly below `log_start_offset` (never the active one). */
  delete_below(log_start_offset: number): Promise<void> {
    return this.gate.alone(async () => {
      while (this.list.length > 1 && this.list[1]!.base_offset <= log_start_offset)
        await this.remove(this.list.shift()!);
    });
  }

  /**
   * Cuts the files back to the batch start at or below `offset` in the segment holding `from`
   * (segments after it are removed; it becomes active, its indexes in memory) and syncs the cut.
   * Returns the new end offset.
   */
  cut_to(from: number, offset: number): Promise<number> {
    return this.gate.alone(() => this.cut_now(from, offset));
  }

  private async cut_now(from: number, offset: number): Promise<number> {
    const { io, handles } = this.ctx;
    for (const dropped of this.list.splice(this.index_of(from) + 1)) await this.remove(dropped);
    const segment = this.active;
    this.ctx.index_cache.forget(segment);
    segment.reset_indexes();
    segment.size_bytes = 0;
    segment.end_offset = segment.base_offset;
    // A batch below `offset` that fails its checks (a corrupt copy being cut for a refetch) ends
    // the scan there: the cut is made at its start, and the rest is fetched again.
    const stop = await scan_segment(io, handles, segment, this.index_interval_bytes(), offset);
    if (stop) {
      this.ctx.logger.warn(
        { partition: this.name, segment: segment.base_offset, position: stop.position, why: stop.why },
        'cutting at a batch that failed its checks',
      );
    }
    await handles.with_handle(
      segment.log_path,
      async (fd) => {
        await io.ftruncate(fd, segment.size_bytes);
        await io.fdatasync(fd);
      },
      true,
    );
    segment.assigned_bytes = segment.size_bytes;
    return segment.end_offset;
  }

  /**
   * Begins an empty active segment at `offset`, its file created and made durable, ahead of
   * segments the caller then deletes (`delete_below`): a crash between the two leaves a log that
   * still ends at `offset`.
   */
  async begin_empty_at(offset: number, now_ms: number): Promise<void> {
    const { io, handles } = this.ctx;
    this.roll(offset, now_ms);
    await handles.with_handle(this.active.log_path, (fd) => io.fdatasync(fd), true);
    await io.fsync_dir(this.dir);
    this.active.file_durable = true;
  }

  /** Drops the unwritten segments after `segment` (a failed write's rollback). */
  async drop_after(segment: Segment): Promise<void> {
    while (this.active !== segment) {
      const dropped = this.list.pop()!;
      assert(dropped.is_empty, 'only unwritten segments are dropped after a failed write');
      await this.remove(dropped);
    }
  }

  async remove(segment: Segment): Promise<void> {
    const { io, handles } = this.ctx;
    segment.deleted = true;
    this.ctx.index_cache.forget(segment);
    await handles.forget(segment.log_path);
    for (const file of [segment.log_path, segment.index_path, segment.time_index_path]) {
      try {
        await io.unlink(file);
      } catch (error) {
        if (os_error_code(error) !== 'ENOENT') throw error;
      }
    }
  }

  // ---------------------------------------------------------------- sealing and closing

  /** Saves a segment's indexes once it no longer takes appends, and hands them to the index cache. */
  async seal(segment: Segment): Promise<void> {
    if (segment.deleted || !segment.indexes_loaded) return;
    const size_at_save = segment.size_bytes;
    await save_indexes(this.ctx.io, segment);
    // A failed write can make a sealed segment active again; entries added meanwhile are unsaved.
    if (segment.size_bytes === size_at_save) segment.indexes_saved = true;
    if (segment !== this.active) this.ctx.index_cache.touch(segment);
  }

  async seal_quietly(segment: Segment): Promise<void> {
    try {
      await this.seal(segment);
    } catch (error) {
      rethrow_assertion(error);
      // Index files are rebuilt by recovery when missing; losing one costs a scan, not data.
      this.ctx.logger.warn(
        { partition: this.name, segment: segment.base_offset, error: String(error) },
        'could not save index files',
      );
    }
  }

  /** At close: the active segment's indexes saved, every segment out of the index cache. */
  async close(): Promise<void> {
    const active = this.active;
    if (active.indexes_loaded && !active.indexes_saved) await this.seal_quietly(active);
    for (const segment of this.list) this.ctx.index_cache.forget(segment);
  }

  forget_indexes(): void {
    for (const segment of this.list) this.ctx.index_cache.forget(segment);
  }
}
