// Reading records (not batches) from a partition for tools that look inside messages: the admin
// API's message browser and redrive. Off the hot path: batches are decompressed and decoded here.
import { decompress_record_batch } from '../protocol/compression.ts';
import { decode_record_batch, type DecodedRecord } from '../protocol/record_batch.ts';
import { batch_last_offset } from '../format/batch_layout.ts';
import type { PartitionReader } from '../core/partition_reader.ts';

/** Bytes asked of the log per read. */
const READ_BYTES = 1024 * 1024;

export interface RecordsRead {
  records: DecodedRecord[];
  /** Where the next read continues (past the last record returned, or past skipped gaps). */
  next_offset: number;
}

/**
 * Records from `from_offset` (moved up to the log start) below the high watermark, at most
 * `records_max` of them and about `bytes_max` bytes of stored batches (at least one batch).
 */
export async function read_records(
  log: PartitionReader,
  from_offset: number,
  records_max: number,
  bytes_max: number,
): Promise<RecordsRead> {
  let offset = Math.max(from_offset, log.log_start_offset);
  const end = log.high_watermark;
  const records: DecodedRecord[] = [];
  let bytes = 0;
  while (offset < end && records.length < records_max && (bytes === 0 || bytes < bytes_max)) {
    const { batches } = await log.read(offset, Math.max(1, Math.min(READ_BYTES, bytes_max - bytes)));
    if (batches.length === 0) break;
    for (const batch of batches) {
      const last_offset = batch_last_offset(batch, 0);
      if (last_offset < offset) continue;
      bytes += batch.length;
      for (const record of decode_record_batch(await decompress_record_batch(batch))) {
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
