// Replaying an internal log into a coordinator's memory when it starts on the log's leader.
import { decode_record_batch, type DecodedRecord } from '../protocol/record_batch.ts';
import { batch_last_offset } from '../format/batch_layout.ts';
import type { PartitionLog } from '../storage/index.ts';

const READ_BYTES = 1024 * 1024;

/**
 * Calls `visit` with every record of `log`, in order, from its start to its end: the end, not the
 * high watermark. A broker that has just become leader may not have heard the high watermark its
 * predecessor reached, yet its log holds every record acknowledged there, and the followers copy
 * this log, so a coordinator that stopped at its own high watermark would forget commits that
 * were acknowledged (a committed offset going back after a coordinator moved).
 */
export async function replay_log(
  log: PartitionLog,
  visit: (record: DecodedRecord, batch: Buffer) => void | Promise<void>,
): Promise<void> {
  let offset = log.log_start_offset;
  while (offset < log.written_offset) {
    const { batches } = await log.read(offset, READ_BYTES, 'log_end');
    if (batches.length === 0) break;
    for (const batch of batches) {
      for (const record of decode_record_batch(batch)) if (record.offset >= offset) await visit(record, batch);
      offset = batch_last_offset(batch, 0) + 1;
    }
  }
}
