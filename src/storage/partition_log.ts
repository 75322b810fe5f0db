// A partition log: an ordered list of segments, the append path with its single writer, durability
// bookkeeping (written, flushed, high watermark), reads, time lookups, retention and delete-records.
//
// Offsets, from low to high:
//   log_start_offset <= high_watermark <= written_offset <= next_offset
//   flushed_offset <= written_offset
// next_offset is assigned synchronously on append; written_offset moves when a write completes;
// flushed_offset when an fdatasync round covering it completes. Under the local high-watermark
// mode the high watermark follows flushed_offset (policy fsync) or written_offset (otherwise), so a
// reader never sees a record whose append has not been acknowledged.
import path from 'node:path';
import type { FlushTarget, FlushWork } from './flush_scheduler.ts';
import type { TailWindow } from './tail_cache.ts';
import type { LogConfig } from './config.ts';
import type { LogContext } from './log_context.ts';
import { RELATIVE_OFFSET_MAX, check_batches, check_batches_continue, stamp_batches } from './batch.ts';
import { batch_base_offset, batch_last_offset, batch_max_timestamp, batch_size_at } from '../format/batch_layout.ts';
import {
  BackpressureError,
  DiskFullError,
  InvalidArgumentError,
  LogClosedError,
  OffsetOutOfRangeError,
  PartitionOfflineError,
  ReplicaOnlyError,
  StorageError,
  StorageIOError,
  assert,
  os_error_code,
} from './errors.ts';
import type { Segment } from './segment.ts';
import { SegmentFiles } from './segment_files.ts';
import { SegmentRewriter } from './segment_rewriter.ts';
import { LeaderEpochCache } from './leader_epochs.ts';
import { Fifo } from './fifo.ts';

export type { LogContext } from './log_context.ts';
export type { AppendOptions, AppendResult, ReadIsolation, ReadResult } from './log_types.ts';
import type { AckWaiter, AppendOptions, AppendResult, PendingAppend, ReadIsolation, ReadResult } from './log_types.ts';

interface LogFlushWork extends FlushWork {
  offset: number;
}

type LogState = 'open' | 'closing' | 'closed' | 'offline';

export class PartitionLog implements FlushTarget {
  readonly dir: string;
  config: LogConfig;
  private readonly files: SegmentFiles;
  /** Compaction's access to closed segments below the high watermark and the flushed offset. */
  readonly rewriter: SegmentRewriter;
  private state: LogState = 'open';
  private offline_reason = '';

  log_start_offset = 0;
  next_offset = 0;
  written_offset = 0;
  flushed_offset = 0;
  high_watermark = 0;
  /** 'external': replication sets the high watermark through set_high_watermark(). */
  high_watermark_mode: 'local' | 'external' = 'local';
  leader_epoch = 0;
  /** First offset of each leader epoch in this log (replication compares these after failover). */
  readonly epochs: LeaderEpochCache;
  /** Set by replication on a leader: appends (but `local_ack` ones) resolve once this does too. */
  ack_gate: ((result: AppendResult) => Promise<AppendResult>) | null = null;
  private replica_only_ = false;

  /**
   * Set by replication while this log is not its partition's leader: only copies are appended, and
   * none is kept in the tail cache (clients read from leaders; a copy's batches die young).
   */
  get replica_only(): boolean {
    return this.replica_only_;
  }

  set replica_only(value: boolean) {
    if (value && !this.replica_only_) this.tail.clear();
    this.replica_only_ = value;
  }

  private readonly queue = new Fifo<PendingAppend>();
  private pending_bytes = 0;
  private writing = false;
  /** Set while a failed write is rolled back: appends meanwhile would take offsets it gives back. */
  private rolling_back: StorageError | null = null;
  private drained: Array<() => void> = [];
  /** Appends written and waiting for an fsync (policy fsync), oldest first. */
  private readonly ack_waiters = new Fifo<AckWaiter>();
  private dirty_files = new Set<string>();
  private dirty_dirs = new Set<string>();
  private readonly hw_listeners = new Set<(high_watermark: number) => void>();
  private readonly progress_listeners = new Set<() => void>();
  private readonly tail: TailWindow;

  private constructor(
    private readonly ctx: LogContext,
    readonly name: string,
    config: LogConfig,
  ) {
    this.dir = path.join(ctx.storage.data_dir, name);
    this.config = config;
    this.tail = ctx.tail_cache.window();
    this.epochs = new LeaderEpochCache(ctx.io, this.dir);
    this.files = new SegmentFiles(ctx, name, this.dir, () => this.config.index_interval_bytes);
    this.rewriter = new SegmentRewriter(ctx, this.files, {
      stable_offset: () => Math.min(this.high_watermark, this.flushed_offset),
      index_interval_bytes: () => this.config.index_interval_bytes,
      drop_cached_below: (offset) => this.tail.drop_below(offset),
    });
  }

  // ---------------------------------------------------------------- opening and recovery

  /**
   * Opens the log in `dir`, recovering it: segments below `recovery_point` are trusted as they are;
   * from the segment holding it on, every batch is checked and a torn or corrupt tail is truncated.
   */
  static async open(
    ctx: LogContext,
    name: string,
    config: LogConfig,
    checkpoints: { recovery_point: number; log_start_offset: number | undefined; clean_shutdown: boolean },
  ): Promise<PartitionLog> {
    const log = new PartitionLog(ctx, name, config);
    log.log_start_offset = await log.files.load(checkpoints.log_start_offset);
    const end = await log.files.recover(checkpoints.recovery_point, checkpoints.clean_shutdown);
    log.next_offset = log.written_offset = log.flushed_offset = end;
    log.log_start_offset = Math.min(log.log_start_offset, end);
    log.high_watermark = end;
    await log.epochs.load(log.next_offset);
    return log;
  }

  // ---------------------------------------------------------------- the append path

  get active(): Segment {
    return this.files.active;
  }

  /** Told where a read met corrupt data (replication refetches from there); the read still fails. */
  set on_corrupt(listener: ((offset: number) => void) | null) {
    this.files.on_corrupt = listener;
  }

  /** Where recovery at open cut the log short (a torn, cut or corrupt tail): records may be lost. */
  get recovery_cut(): { offset: number; why: string } | null {
    return this.files.recovery_cut;
  }

  /**
   * Validates the record batches in `records` (one or more, back to back), assigns their offsets,
   * stamps them in place and queues them for writing. Resolves when the durability policy holds.
   * The log keeps `records` (it is written and cached as is): callers must not reuse the buffer.
   */
  append(records: Buffer, options: AppendOptions = {}): Promise<AppendResult> {
    try {
      const appended = this.enqueue(records, options);
      const gate = this.ack_gate;
      return gate && !options.local_ack ? appended.then(gate) : appended;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private enqueue(records: Buffer, options: AppendOptions): Promise<AppendResult> {
    this.check_writable();
    if (this.replica_only && !options.replicated) throw new ReplicaOnlyError(this.name);
    if (this.rolling_back) throw this.rolling_back;
    const limits = { message_bytes_max: this.config.message_bytes_max, client_batch: !options.replicated };
    const span = check_batches(records, options.checked ?? false, limits);
    if (this.pending_bytes + records.length > this.ctx.storage.pending_bytes_max) {
      throw new BackpressureError(this.name, this.pending_bytes, this.ctx.storage.pending_bytes_max);
    }
    const now_ms = this.ctx.clock.now_ms();
    // A copy may begin past the log's end, where a compacted leader's log has a gap.
    const base_offset = options.replicated ? batch_base_offset(records, 0) : this.next_offset;
    const end = options.replicated ? check_batches_continue(records, this.next_offset, this.name) : base_offset + span;
    if (this.should_roll(records.length, end - 1, now_ms)) this.files.roll(base_offset, now_ms);
    const log_append_time = this.config.timestamp_type === 'log_append';
    const offset = options.replicated
      ? end
      : stamp_batches(records, {
          base_offset,
          leader_epoch: options.leader_epoch ?? this.leader_epoch,
          log_append_time_ms: log_append_time ? now_ms : null,
        });
    this.next_offset = offset;
    const segment = this.active;
    const write_position = segment.assigned_bytes;
    segment.assigned_bytes += records.length;
    this.pending_bytes += records.length;
    const result: AppendResult = {
      base_offset,
      last_offset: offset - 1,
      log_append_time_ms: log_append_time ? now_ms : -1,
      log_start_offset: this.log_start_offset,
    };
    return new Promise<AppendResult>((resolve, reject) => {
      this.queue.push({
        segment,
        position: write_position,
        buffer: records,
        base_offset,
        last_offset: offset - 1,
        result,
        resolve,
        reject,
      });
      this.pump();
    });
  }

  private check_writable(): void {
    if (this.state === 'offline') throw new PartitionOfflineError(this.name, this.offline_reason);
    if (this.state !== 'open') throw new LogClosedError(this.name);
  }

  private should_roll(size: number, last_offset: number, now_ms: number): boolean {
    const active = this.active;
    if (active.assigned_bytes === 0) return false;
    return (
      active.assigned_bytes + size > this.config.segment_bytes ||
      last_offset - active.base_offset > RELATIVE_OFFSET_MAX ||
      now_ms - active.created_ms >= this.config.segment_ms
    );
  }

  /** Starts the next write if none is running: every queued append of one segment, up to the limits. */
  private pump(): void {
    if (this.writing || this.queue.size === 0) return;
    const first = this.queue.at(0)!;
    const group: PendingAppend[] = [first];
    let bytes = first.buffer.length;
    for (let i = 1; i < this.queue.size && group.length < this.ctx.storage.write_batches_max; i++) {
      const next = this.queue.at(i)!;
      if (next.segment !== first.segment || bytes + next.buffer.length > this.ctx.storage.write_bytes_max) break;
      group.push(next);
      bytes += next.buffer.length;
    }
    this.writing = true;
    void this.write_group(first.segment, group, bytes);
  }

  private async write_group(segment: Segment, group: PendingAppend[], bytes: number): Promise<void> {
    const position = group[0]!.position;
    assert(
      position === segment.size_bytes,
      () => `write at ${position} but segment ${segment.base_offset} ends at ${segment.size_bytes}`,
    );
    const buffers = group.map((item) => item.buffer);
    // Paired with the read-back below: what lands at `position` is the batch the index will name.
    assert(
      batch_base_offset(buffers[0]!, 0) === group[0]!.base_offset,
      () => `${this.name}: a write's first batch is not the one queued`,
    );
    let head: Buffer;
    try {
      head = await this.files.write(segment, buffers, position);
    } catch (error) {
      await this.fail_writes(segment, position, error);
      this.writing = false;
      this.pump();
      this.notify_drained();
      return;
    }
    assert(
      head.equals(buffers[0]!.subarray(0, SegmentFiles.VERIFY_BYTES)),
      () => `${this.name}: segment ${segment.base_offset} at ${position} does not hold the batch just written`,
    );
    this.queue.discard(group.length);
    this.pending_bytes -= bytes;
    for (const item of group) this.apply_written(segment, item);
    this.dirty_files.add(segment.log_path);
    if (!segment.file_durable) this.dirty_dirs.add(this.dir);
    const last = group[group.length - 1]!;
    this.written_offset = last.last_offset + 1;
    if (this.policy_kind === 'fsync') {
      for (const item of group)
        this.ack_waiters.push({
          last_offset: item.last_offset,
          result: item.result,
          resolve: item.resolve,
          reject: item.reject,
        });
    } else {
      this.advance_local_high_watermark(this.written_offset);
      for (const item of group) this.acknowledge(item);
    }
    this.ctx.flusher.mark_dirty(this);
    this.notify_progress();
    this.writing = false;
    const still_used = this.queue.at(0)?.segment === segment;
    if (segment !== this.active && !still_used) void this.files.seal_quietly(segment);
    this.pump();
    this.notify_drained();
  }

  private get policy_kind(): string {
    return this.ctx.storage.durability.kind;
  }

  private apply_written(segment: Segment, item: PendingAppend): void {
    const buffer = item.buffer;
    let at = item.position;
    const interval = this.config.index_interval_bytes;
    for (let position = 0; position < buffer.length;) {
      const size = batch_size_at(buffer, position);
      const base_offset = batch_base_offset(buffer, position);
      const last_offset = batch_last_offset(buffer, position);
      segment.record_batch(base_offset, last_offset, batch_max_timestamp(buffer, position), at, size, interval);
      if (!this.replica_only_)
        this.tail.add(
          position === 0 && size === buffer.length ? buffer : buffer.subarray(position, position + size),
          base_offset,
          last_offset,
        );
      position += size;
      at += size;
    }
  }

  /**
   * A write failed: cut the file back to where the write began, refuse this write and every append
   * queued after it (their offsets were assigned past it), and hand their offsets out again. If the
   * file cannot be cut back, the partition goes offline: nothing half-written is ever readable.
   */
  private async fail_writes(segment: Segment, position: number, cause: unknown): Promise<void> {
    const failed = this.queue.take_all();
    this.pending_bytes = 0;
    const error: StorageError =
      os_error_code(cause) === 'ENOSPC'
        ? new DiskFullError(this.name, { cause })
        : new StorageIOError(this.name, 'write', cause);
    this.ctx.logger.warn(
      { partition: this.name, segment: segment.base_offset, error: String(cause) },
      'append write failed; rolling back',
    );
    this.rolling_back = error;
    try {
      try {
        await this.ctx.handles.with_handle(segment.log_path, (fd) => this.ctx.io.ftruncate(fd, position), true);
      } catch (truncate_error) {
        this.go_offline(`could not cut back a failed write: ${String(truncate_error)}`);
        for (const item of failed) item.reject(new PartitionOfflineError(this.name, this.offline_reason));
        return;
      }
      this.next_offset = failed[0]!.base_offset;
      assert(this.next_offset === segment.end_offset, 'rolled-back offsets must resume at the segment end');
      await this.files.drop_after(segment);
      segment.assigned_bytes = segment.size_bytes;
      await this.files.reload_active_indexes(segment); // active again: its indexes must stay in memory
      for (const item of failed) item.reject(error);
    } finally {
      this.rolling_back = null;
    }
  }

  private go_offline(reason: string): void {
    if (this.state === 'offline') return;
    this.state = 'offline';
    this.offline_reason = reason;
    this.tail.clear();
    this.ctx.logger.error({ partition: this.name, reason }, 'partition offline');
    const error = new PartitionOfflineError(this.name, reason);
    for (const waiter of this.ack_waiters.take_all()) waiter.reject(error);
  }

  private notify_drained(): void {
    if (this.writing || this.queue.size > 0) return;
    for (const resolve of this.drained.splice(0)) resolve();
  }

  /** Waits for queued writes and flushes, so no write or fsync races a cut (writable logs only). */
  private async settle_writes(): Promise<void> {
    this.check_writable();
    await this.drain_writes();
    await this.ctx.flusher.flush_all();
  }

  /** Resolves once every queued append has been written or refused. */
  private drain_writes(): Promise<void> {
    if (!this.writing && this.queue.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.drained.push(resolve));
  }

  // ---------------------------------------------------------------- truncation

  /**
   * Removes every batch reaching `offset` or beyond: a follower's tail that the new leader does not
   * have. Cuts at a batch start, so the new end may be below `offset`; returns it. Waits for queued
   * writes and flushes first, so no write or fsync races the cut.
   */
  async truncate_to(offset: number): Promise<number> {
    assert(Number.isSafeInteger(offset) && offset >= 0, () => `truncation offset ${offset} is not an offset`);
    await this.settle_writes();
    if (offset >= this.written_offset) return this.written_offset;
    const end = await this.files.cut_to(Math.max(offset, this.log_start_offset), offset);
    this.next_offset = this.written_offset = end;
    this.flushed_offset = Math.min(this.flushed_offset, end);
    this.high_watermark = Math.min(this.high_watermark, end);
    this.log_start_offset = Math.min(this.log_start_offset, end);
    this.tail.clear();
    await this.epochs.truncate_to(end);
    this.ctx.logger.warn({ partition: this.name, offset, end }, "log truncated to the leader's");
    return end;
  }

  /** Empties the log and starts it at `offset`, its leader's log start (or, when empty, a batch's start below it). */
  async restart_at(offset: number): Promise<void> {
    const empty = this.next_offset === this.log_start_offset;
    assert(offset > this.written_offset || empty, () => `${this.name}: restart at ${offset} would drop records`);
    await this.settle_writes();
    await this.files.begin_empty_at(offset, this.ctx.clock.now_ms());
    this.next_offset = this.written_offset = this.flushed_offset = this.high_watermark = offset;
    this.tail.clear();
    await this.epochs.truncate_to(0);
    await this.advance_log_start(offset);
    this.ctx.logger.warn({ partition: this.name, offset }, "log started again at the leader's log start");
  }

  // ---------------------------------------------------------------- durability

  begin_flush(): LogFlushWork | null {
    if (this.state === 'offline' || (this.dirty_files.size === 0 && this.dirty_dirs.size === 0)) return null;
    const work: LogFlushWork = {
      files: [...this.dirty_files],
      dirs: [...this.dirty_dirs],
      offset: this.written_offset,
    };
    this.dirty_files.clear();
    this.dirty_dirs.clear();
    return work;
  }

  end_flush(work: FlushWork, error: unknown): void {
    if (error) {
      // After a failed fsync the page cache may have dropped the data: the files cannot be trusted.
      this.go_offline(`fsync failed: ${os_error_code(error) ?? String(error)}`);
      return;
    }
    if (work.dirs.length > 0) for (const segment of this.files.list) segment.file_durable = true;
    const offset = (work as LogFlushWork).offset;
    if (offset <= this.flushed_offset) return;
    this.flushed_offset = offset;
    if (this.policy_kind === 'fsync') this.advance_local_high_watermark(offset);
    while ((this.ack_waiters.at(0)?.last_offset ?? offset) < offset) this.acknowledge(this.ack_waiters.shift()!);
    this.notify_progress();
  }

  /** Calls `listener` whenever the written or flushed offset advances (replication). Returns an unsubscribe. */
  on_progress(listener: () => void): () => void {
    this.progress_listeners.add(listener);
    return () => this.progress_listeners.delete(listener);
  }

  private notify_progress(): void {
    for (const listener of this.progress_listeners) listener();
  }

  /** An append's durability holds: where the log keeps its own high watermark, readers see it already. */
  private acknowledge(waiter: AckWaiter): void {
    assert(
      this.high_watermark_mode === 'external' || waiter.last_offset < this.high_watermark,
      () => `${this.name}: offset ${waiter.last_offset} acknowledged above the high watermark ${this.high_watermark}`,
    );
    waiter.resolve(waiter.result);
  }

  private advance_local_high_watermark(offset: number): void {
    if (this.high_watermark_mode === 'local') this.move_high_watermark(offset);
  }

  /** The replication hook: the leader sets the high watermark once the in-sync replicas have data. */
  set_high_watermark(offset: number): void {
    assert(this.high_watermark_mode === 'external', 'set_high_watermark needs high_watermark_mode external');
    assert(offset <= this.written_offset, () => `high watermark ${offset} beyond written end ${this.written_offset}`);
    assert(
      offset >= this.high_watermark,
      () => `${this.name}: the high watermark may not go back from ${this.high_watermark} to ${offset}`,
    );
    this.move_high_watermark(offset);
  }

  private move_high_watermark(offset: number): void {
    if (offset <= this.high_watermark) return;
    this.high_watermark = offset;
    for (const listener of this.hw_listeners) listener(offset);
  }

  /** Calls `listener` whenever the high watermark advances (long-poll fetches). Returns an unsubscribe. */
  on_high_watermark(listener: (high_watermark: number) => void): () => void {
    this.hw_listeners.add(listener);
    return () => this.hw_listeners.delete(listener);
  }

  // ---------------------------------------------------------------- reads

  /**
   * Whole batches from the one holding `offset`, up to `bytes_max` bytes but at least one batch,
   * below the high watermark (or the written end for 'log_end'). From the tail cache when it reaches
   * back far enough, else from the segment file via its sparse index. An offset up to the written
   * end is in range even above the high watermark (none then): a new leader's high watermark may
   * lag where its predecessor's was, and consumers there must wait, not reset.
   */
  async read(offset: number, bytes_max: number, isolation: ReadIsolation = 'high_watermark'): Promise<ReadResult> {
    if (this.state === 'offline') throw new PartitionOfflineError(this.name, this.offline_reason);
    if (this.state === 'closed') throw new LogClosedError(this.name);
    const limit = isolation === 'log_end' ? this.written_offset : this.high_watermark;
    if (!Number.isSafeInteger(offset) || offset < this.log_start_offset || offset > this.written_offset) {
      throw new OffsetOutOfRangeError(this.name, offset, this.log_start_offset, this.written_offset);
    }
    let batches: Buffer[] = [];
    if (offset < limit)
      batches = this.tail.read(offset, bytes_max, limit) ?? (await this.files.read(offset, bytes_max, limit));
    let bytes = 0;
    for (const batch of batches) bytes += batch.length;
    return {
      batches,
      bytes,
      high_watermark: this.high_watermark,
      log_start_offset: this.log_start_offset,
      log_end_offset: this.written_offset,
    };
  }

  /** The first offset below the high watermark with a timestamp >= `timestamp_ms` (see SegmentFiles). */
  async offset_for_timestamp(timestamp_ms: number): Promise<{ offset: number; timestamp_ms: number } | null> {
    if (this.state === 'offline') throw new PartitionOfflineError(this.name, this.offline_reason);
    return this.files.offset_for_timestamp(timestamp_ms, this.log_start_offset, this.high_watermark);
  }

  // ---------------------------------------------------------------- retention and deletion

  /** Advances the log start offset to `offset` (delete-records) and deletes segments wholly below it. */
  async delete_records_before(offset: number): Promise<number> {
    this.check_writable();
    if (offset > this.high_watermark || offset < 0) {
      throw new InvalidArgumentError(
        `cannot delete records before ${offset}: high watermark is ${this.high_watermark}`,
      );
    }
    if (offset > this.log_start_offset) await this.advance_log_start(offset);
    return this.log_start_offset;
  }

  /** Applies retention_ms and retention_bytes to closed segments (cleanup_delete); returns how many went. */
  async enforce_retention(now_ms: number): Promise<number> {
    if (this.state !== 'open' || !this.config.cleanup_delete) return 0;
    const start = await this.files.retention_start(this.config, this.log_start_offset, this.high_watermark, now_ms);
    if (start <= this.log_start_offset) return 0;
    const before = this.files.count;
    await this.advance_log_start(start);
    return before - this.files.count;
  }

  /** The new log start is durable before any segment below it goes. */
  private async advance_log_start(offset: number): Promise<void> {
    this.log_start_offset = offset;
    await this.ctx.persist_log_start();
    await this.files.delete_below(offset);
  }

  /** Stops appends, writes and syncs everything queued, saves the active segment's indexes. */
  async close(): Promise<void> {
    if (this.state === 'closed' || this.state === 'closing') return;
    const was_offline = this.state === 'offline';
    this.state = 'closing';
    await this.drain_writes();
    if (!was_offline) {
      await this.ctx.flusher.flush_all();
      await this.files.close();
    } else {
      this.files.forget_indexes();
    }
    this.state = was_offline ? 'offline' : 'closed';
    this.tail.clear();
    await this.ctx.handles.forget_prefix(this.dir + path.sep);
  }

  get is_offline(): boolean {
    return this.state === 'offline';
  }

  get segment_count(): number {
    return this.files.count;
  }
  get size_bytes(): number {
    return this.files.size_bytes;
  }

  /** Base offsets of the segments, oldest first (for tests and admin views). */
  segment_base_offsets(): number[] {
    return this.files.list.map((segment) => segment.base_offset);
  }
}
