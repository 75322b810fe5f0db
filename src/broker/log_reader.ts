// Reading records (not batches) from a partition for tools that look inside messages: the admin
// API's message browser and redrive. Off the hot path: batches are decompressed and decoded here.
// Transaction markers are no messages and are never returned; a committed read (redrive) also
// leaves out aborted transactions' records and stops at the last stable offset.
import { decompress_record_batch } from '../protocol/compression.ts';
import { decode_record_batch, type DecodedRecord } from '../protocol/record_batch.ts';
import { batch_last_offset } from '../format/batch_layout.ts';
import type { CommittedRead, PartitionReader } from '../core/partition_reader.ts';
import { hidden_batches } from './txn/hidden_batches.ts';

/** Bytes asked of the log per read. */
const READ_BYTES = 1024 * 1024;

export interface RecordsRead {
  records: DecodedRecord[];
  /** Where the next read continues (past the last record returned, or past skipped gaps). */
  next_offset: number;
}

/**
 * Records from `from_offset` (moved up to the log start) below the high watermark (the last stable
 * offset when `committed`), at most `records_max` of them and about `bytes_max` bytes of stored
 * batches (at least one batch).
 */
export async function read_records(
  log: PartitionReader,
  from_offset: number,
  records_max: number,
  bytes_max: number,
  committed = false,
): Promise<RecordsRead> {
  let offset = Math.max(from_offset, log.log_start_offset);
  const end = committed ? log.last_stable_offset : log.high_watermark;
  const records: DecodedRecord[] = [];
  let bytes = 0;
  while (offset < end && records.length < records_max && (bytes === 0 || bytes < bytes_max)) {
    const asked = Math.max(1, Math.min(READ_BYTES, bytes_max - bytes));
    const { batches, aborted }: CommittedRead = committed
      ? await log.read_committed(offset, asked)
      : { batches: (await log.read(offset, asked)).batches, aborted: [] };
    if (batches.length === 0) break;
    const hidden = hidden_batches(batches, committed ? aborted : null);
    for (const [i, batch] of batches.entries()) {
      const last_offset = batch_last_offset(batch, 0);
      if (last_offset < offset) continue;
      bytes += batch.length;
      const shown = hidden[i] ? [] : decode_record_batch(await decompress_record_batch(batch));
      for (const record of shown) {
        if (record.offset < offset || record.offset >= end) continue;
        if (records.length >= records_max) break;
        records.push(record);
        offset = record.offset + 1;
      }
      if (records.length >= records_max) break;
      offset = Math.max(offset, Math.min(last_offset + 1, end));
      if (bytes >= bytes_max) break;
    }
  }
  return { records, next_offset: offset };
}
