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
import type { FileIO } from './file_io.ts';
import type { HandleCache } from './handle_cache.ts';
import type { FlushScheduler, FlushTarget, FlushWork } from './flush_scheduler.ts';
import type { TailCache, TailWindow } from './tail_cache.ts';
import type { IndexCache } from './index_cache.ts';
import type { Clock, Logger } from './clock.ts';
import type { LogConfig, StorageConfig } from './config.ts';
import { write_all } from './file_util.ts';
import { RELATIVE_OFFSET_MAX, check_batch, stamp_batch, stamp_log_append_time } from './batch.ts';
import { BATCH_HEADER_BYTES, batch_base_offset, batch_last_offset_delta, batch_max_timestamp, batch_size_at } from '../format/batch_layout.ts';
import {
  BackpressureError,
  DiskFullError,
  InvalidArgumentError,
  InvalidBatchError,
  LogClosedError,
  OffsetOutOfRangeError,
  PartitionOfflineError,
  ReplicaOnlyError,
  StorageError,
  StorageIOError,
  assert,
  os_error_code,
} from './errors.ts';
import { Segment } from './segment.ts';
import { LeaderEpochCache } from './leader_epochs.ts';
import { find_offset_by_time, load_saved_indexes, read_segment, save_indexes, scan_segment } from './segment_io.ts';

export interface LogContext {
  io: FileIO;
  handles: HandleCache;
  flusher: FlushScheduler;
  tail_cache: TailCache;
  index_cache: IndexCache;
  clock: Clock;
  logger: Logger;
  storage: StorageConfig;
  /** Makes the current log start offsets durable (delete-records, retention). */
  persist_log_start(): Promise<void>;
}

export interface AppendOptions {
  /** Leader epoch stamped into every batch; defaults to the log's current epoch. */
  leader_epoch?: number;
  /**
   * The caller already ran check_batch on every batch with this log's message_bytes_max and client
   * rules (the broker does, before trusting a batch's producer fields): skip the second CRC pass.
   */
  checked?: boolean;
  /**
   * A follower's copy of the leader's batches: their offsets and leader epochs are kept as they
   * are, and must continue this log exactly.
   */
  replicated?: boolean;
  /** Resolve once the local durability policy holds, without waiting for the ack gate. */
  local_ack?: boolean;
}

export interface AppendResult {
  base_offset: number;
  last_offset: number;
  /** The broker time stamped on LogAppendTime batches, -1 for CreateTime. */
  log_append_time_ms: number;
  log_start_offset: number;
}

export interface ReadResult {
  /** Whole batches in offset order; the first holds the requested offset. */
  batches: Buffer[];
  bytes: number;
  high_watermark: number;
  log_start_offset: number;
  log_end_offset: number;
}

/** How far a read may see: the high watermark (consumers) or everything written (replication). */
export type ReadIsolation = 'high_watermark' | 'log_end';

interface PendingAppend {
  segment: Segment;
  position: number;
  buffer: Buffer;
  base_offset: number;
  last_offset: number;
  result: AppendResult;
  resolve: (result: AppendResult) => void;
  reject: (error: Error) => void;
}

interface AckWaiter {
  last_offset: number;
  result: AppendResult;
  resolve: (result: AppendResult) => void;
  reject: (error: Error) => void;
}

interface LogFlushWork extends FlushWork {
  offset: number;
}

type LogState = 'open' | 'closing' | 'closed' | 'offline';

export class PartitionLog implements FlushTarget {
  readonly dir: string;
  config: LogConfig;
  private segments: Segment[] = [];
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
  /**
   * Set by replication on a leader: an append resolves only once this resolves too (the in-sync
   * replicas have the batch). Appends with `local_ack` skip it.
   */
  ack_gate: ((result: AppendResult) => Promise<AppendResult>) | null = null;
  private replica_only_ = false;

  /**
   * Set by replication while this log is not its partition's leader: only copies are appended.
   * A follower keeps nothing in the tail cache: clients read from leaders, and a copy's batches
   * then die young instead of holding their whole fetch response in the old generation.
   */
  get replica_only(): boolean {
    return this.replica_only_;
  }

  set replica_only(value: boolean) {
    if (value && !this.replica_only_) this.tail.clear();
    this.replica_only_ = value;
  }

  private queue: PendingAppend[] = [];
  private queue_head = 0;
  private pending_bytes = 0;
  private writing = false;
  private drained: Array<() => void> = [];
  private ack_waiters: AckWaiter[] = [];
  private ack_head = 0;
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
    await log.load_segments(checkpoints.log_start_offset);
    await log.recover(checkpoints.recovery_point, checkpoints.clean_shutdown);
    await log.epochs.load(log.next_offset);
    return log;
  }

  private async load_segments(log_start_checkpoint: number | undefined): Promise<void> {
    const { io } = this.ctx;
    const names = await io.readdir(this.dir);
    const bases: number[] = [];
    const stems = new Set<string>();
    for (const name of names) {
      if (name.endsWith('.tmp')) await io.unlink(path.join(this.dir, name));
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
      this.segments.push(segment);
    }
    this.log_start_offset = log_start_checkpoint ?? (this.segments[0]?.base_offset ?? 0);
    // Segments wholly below the log start were deleted by delete-records or retention before a crash.
    while (this.segments.length > 1 && this.segments[1]!.base_offset <= this.log_start_offset) {
      await this.remove_segment_files(this.segments.shift()!);
    }
    if (this.segments.length === 0) {
      const segment = new Segment(this.dir, this.log_start_offset, 0, now);
      segment.reset_indexes();
      this.segments.push(segment);
    }
    for (let i = 0; i + 1 < this.segments.length; i++) this.segments[i]!.end_offset = this.segments[i + 1]!.base_offset;
  }

  private async recover(recovery_point: number, clean_shutdown: boolean): Promise<void> {
    const { io, handles } = this.ctx;
    const first = this.segments.findIndex((_segment, i) => i === this.segments.length - 1 || this.segments[i + 1]!.base_offset > recovery_point);
    for (let i = first; i < this.segments.length; i++) {
      const segment = this.segments[i]!;
      const is_last = i === this.segments.length - 1;
      let trusted_prefix = false;
      if (clean_shutdown && is_last && segment.size_bytes > 0) {
        // After a clean shutdown the saved indexes are exact; resume the scan at the last entry.
        trusted_prefix = await load_saved_indexes(io, handles, segment);
        if (trusted_prefix) {
          const index = segment.index!;
          const resume = index.count === 0 ? 0 : index.position_at(index.count - 1);
          segment.end_offset = index.count === 0 ? segment.base_offset : segment.base_offset + index.relative_offset_at(index.count - 1);
          index.truncate_to_position(resume);
          segment.time_index!.truncate_to_offset(segment.end_offset - segment.base_offset + 1);
          segment.size_bytes = resume;
        }
      }
      if (!trusted_prefix) {
        segment.reset_indexes();
        segment.size_bytes = 0;
        segment.end_offset = segment.base_offset;
      }
      const file_exists = (await io.stat(segment.log_path)) !== null;
      const stop = file_exists ? await scan_segment(io, handles, segment, this.config.index_interval_bytes) : null;
      segment.assigned_bytes = segment.size_bytes;
      if (stop !== null) {
        this.ctx.logger.warn(
          { partition: this.name, segment: segment.base_offset, position: stop.position, why: stop.why },
          'truncating log tail that failed recovery checks',
        );
        await handles.with_handle(segment.log_path, (fd) => io.ftruncate(fd, stop.position));
        for (const dropped of this.segments.splice(i + 1)) await this.remove_segment_files(dropped);
      }
      if (file_exists) await handles.with_handle(segment.log_path, (fd) => io.fdatasync(fd));
      if (!is_last && stop === null) await this.seal(segment);
      if (stop !== null) break;
    }
    const last = this.active;
    this.next_offset = this.written_offset = this.flushed_offset = last.end_offset;
    this.log_start_offset = Math.min(this.log_start_offset, this.next_offset);
    this.high_watermark = this.next_offset;
  }

  // ---------------------------------------------------------------- the append path

  get active(): Segment {
    return this.segments[this.segments.length - 1]!;
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
    const limits = { message_bytes_max: this.config.message_bytes_max, client_batch: !options.replicated };
    let position = 0;
    let span = 0;
    while (position < records.length) {
      const size = options.checked ? batch_size_at(records, position) : check_batch(records, position, limits);
      assert(size >= BATCH_HEADER_BYTES && position + size <= records.length, `batch at ${position} was not checked`);
      span += batch_last_offset_delta(records, position) + 1;
      position += size;
    }
    if (records.length === 0) throw new InvalidBatchError('truncated', 'no record batch given');
    if (this.pending_bytes + records.length > this.ctx.storage.pending_bytes_max) {
      throw new BackpressureError(this.name, this.pending_bytes, this.ctx.storage.pending_bytes_max);
    }
    const now_ms = this.ctx.clock.now_ms();
    if (this.should_roll(records.length, span, now_ms)) this.roll(now_ms);
    const epoch = options.leader_epoch ?? this.leader_epoch;
    const log_append_time = this.config.timestamp_type === 'log_append';
    const base_offset = this.next_offset;
    let offset = base_offset;
    for (position = 0; position < records.length; ) {
      const size = batch_size_at(records, position);
      if (options.replicated) {
        const given = batch_base_offset(records, position);
        if (given !== offset) throw new InvalidArgumentError(`${this.name}: replicated batch at offset ${given} does not continue the log at ${offset}`);
      } else {
        stamp_batch(records, position, offset, epoch);
        if (log_append_time) stamp_log_append_time(records, position, size, now_ms);
      }
      offset += batch_last_offset_delta(records, position) + 1;
      position += size;
    }
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
      this.queue.push({ segment, position: write_position, buffer: records, base_offset, last_offset: offset - 1, result, resolve, reject });
      this.pump();
    });
  }

  private check_writable(): void {
    if (this.state === 'offline') throw new PartitionOfflineError(this.name, this.offline_reason);
    if (this.state !== 'open') throw new LogClosedError(this.name);
  }

  private should_roll(size: number, span: number, now_ms: number): boolean {
    const active = this.active;
    if (active.assigned_bytes === 0) return false;
    return (
      active.assigned_bytes + size > this.config.segment_bytes ||
      this.next_offset + span - 1 - active.base_offset > RELATIVE_OFFSET_MAX ||
      now_ms - active.created_ms >= this.config.segment_ms
    );
  }

  private roll(now_ms: number): void {
    const segment = new Segment(this.dir, this.next_offset, 0, now_ms);
    segment.reset_indexes();
    const previous = this.active;
    this.segments.push(segment);
    // A segment with nothing left to write can be sealed now; otherwise its last write seals it.
    if (previous.assigned_bytes === previous.size_bytes) void this.seal_quietly(previous);
  }

  /** Starts the next write if none is running: every queued append of one segment, up to the limits. */
  private pump(): void {
    if (this.writing || this.queue_head >= this.queue.length) return;
    const first = this.queue[this.queue_head]!;
    const group: PendingAppend[] = [first];
    let bytes = first.buffer.length;
    for (let i = this.queue_head + 1; i < this.queue.length && group.length < this.ctx.storage.write_batches_max; i++) {
      const next = this.queue[i]!;
      if (next.segment !== first.segment || bytes + next.buffer.length > this.ctx.storage.write_bytes_max) break;
      group.push(next);
      bytes += next.buffer.length;
    }
    this.writing = true;
    void this.write_group(first.segment, group, bytes);
  }

  private async write_group(segment: Segment, group: PendingAppend[], bytes: number): Promise<void> {
    const { io, handles } = this.ctx;
    const position = group[0]!.position;
    assert(position === segment.size_bytes, `write at ${position} but segment ${segment.base_offset} ends at ${segment.size_bytes}`);
    const buffers = group.map((item) => item.buffer);
    try {
      await handles.with_handle(segment.log_path, (fd) => write_all(io, fd, buffers, position), true);
    } catch (error) {
      await this.fail_writes(segment, position, error);
      this.writing = false;
      this.pump();
      this.notify_drained();
      return;
    }
    this.queue_head += group.length;
    if (this.queue_head === this.queue.length) {
      this.queue = [];
      this.queue_head = 0;
    }
    this.pending_bytes -= bytes;
    for (const item of group) this.apply_written(segment, item);
    this.dirty_files.add(segment.log_path);
    if (!segment.file_durable) this.dirty_dirs.add(this.dir);
    const last = group[group.length - 1]!;
    this.written_offset = last.last_offset + 1;
    if (this.policy_kind === 'fsync') {
      for (const item of group) this.ack_waiters.push({ last_offset: item.last_offset, result: item.result, resolve: item.resolve, reject: item.reject });
    } else {
      for (const item of group) item.resolve(item.result);
      this.advance_local_high_watermark(this.written_offset);
    }
    this.ctx.flusher.mark_dirty(this);
    this.notify_progress();
    this.writing = false;
    const still_used = this.queue_head < this.queue.length && this.queue[this.queue_head]!.segment === segment;
    if (segment !== this.active && !still_used) void this.seal_quietly(segment);
    this.pump();
    this.notify_drained();
  }

  private get policy_kind(): string {
    return this.ctx.storage.durability.kind;
  }

  private apply_written(segment: Segment, item: PendingAppend): void {
    const buffer = item.buffer;
    let at = item.position;
    for (let position = 0; position < buffer.length; ) {
      const size = batch_size_at(buffer, position);
      const base_offset = batch_base_offset(buffer, position);
      const last_offset = base_offset + batch_last_offset_delta(buffer, position);
      segment.record_batch(base_offset, last_offset, batch_max_timestamp(buffer, position), at, size, this.config.index_interval_bytes);
      if (!this.replica_only_) this.tail.add(position === 0 && size === buffer.length ? buffer : buffer.subarray(position, position + size), base_offset, last_offset);
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
    const { io, handles } = this.ctx;
    const failed = this.queue.slice(this.queue_head);
    this.queue = [];
    this.queue_head = 0;
    this.pending_bytes = 0;
    const error: StorageError =
      os_error_code(cause) === 'ENOSPC' ? new DiskFullError(this.name, { cause }) : new StorageIOError(this.name, 'write', cause);
    this.ctx.logger.warn({ partition: this.name, segment: segment.base_offset, error: String(cause) }, 'append write failed; rolling back');
    try {
      await handles.with_handle(segment.log_path, (fd) => io.ftruncate(fd, position), true);
    } catch (truncate_error) {
      this.go_offline(`could not cut back a failed write: ${String(truncate_error)}`);
      for (const item of failed) item.reject(new PartitionOfflineError(this.name, this.offline_reason));
      return;
    }
    this.next_offset = failed[0]!.base_offset;
    assert(this.next_offset === segment.end_offset, 'rolled-back offsets must resume at the segment end');
    while (this.active !== segment) {
      const dropped = this.segments.pop()!;
      assert(dropped.is_empty, 'only unwritten segments are dropped after a failed write');
      await this.remove_segment_files(dropped);
    }
    segment.assigned_bytes = segment.size_bytes;
    if (!segment.indexes_loaded) {
      const { io: file_io, handles: cache } = this.ctx;
      if (!(await load_saved_indexes(file_io, cache, segment))) await this.rebuild_indexes(segment);
    }
    this.ctx.index_cache.forget(segment); // active again: its indexes must stay in memory
    for (const item of failed) item.reject(error);
  }

  private go_offline(reason: string): void {
    if (this.state === 'offline') return;
    this.state = 'offline';
    this.offline_reason = reason;
    this.tail.clear();
    this.ctx.logger.error({ partition: this.name, reason }, 'partition offline');
    const error = new PartitionOfflineError(this.name, reason);
    for (let i = this.ack_head; i < this.ack_waiters.length; i++) this.ack_waiters[i]!.reject(error);
    this.ack_waiters = [];
    this.ack_head = 0;
  }

  private notify_drained(): void {
    if (this.writing || this.queue_head < this.queue.length) return;
    for (const resolve of this.drained.splice(0)) resolve();
  }

  /** Resolves once every queued append has been written or refused. */
  private drain_writes(): Promise<void> {
    if (!this.writing && this.queue_head >= this.queue.length) return Promise.resolve();
    return new Promise((resolve) => this.drained.push(resolve));
  }

  // ---------------------------------------------------------------- truncation

  /**
   * Removes every batch reaching `offset` or beyond: a follower's tail that the new leader does not
   * have. Cuts at a batch start, so the new end may be below `offset`; returns it. Waits for queued
   * writes and flushes first, so no write or fsync races the cut.
   */
  async truncate_to(offset: number): Promise<number> {
    this.check_writable();
    assert(Number.isSafeInteger(offset) && offset >= 0, `truncation offset ${offset} is not an offset`);
    await this.drain_writes();
    await this.ctx.flusher.flush_all();
    if (offset >= this.written_offset) return this.written_offset;
    const { io, handles } = this.ctx;
    const index = this.segment_index_of(Math.max(offset, this.log_start_offset));
    for (const dropped of this.segments.splice(index + 1)) await this.remove_segment_files(dropped);
    const segment = this.active;
    this.ctx.index_cache.forget(segment); // active again: its indexes stay in memory
    segment.reset_indexes();
    segment.size_bytes = 0;
    segment.end_offset = segment.base_offset;
    const stop = await scan_segment(io, handles, segment, this.config.index_interval_bytes, offset);
    assert(stop === null, `${this.name}: segment ${segment.base_offset} failed its checks while truncating: ${stop?.why}`);
    await handles.with_handle(segment.log_path, async (fd) => {
      await io.ftruncate(fd, segment.size_bytes);
      await io.fdatasync(fd);
    }, true);
    segment.assigned_bytes = segment.size_bytes;
    const end = segment.end_offset;
    this.next_offset = this.written_offset = end;
    this.flushed_offset = Math.min(this.flushed_offset, end);
    this.high_watermark = Math.min(this.high_watermark, end);
    this.log_start_offset = Math.min(this.log_start_offset, end);
    this.tail.clear();
    await this.epochs.truncate_to(end);
    this.ctx.logger.warn({ partition: this.name, offset, end }, 'log truncated to the leader\'s');
    return end;
  }

  // ---------------------------------------------------------------- durability

  begin_flush(): LogFlushWork | null {
    if (this.state === 'offline' || (this.dirty_files.size === 0 && this.dirty_dirs.size === 0)) return null;
    const work: LogFlushWork = { files: [...this.dirty_files], dirs: [...this.dirty_dirs], offset: this.written_offset };
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
    if (work.dirs.length > 0) for (const segment of this.segments) segment.file_durable = true;
    const offset = (work as LogFlushWork).offset;
    if (offset <= this.flushed_offset) return;
    this.flushed_offset = offset;
    while (this.ack_head < this.ack_waiters.length && this.ack_waiters[this.ack_head]!.last_offset < offset) {
      const waiter = this.ack_waiters[this.ack_head++]!;
      waiter.resolve(waiter.result);
    }
    if (this.ack_head === this.ack_waiters.length) {
      this.ack_waiters = [];
      this.ack_head = 0;
    }
    if (this.policy_kind === 'fsync') this.advance_local_high_watermark(offset);
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

  private advance_local_high_watermark(offset: number): void {
    if (this.high_watermark_mode === 'local') this.move_high_watermark(offset);
  }

  /** The replication hook: the leader sets the high watermark once the in-sync replicas have data. */
  set_high_watermark(offset: number): void {
    assert(this.high_watermark_mode === 'external', 'set_high_watermark needs high_watermark_mode external');
    assert(offset <= this.written_offset, `high watermark ${offset} beyond written end ${this.written_offset}`);
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
   * back far enough, else from the segment file via its sparse index.
   */
  async read(offset: number, bytes_max: number, isolation: ReadIsolation = 'high_watermark'): Promise<ReadResult> {
    if (this.state === 'offline') throw new PartitionOfflineError(this.name, this.offline_reason);
    if (this.state === 'closed') throw new LogClosedError(this.name);
    const limit = isolation === 'log_end' ? this.written_offset : this.high_watermark;
    if (!Number.isSafeInteger(offset) || offset < this.log_start_offset || offset > limit) {
      throw new OffsetOutOfRangeError(this.name, offset, this.log_start_offset, limit);
    }
    let batches: Buffer[] = [];
    if (offset < limit) batches = this.tail.read(offset, bytes_max, limit) ?? (await this.read_files(offset, bytes_max, limit));
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

  private async read_files(offset: number, bytes_max: number, limit: number): Promise<Buffer[]> {
    const { io, handles } = this.ctx;
    for (let i = this.segment_index_of(offset); i < this.segments.length; i++) {
      const segment = this.segments[i]!;
      await this.ensure_indexes(segment);
      const batches = await read_segment(io, handles, segment, offset, this.config.index_interval_bytes, {
        bytes_max,
        offset_limit: limit,
        verify_crc: this.ctx.storage.verify_reads,
        partition: this.name,
      });
      if (batches.length > 0 || segment.end_offset >= limit) return batches;
    }
    return [];
  }

  /** Index of the last segment whose base offset is <= `offset`. */
  private segment_index_of(offset: number): number {
    let low = 0;
    let high = this.segments.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >>> 1;
      if (this.segments[middle]!.base_offset <= offset) low = middle;
      else high = middle - 1;
    }
    return low;
  }

  /** Loads a closed segment's indexes from their files, or rebuilds them by scanning. */
  private async ensure_indexes(segment: Segment): Promise<void> {
    if (segment === this.active) return;
    if (!segment.indexes_loaded) {
      const { io, handles } = this.ctx;
      if (!(await load_saved_indexes(io, handles, segment))) await this.rebuild_indexes(segment);
    }
    this.ctx.index_cache.touch(segment);
  }

  private async rebuild_indexes(segment: Segment): Promise<void> {
    const { io, handles, logger } = this.ctx;
    logger.warn({ partition: this.name, segment: segment.base_offset }, 'index files missing or damaged; rebuilding');
    const size_bytes = segment.size_bytes;
    segment.reset_indexes();
    segment.size_bytes = 0;
    segment.end_offset = segment.base_offset;
    const stop = await scan_segment(io, handles, segment, this.config.index_interval_bytes);
    if (stop !== null) {
      // A closed segment is never truncated here: reads past the damage report corrupt data.
      logger.error({ partition: this.name, segment: segment.base_offset, ...stop }, 'closed segment has damaged batches');
      segment.size_bytes = size_bytes;
    }
    segment.assigned_bytes = segment.size_bytes;
    await this.seal(segment);
  }

  /**
   * The first offset whose record timestamp is >= `timestamp_ms`, below the high watermark; null
   * when no such record exists. Exact for uncompressed batches, batch-granular for compressed ones.
   */
  async offset_for_timestamp(timestamp_ms: number): Promise<{ offset: number; timestamp_ms: number } | null> {
    if (this.state === 'offline') throw new PartitionOfflineError(this.name, this.offline_reason);
    const { io, handles } = this.ctx;
    for (const segment of [...this.segments]) {
      if (segment.end_offset <= this.log_start_offset || segment.base_offset >= this.high_watermark) continue;
      await this.ensure_indexes(segment);
      if (segment.max_timestamp_ms < timestamp_ms) continue;
      const offset = await find_offset_by_time(io, handles, segment, timestamp_ms, this.high_watermark, this.name);
      if (offset !== null) return { offset: Math.max(offset, this.log_start_offset), timestamp_ms };
    }
    return null;
  }

  // ---------------------------------------------------------------- retention and deletion

  /** Advances the log start offset to `offset` (delete-records) and deletes segments wholly below it. */
  async delete_records_before(offset: number): Promise<number> {
    this.check_writable();
    if (offset > this.high_watermark || offset < 0) {
      throw new InvalidArgumentError(`cannot delete records before ${offset}: high watermark is ${this.high_watermark}`);
    }
    if (offset <= this.log_start_offset) return this.log_start_offset;
    this.log_start_offset = offset;
    await this.ctx.persist_log_start();
    await this.delete_segments_below_log_start();
    return this.log_start_offset;
  }

  /** Applies retention_ms and retention_bytes to closed segments; returns how many were deleted. */
  async enforce_retention(now_ms: number): Promise<number> {
    if (this.state !== 'open') return 0;
    const { retention_ms, retention_bytes } = this.config;
    let total_bytes = 0;
    for (const segment of this.segments) total_bytes += segment.size_bytes;
    let new_start = this.log_start_offset;
    for (let i = 0; i < this.segments.length - 1; i++) {
      const segment = this.segments[i]!;
      const next = this.segments[i + 1]!;
      if (next.base_offset > this.high_watermark) break;
      await this.ensure_indexes(segment);
      const expired = retention_ms >= 0 && segment.max_timestamp_ms >= 0 && segment.max_timestamp_ms < now_ms - retention_ms;
      const oversized = retention_bytes >= 0 && total_bytes - segment.size_bytes >= retention_bytes;
      if (!expired && !oversized) break;
      total_bytes -= segment.size_bytes;
      new_start = next.base_offset;
    }
    if (new_start <= this.log_start_offset) return 0;
    const before = this.segments.length;
    this.log_start_offset = new_start;
    await this.ctx.persist_log_start();
    await this.delete_segments_below_log_start();
    return before - this.segments.length;
  }

  private async delete_segments_below_log_start(): Promise<void> {
    while (this.segments.length > 1 && this.segments[1]!.base_offset <= this.log_start_offset) {
      const segment = this.segments.shift()!;
      await this.remove_segment_files(segment);
    }
  }

  private async remove_segment_files(segment: Segment): Promise<void> {
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
  private async seal(segment: Segment): Promise<void> {
    if (segment.deleted || !segment.indexes_loaded) return;
    const size_at_save = segment.size_bytes;
    await save_indexes(this.ctx.io, segment);
    // A failed write can make a sealed segment active again; entries added meanwhile are unsaved.
    if (segment.size_bytes === size_at_save) segment.indexes_saved = true;
    if (segment !== this.active) this.ctx.index_cache.touch(segment);
  }

  private async seal_quietly(segment: Segment): Promise<void> {
    try {
      await this.seal(segment);
    } catch (error) {
      // Index files are rebuilt by recovery when missing; losing one costs a scan, not data.
      this.ctx.logger.warn({ partition: this.name, segment: segment.base_offset, error: String(error) }, 'could not save index files');
    }
  }

  /** Stops appends, writes and syncs everything queued, saves the active segment's indexes. */
  async close(): Promise<void> {
    if (this.state === 'closed' || this.state === 'closing') return;
    const was_offline = this.state === 'offline';
    this.state = 'closing';
    await this.drain_writes();
    if (!was_offline) {
      await this.ctx.flusher.flush_all();
      if (this.active.indexes_loaded && !this.active.indexes_saved) await this.seal_quietly(this.active);
    }
    this.state = was_offline ? 'offline' : 'closed';
    this.tail.clear();
    for (const segment of this.segments) this.ctx.index_cache.forget(segment);
    await this.ctx.handles.forget_prefix(this.dir + path.sep);
  }

  get is_offline(): boolean {
    return this.state === 'offline';
  }

  get segment_count(): number {
    return this.segments.length;
  }

  get size_bytes(): number {
    let total = 0;
    for (const segment of this.segments) total += segment.size_bytes;
    return total;
  }

  /** Base offsets of the segments, oldest first (for tests and admin views). */
  segment_base_offsets(): number[] {
    return this.segments.map((segment) => segment.base_offset);
  }
}
