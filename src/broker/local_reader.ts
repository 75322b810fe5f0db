// A partition this broker holds, read as the broker's own readers (share groups, dead letters,
// the admin API) read any partition: the local log's bounds and batches, joined to the transactions
// the core learnt from the log's batches (txn/partition_txns.ts). Storage knows nothing of
// transactions; this is where the two meet.
import type { CommittedRead, PartitionReader } from '../core/partition_reader.ts';
import type { PartitionTransactions } from '../core/types.ts';
import type { PartitionLog } from '../storage/index.ts';
import { batch_base_offset, batch_last_offset } from '../format/batch_layout.ts';
import type { PartitionTxns } from './txn/partition_txns.ts';

/**
 * The transactions of a local log as read_committed readers see them; `txns` is looked up at each
 * call (a partition's state is replaced when it is loaded again), null when the log has none.
 */
export function log_transactions(log: PartitionLog, txns: () => PartitionTxns | null): PartitionTransactions {
  return {
    last_stable_offset: () => txns()?.last_stable_offset(log.high_watermark) ?? log.high_watermark,
    aborted_in(from, to) {
      const state = txns();
      if (!state) return [];
      state.prune_before(log.log_start_offset);
      return state.aborted_in(from, to, log.high_watermark).map(({ producer_id, first_offset }) => ({
        producer_id,
        first_offset,
      }));
    },
  };
}

export class LocalReader implements PartitionReader {
  constructor(
    private readonly log: PartitionLog,
    private readonly txns: PartitionTransactions,
  ) {}

  get log_start_offset(): number {
    return this.log.log_start_offset;
  }

  get high_watermark(): number {
    return this.log.high_watermark;
  }

  get last_stable_offset(): number {
    return this.txns.last_stable_offset();
  }

  read(offset: number, bytes_max: number): Promise<{ batches: Buffer[] }> {
    return this.log.read(offset, bytes_max);
  }

  /**
   * The stable offset is taken before the read: it only grows, and every transaction with records
   * below it has ended with a marker below the high watermark, so the aborted ones are all known.
   */
  async read_committed(offset: number, bytes_max: number): Promise<CommittedRead> {
    const stable = this.txns.last_stable_offset();
    if (offset >= stable) return { batches: [], aborted: [] };
    const { batches } = await this.log.read(offset, bytes_max);
    // A batch never straddles the stable offset: it is a batch's base offset or the high watermark.
    const kept = batches.filter((batch) => batch_base_offset(batch, 0) < stable);
    if (kept.length === 0) return { batches: kept, aborted: [] };
    const to = batch_last_offset(kept[kept.length - 1]!, 0) + 1;
    return { batches: kept, aborted: this.txns.aborted_in(offset, to) };
  }

  on_high_watermark(listener: (high_watermark: number) => void): () => void {
    return this.log.on_high_watermark(listener);
  }

  offset_for_timestamp(timestamp_ms: number): Promise<{ offset: number; timestamp_ms: number } | null> {
    return this.log.offset_for_timestamp(timestamp_ms);
  }
}
