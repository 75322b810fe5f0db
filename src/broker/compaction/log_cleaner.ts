// Log compaction (cleanup.policy=compact): one cleaner per broker keeps, in every compacted log it
// holds (led or followed: each replica cleans its own copy), the latest record of each key. A pass
// over a log:
//   1. takes the closed segments below the high watermark and the flushed offset whose newest
//      record is older than min.compaction.lag.ms (the active segment is never touched);
//   2. measures the dirty ratio (bytes from the first offset no pass has mapped on, over all of
//      them) and goes on only past min.cleanable.dirty.ratio, or once the oldest dirty segment is
//      older than max.compaction.lag.ms;
//   3. maps each key of the dirty segments to its latest offset, within cleaner_memory_bytes_max
//      (what does not fit waits for the next pass);
//   4. rewrites the segments up to where the map reaches, oldest first, each by the storage's
//      crash-safe swap (storage/segment_rewriter.ts): a record goes when a later record of its key
//      is mapped, a tombstone when it is older than delete.retention.ms; a batch left empty goes,
//      unless it is one of its idempotent producer's retained batches (the producer state of a copy
//      rebuilt from the log needs them), which stays as an empty batch.
// Batches of transactions and control batches are kept whole, and their records neither go nor
// make others go: a transaction's outcome is not the cleaner's to judge. Records without a key
// (written before the topic was compacted) stay. Offsets never change; consumers see gaps.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock, Logger } from '../../core/clock.ts';
import type { CompactionProgress } from '../../core/types.ts';
import type { PartitionLog, SegmentView } from '../../storage/index.ts';
import { batch_base_offset, batch_producer_id } from '../../format/batch_layout.ts';
import { is_control_batch, is_transactional_batch } from '../../protocol/control_records.ts';
import type { PartitionProducers } from '../producer_state.ts';
import { batch_keeping, records_of, type RecordSlot } from './batch_records.ts';
import { KeyMap } from './key_map.ts';

export interface CleanerSettings {
  /** How often the cleaner looks at the compacted logs. */
  interval_ms: number;
  /** Memory for the map of keys to their latest offsets, in one pass over one log. */
  memory_bytes_max: number;
  /** Segment bytes read and written per second at most; 0 for no limit. */
  io_bytes_per_s_max: number;
}

/** The compaction configs of a topic, from its topic configs. */
export interface CompactionConfig {
  delete_retention_ms: number;
  min_compaction_lag_ms: number;
  max_compaction_lag_ms: number;
  min_cleanable_dirty_ratio: number;
}

export interface CompactedLog {
  topic: string;
  partition: number;
  log: PartitionLog;
  config: CompactionConfig;
  /** The partition's idempotent producers: their retained batches are never dropped whole. */
  producers: PartitionProducers | null;
}

/** A compacted log's progress, for metrics and `sluice topic describe`. */
export interface CompactionStatus extends CompactionProgress {
  topic: string;
  partition: number;
}

/** Segment data read (and written) per step of a pass. */
const CHUNK_BYTES = 1024 * 1024;

export class LogCleaner {
  private readonly statuses = new Map<string, CompactionStatus>();
  private timer: NodeJS.Timeout | null = null;
  private pass: Promise<void> | null = null;
  private stopped = false;
  /** The start of the current throttling second, and the bytes moved in it. */
  private io_window = { started_ms: 0, bytes: 0 };

  constructor(
    private readonly logs: () => Iterable<CompactedLog>,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly settings: CleanerSettings,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.run_once(), this.settings.interval_ms);
    this.timer.unref();
  }

  /** Stops the timer and waits for a pass under way to finish its segment. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.pass;
  }

  /** One pass over every compacted log (a pass already running is waited for instead). */
  run_once(): Promise<void> {
    this.pass ??= this.clean_all().finally(() => (this.pass = null));
    return this.pass;
  }

  statuses_now(): CompactionStatus[] {
    return [...this.statuses.values()];
  }

  /** A local log's progress, once a pass looked at it. */
  status(log_name: string): CompactionStatus | null {
    return this.statuses.get(log_name) ?? null;
  }

  private async clean_all(): Promise<void> {
    const seen = new Set<string>();
    for (const entry of [...this.logs()]) {
      if (this.stopped) return;
      seen.add(entry.log.name);
      try {
        await this.clean(entry);
      } catch (error) {
        if (this.stopped) return;
        this.logger.warn({ partition: entry.log.name, error: String(error) }, 'log compaction pass failed');
      }
    }
    for (const name of this.statuses.keys()) if (!seen.has(name)) this.statuses.delete(name);
  }

  private status_of(entry: CompactedLog): CompactionStatus {
    let status = this.statuses.get(entry.log.name);
    if (!status) {
      status = {
        topic: entry.topic,
        partition: entry.partition,
        dirty_ratio: 0,
        // Where it stopped before a restart (cleaner-offset-checkpoint), else the log's start.
        first_dirty_offset: Math.max(entry.log.log_start_offset, entry.log.rewriter.cleaned_below),
        passes: 0,
        bytes_read: 0,
        bytes_written: 0,
        last_cleaned_ms: -1,
      };
      this.statuses.set(entry.log.name, status);
    }
    return status;
  }

  /** One pass over one log (steps 1 to 4 above). */
  private async clean(entry: CompactedLog): Promise<void> {
    const { log, config } = entry;
    const status = this.status_of(entry);
    const now_ms = this.clock.now_ms();
    const views = cleanable(await log.rewriter.closed_below(Number.POSITIVE_INFINITY), config, now_ms);
    const dirty = views.filter((view) => view.end_offset > status.first_dirty_offset);
    status.dirty_ratio = dirty_ratio(views, dirty);
    const oldest = dirty[0]?.max_timestamp_ms ?? -1;
    const overdue = oldest >= 0 && oldest < now_ms - config.max_compaction_lag_ms;
    if (dirty.length === 0 || (status.dirty_ratio < config.min_cleanable_dirty_ratio && !overdue)) return;
    const map = new KeyMap(this.settings.memory_bytes_max);
    const mapped_end = await this.map_keys(log, dirty, map, status);
    if (mapped_end < 0) {
      this.logger.warn({ partition: log.name }, 'log compaction: one segment has more keys than the cleaner memory');
      return;
    }
    const horizon_ms = now_ms - config.delete_retention_ms;
    const before = { read: status.bytes_read, written: status.bytes_written };
    let rewrote = false;
    for (const view of views) {
      if (this.stopped) return;
      if (view.end_offset > mapped_end) break;
      rewrote = (await this.rewrite(entry, view, map, horizon_ms, status)) || rewrote;
    }
    this.logger.info(
      {
        partition: log.name,
        keys: map.size,
        segment_bytes: views.filter((view) => view.end_offset <= mapped_end).reduce((n, v) => n + v.size_bytes, 0),
        bytes_read: status.bytes_read - before.read,
        bytes_written: status.bytes_written - before.written,
        duration_ms: this.clock.now_ms() - now_ms,
      },
      'log compaction pass',
    );
    status.passes++;
    status.first_dirty_offset = mapped_end;
    await log.rewriter.mark_cleaned_below(mapped_end);
    status.dirty_ratio = dirty_ratio(
      views,
      dirty.filter((view) => view.end_offset > mapped_end),
    );
    if (rewrote) status.last_cleaned_ms = this.clock.now_ms();
  }

  /**
   * Maps the keys of the dirty segments, oldest first, while the memory allows: returns the end of
   * the last segment mapped whole (-1 when not even the first fits).
   */
  private async map_keys(log: PartitionLog, dirty: SegmentView[], map: KeyMap, status: CompactionStatus) {
    let mapped_end = -1;
    for (const view of dirty) {
      for await (const batches of log.rewriter.batches(view, CHUNK_BYTES)) {
        for (const batch of batches) {
          if (is_control_batch(batch) || is_transactional_batch(batch)) continue;
          for (const record of (await records_of(batch)).records) {
            if (record.key !== null && !map.put(record.key, record.offset)) return mapped_end;
          }
        }
        await this.throttle(batches, status, 'read');
      }
      mapped_end = view.end_offset;
    }
    return mapped_end;
  }

  /** Rewrites one segment without what later records of the map supersede; true when it changed. */
  private async rewrite(
    entry: CompactedLog,
    view: SegmentView,
    map: KeyMap,
    horizon_ms: number,
    status: CompactionStatus,
  ): Promise<boolean> {
    const { log } = entry;
    const gone = (record: RecordSlot) =>
      record.key !== null &&
      ((map.latest(record.key) ?? record.offset) > record.offset ||
        (record.tombstone && record.timestamp_ms < horizon_ms));
    const result = await log.rewriter.rewrite(view, async (write) => {
      let changed = false;
      for await (const batches of log.rewriter.batches(view, CHUNK_BYTES)) {
        const kept: Buffer[] = [];
        for (const batch of batches) {
          const out = await this.compact_batch(entry, batch, gone);
          if (out !== batch) changed = true;
          if (out) kept.push(out);
        }
        await write(kept);
        await this.throttle(batches, status, 'read');
        await this.throttle(kept, status, 'written');
      }
      return changed;
    });
    if (result.swapped) {
      this.logger.info(
        {
          partition: log.name,
          segment: view.base_offset,
          bytes_before: result.bytes_before,
          bytes_after: result.bytes_after,
        },
        'segment compacted',
      );
    }
    return result.swapped;
  }

  /** The batch without its records that `gone` names: itself, a smaller one, an empty one, or null. */
  private async compact_batch(
    entry: CompactedLog,
    batch: Buffer,
    gone: (record: RecordSlot) => boolean,
  ): Promise<Buffer | null> {
    if (is_control_batch(batch) || is_transactional_batch(batch)) return batch;
    const { plain, records } = await records_of(batch);
    if (records.length === 0) return batch; // an empty batch kept for its producer before
    const kept = records.filter((record) => !gone(record));
    if (kept.length === 0 && !retained_by_producer(entry.producers, batch)) return null;
    return batch_keeping(batch, plain, records, kept);
  }

  /** Counts `batches` into the status and waits when the I/O limit says so. */
  private async throttle(batches: readonly Buffer[], status: CompactionStatus, way: 'read' | 'written') {
    let bytes = 0;
    for (const batch of batches) bytes += batch.length;
    if (way === 'read') status.bytes_read += bytes;
    else status.bytes_written += bytes;
    const limit = this.settings.io_bytes_per_s_max;
    if (limit <= 0) return;
    const now_ms = this.clock.now_ms();
    if (now_ms - this.io_window.started_ms >= 1000) this.io_window = { started_ms: now_ms, bytes: 0 };
    this.io_window.bytes += bytes;
    if (this.io_window.bytes >= limit) await sleep(this.io_window.started_ms + 1000 - now_ms);
  }
}

/** The oldest segments up to the first whose newest record is younger than min.compaction.lag.ms. */
function cleanable(views: SegmentView[], config: CompactionConfig, now_ms: number): SegmentView[] {
  const young = views.findIndex((view) => view.max_timestamp_ms > now_ms - config.min_compaction_lag_ms);
  return young < 0 ? views : views.slice(0, young);
}

function dirty_ratio(views: readonly SegmentView[], dirty: readonly SegmentView[]): number {
  let total = 0;
  let dirty_bytes = 0;
  for (const view of views) total += view.size_bytes;
  for (const view of dirty) dirty_bytes += view.size_bytes;
  return total === 0 ? 0 : dirty_bytes / total;
}

/** Whether the batch is one of its idempotent producer's retained batches (kept, if only as an empty batch). */
function retained_by_producer(producers: PartitionProducers | null, batch: Buffer): boolean {
  const producer_id = batch_producer_id(batch, 0);
  if (producer_id < 0 || !producers) return false;
  const base_offset = batch_base_offset(batch, 0);
  return producers.producers.get(producer_id)?.batches.some((entry) => entry.base_offset === base_offset) ?? false;
}
