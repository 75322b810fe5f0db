// Idempotent producers: per partition and producer id, the epoch and the last five batches
// (sequence range and offsets). A retried batch that matches one of them is answered with its
// original offsets; a gap in sequence numbers is refused. Entries are recorded when the log assigns
// offsets and removed again if that append fails, so only appended batches count.
import { BrokerError } from '../core/errors.ts';
import type { ActiveProducer } from '../core/types.ts';
import { PartitionTxns, type PartitionTxnsJson } from './txn/partition_txns.ts';

export const BATCHES_RETAINED = 5;
const SEQUENCE_MAX = 0x7fffffff;

export interface BatchEntry {
  first_sequence: number;
  last_sequence: number;
  base_offset: number;
  last_offset: number;
  /** The batch's largest timestamp (-1: not known, a snapshot from before it was kept). */
  max_timestamp_ms: number;
  /** Resolves when the append is acknowledged; a duplicate is answered only after it. */
  settled: Promise<unknown>;
}

interface ProducerEntry {
  epoch: number;
  batches: BatchEntry[];
}

export function last_sequence_of(first_sequence: number, last_offset_delta: number): number {
  const last = first_sequence + last_offset_delta;
  return last > SEQUENCE_MAX ? last - SEQUENCE_MAX - 1 : last;
}

function next_sequence(sequence: number): number {
  return sequence === SEQUENCE_MAX ? 0 : sequence + 1;
}

export class PartitionProducers {
  readonly producers = new Map<number, ProducerEntry>();
  /** The partition's transactions (open, ending, aborted), learnt from the same batches. */
  txns = new PartitionTxns();

  /** Each producer with state here: its epoch, last sequence and open transaction's start. */
  describe(): ActiveProducer[] {
    return [...this.producers].map(([producer_id, entry]) => ({
      producer_id,
      producer_epoch: entry.epoch,
      last_sequence: entry.batches.at(-1)?.last_sequence ?? -1,
      last_timestamp_ms: entry.batches.at(-1)?.max_timestamp_ms ?? -1,
      current_txn_start_offset: this.txns.open_start(producer_id),
    }));
  }

  /** The retained batch this one duplicates, or null when it is new; throws on a gap or old epoch. */
  check(producer_id: number, epoch: number, first_sequence: number, last_sequence: number): BatchEntry | null {
    const entry = this.producers.get(producer_id);
    if (!entry) return null; // no state (new producer, or state expired): any sequence starts it
    if (epoch < entry.epoch) {
      throw new BrokerError(
        'invalid_producer_epoch',
        `producer ${producer_id} epoch ${epoch} is older than ${entry.epoch}`,
      );
    }
    if (epoch > entry.epoch) {
      if (first_sequence !== 0) {
        throw new BrokerError(
          'out_of_order_sequence',
          `producer ${producer_id} new epoch ${epoch} must start at sequence 0, not ${first_sequence}`,
        );
      }
      return null;
    }
    for (const batch of entry.batches) {
      if (batch.first_sequence === first_sequence && batch.last_sequence === last_sequence) return batch;
    }
    const last = entry.batches[entry.batches.length - 1];
    if (last && first_sequence !== next_sequence(last.last_sequence)) {
      throw new BrokerError(
        'out_of_order_sequence',
        `producer ${producer_id} sent sequence ${first_sequence}, expected ${next_sequence(last.last_sequence)}`,
      );
    }
    return null;
  }

  record(producer_id: number, epoch: number, batch: BatchEntry): void {
    let entry = this.producers.get(producer_id);
    if (!entry || epoch > entry.epoch) {
      entry = { epoch, batches: [] };
      this.producers.set(producer_id, entry);
    }
    entry.batches.push(batch);
    if (entry.batches.length > BATCHES_RETAINED) entry.batches.shift();
  }

  /** Undoes record() for an append that failed (its offsets were handed out again). */
  forget(producer_id: number, batch: BatchEntry): void {
    const entry = this.producers.get(producer_id);
    if (!entry) return;
    entry.batches = entry.batches.filter((b) => b !== batch);
    if (entry.batches.length === 0) this.producers.delete(producer_id);
  }

  /**
   * A transaction marker written with `epoch`: the producer's batches of an older epoch are fenced
   * from now on (the coordinator bumps the epoch when it aborts a transaction on its own).
   */
  fence_below(producer_id: number, epoch: number): void {
    const entry = this.producers.get(producer_id);
    if (!entry) this.producers.set(producer_id, { epoch, batches: [] });
    else if (epoch > entry.epoch) this.producers.set(producer_id, { epoch, batches: [] });
  }

  /** Drops batches at or past `offset` (the log was truncated there); returns how many went. */
  truncate_from(offset: number): number {
    this.txns.truncate_from(offset);
    let dropped = 0;
    for (const [id, entry] of this.producers) {
      const kept = entry.batches.filter((b) => b.last_offset < offset);
      dropped += entry.batches.length - kept.length;
      entry.batches = kept;
      if (kept.length === 0) this.producers.delete(id);
    }
    return dropped;
  }

  /** The state as of `offset`: only batches that end before it. */
  to_json(offset: number): ProducersJson {
    const out = [];
    for (const [id, entry] of this.producers) {
      const batches = entry.batches
        .filter((b) => b.last_offset < offset)
        .map(({ first_sequence, last_sequence, base_offset, last_offset, max_timestamp_ms }) => ({
          first_sequence,
          last_sequence,
          base_offset,
          last_offset,
          max_timestamp_ms,
        }));
      if (batches.length > 0) out.push({ id, epoch: entry.epoch, batches });
    }
    return { producers: out, txns: this.txns.to_json(offset) };
  }

  static from_json(json: unknown): PartitionProducers {
    const state = new PartitionProducers();
    // Snapshots before transactions hold the list of producers alone.
    const saved = Array.isArray(json) ? { producers: json as ProducersJson['producers'] } : (json as ProducersJson);
    state.txns = PartitionTxns.from_json(saved.txns);
    for (const item of saved.producers) {
      state.producers.set(item.id, {
        epoch: item.epoch,
        batches: item.batches.map((b) => ({
          ...b,
          max_timestamp_ms: b.max_timestamp_ms ?? -1,
          settled: Promise.resolve(),
        })),
      });
    }
    return state;
  }
}

export interface ProducersJson {
  /** max_timestamp_ms is absent from snapshots written before it was kept. */
  producers: Array<{
    id: number;
    epoch: number;
    batches: Array<Omit<BatchEntry, 'settled' | 'max_timestamp_ms'> & { max_timestamp_ms?: number }>;
  }>;
  txns?: PartitionTxnsJson;
}
