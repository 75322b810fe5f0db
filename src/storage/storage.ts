// The storage of one node: a data directory holding one folder per partition, the shared caches and
// file handles, group commit, checkpoints and retention. Front ends and the broker core reach
// partition logs through this class; it knows partitions by name only (no topics, no protocols).
//
// Data directory:
//   <partition>/                     one folder per partition (segments, indexes)
//   recovery-point-offset-checkpoint offsets known flushed, per partition
//   log-start-offset-checkpoint      log start offsets (delete-records, retention)
//   .clean-shutdown                  present only between a clean close and the next open
//   <partition>.<n>.deleted/         a partition being deleted
import path from 'node:path';
import type { FileIO } from './file_io.ts';
import { NodeFileIO } from './node_file_io.ts';
import { HandleCache } from './handle_cache.ts';
import { FlushScheduler } from './flush_scheduler.ts';
import { TailCache } from './tail_cache.ts';
import { IndexCache } from './index_cache.ts';
import { CheckpointFile } from './checkpoint.ts';
import { type Clock, type Logger, SILENT_LOGGER, SYSTEM_CLOCK } from './clock.ts';
import { LOG_CONFIG_DEFAULT, type LogConfig, type StorageConfig } from './config.ts';
import {
  InvalidArgumentError,
  LogClosedError,
  PartitionExistsError,
  UnknownPartitionError,
  assert,
  rethrow_assertion,
} from './errors.ts';
import { DirectorySync, Semaphore, run_bounded } from './concurrency.ts';
import { type LogContext, PartitionLog } from './partition_log.ts';
import { replace_file_atomically } from './file_util.ts';

const RECOVERY_POINTS_FILE = 'recovery-point-offset-checkpoint';
const LOG_STARTS_FILE = 'log-start-offset-checkpoint';
const CLEANER_OFFSETS_FILE = 'cleaner-offset-checkpoint';
const CLEAN_SHUTDOWN_FILE = '.clean-shutdown';
const DELETED_SUFFIX = '.deleted';
/** Partition names: letters, digits, '.', '_', '-'; the same alphabet as Kafka topic names. */
const PARTITION_NAME = /^[A-Za-z0-9._-]{1,255}$/;

export interface StorageOptions {
  io?: FileIO;
  clock?: Clock;
  logger?: Logger;
  /** Settings of each partition found at open; defaults apply when absent. */
  log_config?: (partition: string) => Partial<LogConfig> | undefined;
}

export function validate_partition_name(name: string): void {
  if (!PARTITION_NAME.test(name) || name === '.' || name === '..' || name.endsWith(DELETED_SUFFIX)) {
    throw new InvalidArgumentError(`invalid partition name ${JSON.stringify(name)}`);
  }
}

export class Storage {
  private readonly logs = new Map<string, PartitionLog>();
  private readonly ctx: LogContext;
  private readonly recovery_points: CheckpointFile;
  private readonly log_starts: CheckpointFile;
  /** Where each compacted log's cleaner stopped (SegmentRewriter.cleaned_below). */
  private readonly cleaner_offsets: CheckpointFile;
  private timers: NodeJS.Timeout[] = [];
  /** Bounds partition creations and deletions in flight (each briefly opens directories). */
  private readonly admin_slots: Semaphore;
  private readonly data_dir_sync: DirectorySync;
  private closed = false;
  /**
   * False when the last run did not close cleanly (or its checkpoints were damaged): what the disk
   * had not flushed may be gone then, and a tail lost at a batch boundary looks whole.
   */
  opened_clean = false;
  private deleted_count = 0;
  private readonly creating = new Set<string>();

  private constructor(
    readonly config: StorageConfig,
    private readonly io: FileIO,
    readonly handles: HandleCache,
    readonly flusher: FlushScheduler,
    readonly tail_cache: TailCache,
    readonly index_cache: IndexCache,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {
    this.recovery_points = new CheckpointFile(io, config.data_dir, RECOVERY_POINTS_FILE);
    this.log_starts = new CheckpointFile(io, config.data_dir, LOG_STARTS_FILE);
    this.cleaner_offsets = new CheckpointFile(io, config.data_dir, CLEANER_OFFSETS_FILE);
    this.admin_slots = new Semaphore(config.open_parallelism_max);
    this.data_dir_sync = new DirectorySync((dir) => io.fsync_dir(dir));
    this.ctx = {
      io,
      handles,
      flusher,
      tail_cache,
      index_cache,
      clock,
      logger,
      storage: config,
      persist_log_start: () => this.write_log_starts(),
      persist_cleaner_offsets: () => this.write_cleaner_offsets(),
    };
  }

  static async open(config: StorageConfig, options: StorageOptions = {}): Promise<Storage> {
    const io = options.io ?? new NodeFileIO();
    const handles = new HandleCache(io, config.handles_max);
    const storage = new Storage(
      config,
      io,
      handles,
      new FlushScheduler(io, handles, config.durability, config.flush_parallelism_max),
      new TailCache(config.tail_cache_bytes_max),
      new IndexCache(config.index_cache_bytes_max),
      options.clock ?? SYSTEM_CLOCK,
      options.logger ?? SILENT_LOGGER,
    );
    await storage.load(options.log_config ?? (() => undefined));
    storage.start_timers();
    return storage;
  }

  private async load(log_config: (partition: string) => Partial<LogConfig> | undefined): Promise<void> {
    const { io } = this;
    const dir = this.config.data_dir;
    if ((await io.stat(dir)) === null) {
      await io.mkdir(dir);
      await io.fsync_dir(path.dirname(path.resolve(dir)));
    }
    const recovery = await this.recovery_points.read();
    const starts = await this.log_starts.read();
    // A damaged cleaner checkpoint only costs a full pass: every log is taken as dirty.
    const cleaned = await this.cleaner_offsets.read();
    if (recovery.damaged || starts.damaged) {
      this.logger.warn(
        { recovery_points: recovery.damaged, log_starts: starts.damaged },
        'damaged checkpoint file; recovering every partition in full',
      );
    }
    const clean_shutdown = (await io.stat(path.join(dir, CLEAN_SHUTDOWN_FILE))) !== null;
    if (clean_shutdown) {
      await io.unlink(path.join(dir, CLEAN_SHUTDOWN_FILE));
      await io.fsync_dir(dir);
    }
    this.opened_clean = clean_shutdown && !recovery.damaged;
    const names: string[] = [];
    for (const name of await io.readdir(dir)) {
      const stat = await io.stat(path.join(dir, name));
      if (!stat?.is_directory) continue;
      if (name.endsWith(DELETED_SUFFIX)) await io.remove_tree(path.join(dir, name));
      else if (PARTITION_NAME.test(name)) names.push(name);
    }
    await run_bounded(names, this.config.open_parallelism_max, async (name) => {
      const log = await PartitionLog.open(
        this.ctx,
        name,
        { ...LOG_CONFIG_DEFAULT, ...log_config(name) },
        {
          recovery_point: recovery.offsets.get(name) ?? 0,
          log_start_offset: starts.offsets.get(name),
          clean_shutdown: this.opened_clean,
        },
      );
      if (!cleaned.damaged) log.rewriter.cleaned_below = cleaned.offsets.get(name) ?? 0;
      this.logs.set(name, log);
    });
    await this.write_recovery_points();
  }

  /** A background round failed: logged, and retried on the next tick (a broken invariant stops the process). */
  private log_failure(error: unknown, what: string): void {
    rethrow_assertion(error);
    this.logger.warn({ error: String(error) }, what);
  }

  private start_timers(): void {
    this.flusher.start();
    const checkpoint = setInterval(
      () => void this.checkpoint().catch((error) => this.log_failure(error, 'checkpoint failed')),
      this.config.checkpoint_interval_ms,
    );
    checkpoint.unref();
    this.timers.push(checkpoint);
    if (this.config.retention_check_interval_ms > 0) {
      const retention = setInterval(
        () => void this.enforce_retention().catch((error) => this.log_failure(error, 'retention failed')),
        this.config.retention_check_interval_ms,
      );
      retention.unref();
      this.timers.push(retention);
    }
  }

  get data_dir(): string {
    return this.config.data_dir;
  }

  partition(name: string): PartitionLog | undefined {
    return this.logs.get(name);
  }

  require(name: string): PartitionLog {
    const log = this.logs.get(name);
    if (!log) throw new UnknownPartitionError(name);
    return log;
  }

  partition_names(): string[] {
    return [...this.logs.keys()];
  }

  get partition_count(): number {
    return this.logs.size;
  }

  async create_partition(name: string, config: Partial<LogConfig> = {}): Promise<PartitionLog> {
    validate_partition_name(name);
    return this.admin_slots.with(async () => {
      if (this.closed) throw new LogClosedError(name);
      if (this.logs.has(name) || this.creating.has(name)) throw new PartitionExistsError(name);
      this.creating.add(name);
      try {
        const dir = path.join(this.config.data_dir, name);
        await this.io.mkdir(dir);
        await this.data_dir_sync.request(this.config.data_dir);
        const log = await PartitionLog.open(
          this.ctx,
          name,
          { ...LOG_CONFIG_DEFAULT, ...config },
          {
            recovery_point: 0,
            log_start_offset: undefined,
            clean_shutdown: false,
          },
        );
        this.logs.set(name, log);
        return log;
      } finally {
        this.creating.delete(name);
      }
    });
  }

  /**
   * Deletes a partition: the folder is renamed aside (atomic, durable) and then removed. A crash in
   * between leaves a *.deleted folder that the next open removes.
   */
  async delete_partition(name: string): Promise<void> {
    const log = this.require(name);
    this.logs.delete(name);
    await this.admin_slots.with(async () => {
      await log.close();
      const doomed = path.join(this.config.data_dir, `${name}.${Date.now()}-${this.deleted_count++}${DELETED_SUFFIX}`);
      await this.io.rename(log.dir, doomed);
      await this.data_dir_sync.request(this.config.data_dir);
      await Promise.all([this.write_log_starts(), this.write_recovery_points()]);
      await this.io.remove_tree(doomed);
    });
  }

  /** Flushes what is written and records each partition's flushed offset as its recovery point. */
  async checkpoint(): Promise<void> {
    await this.flusher.flush_all();
    await this.write_recovery_points();
  }

  private write_recovery_points(): Promise<void> {
    return this.recovery_points.write(() => {
      const offsets = new Map<string, number>();
      for (const [name, log] of this.logs) offsets.set(name, log.flushed_offset);
      return offsets;
    });
  }

  private write_log_starts(): Promise<void> {
    return this.log_starts.write(() => {
      const offsets = new Map<string, number>();
      for (const [name, log] of this.logs) offsets.set(name, log.log_start_offset);
      return offsets;
    });
  }

  private write_cleaner_offsets(): Promise<void> {
    return this.cleaner_offsets.write(() => {
      const offsets = new Map<string, number>();
      for (const [name, log] of this.logs)
        if (log.rewriter.cleaned_below > 0) offsets.set(name, log.rewriter.cleaned_below);
      return offsets;
    });
  }

  async enforce_retention(): Promise<number> {
    let deleted = 0;
    const now_ms = this.clock.now_ms();
    for (const log of [...this.logs.values()]) deleted += await log.enforce_retention(now_ms);
    return deleted;
  }

  /**
   * Clean shutdown: refuse new appends, write and sync everything queued, save indexes, record
   * recovery points and log starts, then mark the directory cleanly closed.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.halt();
    const logs = [...this.logs.values()];
    await run_bounded(logs, this.config.open_parallelism_max, (log) => log.close());
    await this.write_recovery_points();
    await this.write_log_starts();
    if (logs.every((log) => !log.is_offline)) {
      await replace_file_atomically(this.io, path.join(this.config.data_dir, CLEAN_SHUTDOWN_FILE), Buffer.alloc(0));
    }
    await this.handles.close_all();
    assert(this.handles.open_count === 0, 'file handles left open after close');
  }

  /** Stops timers without touching the disk (after a simulated crash, in tests). */
  halt(): void {
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
    this.flusher.stop();
  }

  stats(): {
    partitions: number;
    open_files: number;
    tail_cache_bytes: number;
    index_cache_bytes: number;
    flush_rounds: number;
  } {
    return {
      partitions: this.logs.size,
      open_files: this.handles.open_count,
      tail_cache_bytes: this.tail_cache.bytes,
      index_cache_bytes: this.index_cache.bytes,
      flush_rounds: this.flusher.rounds,
    };
  }
}
