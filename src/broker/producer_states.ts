// Producer state of every partition this broker holds (producer_state.ts holds one partition's),
// and its life across restarts: a snapshot in the data directory (producer-state.json) taken every
// PRODUCER_STATE_INTERVAL_MS and at close, up to each partition's flushed offset, and on load the
// batch headers written after the snapshot replayed from the log. Followers learn producer state
// as copied batches enter their log (record_batches), so a new leader recognises retries.
import path from 'node:path';
import {
  type EpochEntry,
  type FileIO,
  type Logger,
  type PartitionLog,
  read_whole_file,
  replace_file_atomically,
} from '../storage/index.ts';
import {
  BATCH_HEADER_BYTES,
  batch_base_offset,
  batch_base_sequence,
  batch_last_offset_delta,
  batch_max_timestamp,
  batch_producer_epoch,
  batch_producer_id,
  batch_size_at,
} from '../format/batch_layout.ts';
import { PartitionProducers, last_sequence_of } from './producer_state.ts';
import { ControlType, is_transactional_batch, marker_type } from '../protocol/control_records.ts';
import { rethrow_invariant } from '../core/invariants.ts';

const PRODUCER_STATE_FILE = 'producer-state.json';
const SCAN_READ_BYTES = 1024 * 1024;
/** Periodic snapshots bound how much of the log a restart after a crash replays. */
export const PRODUCER_STATE_INTERVAL_MS = 10_000;

/**
 * Per partition: the offset the state covers, the state, and the log's leader epochs below that
 * offset then (absent in snapshots of earlier versions), to tell whether the log changed since.
 */
type Snapshot = Record<string, { offset: number; producers: unknown; epochs?: EpochEntry[] }>;

export class ProducerStates {
  private readonly partitions = new Map<string, PartitionProducers>();
  private snapshot: Snapshot = {};
  private saves: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly io: FileIO,
    private readonly data_dir: string,
    private readonly logger: Logger,
    /** The partitions to save: every local log of a topic that is not the broker's own. */
    private readonly logs: () => Iterable<PartitionLog>,
  ) {}

  /** Reads the last snapshot and starts taking them periodically. */
  async open(): Promise<void> {
    const bytes = await read_whole_file(this.io, path.join(this.data_dir, PRODUCER_STATE_FILE));
    this.snapshot = bytes ? (JSON.parse(bytes.toString('utf8')) as Snapshot) : {};
    this.timer = setInterval(() => void this.save().catch(rethrow_invariant), PRODUCER_STATE_INTERVAL_MS);
    this.timer.unref();
  }

  has(name: string): boolean {
    return this.partitions.has(name);
  }

  /** The state of a partition, empty at first. */
  of(name: string): PartitionProducers {
    let producers = this.partitions.get(name);
    if (!producers) {
      producers = new PartitionProducers();
      this.partitions.set(name, producers);
    }
    return producers;
  }

  /** Loads a partition's state: the last snapshot, then the batches written after it. */
  async load(log: PartitionLog): Promise<void> {
    const saved = this.snapshot[log.name];
    const producers = saved ? PartitionProducers.from_json(saved.producers) : new PartitionProducers();
    // The log may no longer hold what the snapshot saw: cut below it by recovery (a corrupt or
    // truncated segment), or, on a follower, cut after it was taken and copied again from a new
    // leader (a divergent tail) — the state learnt from the old records is undone, and the log
    // replayed from where the two part (seed 20261202: a marker never learnt, a partition's last
    // stable offset stuck for good).
    const agreed = saved ? agreed_until(saved.offset, saved.epochs, log.epochs.list()) : 0;
    const valid = Math.min(log.written_offset, agreed);
    producers.truncate_from(valid);
    this.partitions.set(log.name, producers);
    let offset = Math.max(valid, log.log_start_offset);
    while (offset < log.written_offset) {
      const { batches } = await log.read(offset, SCAN_READ_BYTES, 'log_end');
      if (batches.length === 0) break;
      for (const batch of batches) {
        record_producer_batches(producers, batch);
        offset = batch_base_offset(batch, 0) + batch_last_offset_delta(batch, 0) + 1;
      }
    }
  }

  /** Batches that entered a log as copies (a follower's): their producer fields are recorded. */
  record_batches(log: PartitionLog, batches: Buffer): void {
    const producers = this.partitions.get(log.name);
    if (producers) record_producer_batches(producers, batches);
  }

  truncated(log: PartitionLog, end: number): void {
    this.partitions.get(log.name)?.truncate_from(end);
  }

  /**
   * A new leader answers retries from this state, so none of it may name offsets its log does not
   * hold. Every truncation and failed append already drops those; any found here is logged, as
   * it shows a path that did not (a retry answered from it would be acknowledged unstored).
   */
  led(log: PartitionLog): void {
    const dropped = this.partitions.get(log.name)?.truncate_from(log.next_offset) ?? 0;
    if (dropped > 0) {
      this.logger.error(
        { partition: log.name, dropped, end: log.next_offset },
        'producer state named batches past the log end',
      );
    }
  }

  forget(name: string): void {
    this.partitions.delete(name);
  }

  /**
   * Saves every partition's state up to its flushed offset: entries of batches not yet durable are
   * left out (a crash may lose them), and a restart replays only what follows. One save at a time.
   */
  save(): Promise<void> {
    const save = async () => {
      const snapshot: Snapshot = {};
      for (const log of this.logs()) {
        if (log.is_offline) continue;
        const flushed = log.flushed_offset;
        snapshot[log.name] = {
          offset: flushed,
          producers: this.partitions.get(log.name)?.to_json(flushed) ?? [],
          epochs: log.epochs.list().filter((entry) => entry.start_offset < flushed),
        };
      }
      await replace_file_atomically(
        this.io,
        path.join(this.data_dir, PRODUCER_STATE_FILE),
        Buffer.from(JSON.stringify(snapshot)),
      );
    };
    const next = this.saves.then(save);
    this.saves = next.catch((error: unknown) => {
      rethrow_invariant(error);
      this.logger.warn({ error: String(error) }, 'could not save producer state');
    });
    return next;
  }

  /** Stops the periodic snapshots and takes the last one. */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.save();
  }
}

/**
 * Up to where a log still holds the records a snapshot taken at `offset` saw: that offset, or the
 * first offset where the log's leader epochs now part from those `saved` then (a record copied
 * again from a new leader carries that leader's epoch). Without `saved`, the offset.
 */
export function agreed_until(offset: number, saved: EpochEntry[] | undefined, now: EpochEntry[]): number {
  if (!saved) return offset;
  for (let i = 0; i < saved.length; i++) {
    const then = saved[i]!;
    const current = now[i];
    if (!current || current.epoch !== then.epoch || current.start_offset !== then.start_offset)
      return Math.min(offset, then.start_offset, current?.start_offset ?? offset);
  }
  return Math.min(offset, now[saved.length]?.start_offset ?? offset);
}

/**
 * Records the producer fields of each batch in `batches` (back to back) into `producers`: its
 * sequence range, and for a transactional batch the transaction it opens or (a marker) ends.
 */
export function record_producer_batches(producers: PartitionProducers, batches: Buffer): void {
  for (
    let position = 0;
    position + BATCH_HEADER_BYTES <= batches.length;
    position += batch_size_at(batches, position)
  ) {
    const producer_id = batch_producer_id(batches, position);
    if (producer_id < 0) continue;
    const base_offset = batch_base_offset(batches, position);
    const epoch = batch_producer_epoch(batches, position);
    if (is_transactional_batch(batches, position)) {
      const marker = marker_type(batches, position);
      if (marker !== null) {
        if (marker === ControlType.COMMIT || marker === ControlType.ABORT) {
          producers.txns.on_marker(producer_id, base_offset, marker === ControlType.COMMIT);
          producers.fence_below(producer_id, epoch);
        }
        continue;
      }
      producers.txns.on_data(producer_id, base_offset);
    }
    const sequence = batch_base_sequence(batches, position);
    if (sequence < 0) continue;
    const delta = batch_last_offset_delta(batches, position);
    producers.record(producer_id, epoch, {
      first_sequence: sequence,
      last_sequence: last_sequence_of(sequence, delta),
      base_offset,
      last_offset: base_offset + delta,
      max_timestamp_ms: batch_max_timestamp(batches, position),
      settled: Promise.resolve(),
    });
  }
}
