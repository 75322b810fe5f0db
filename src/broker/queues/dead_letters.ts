// Dead letters: the records a share group gave up on, copied (key, value, headers, timestamp) to
// its dead-letter topic with headers saying where each came from, how often it was delivered and
// why it stopped. Reading decompresses whatever codec the producer used.
import { decompress_record_batch } from '../../protocol/compression.ts';
import { decode_record_batch, type BatchRecord, type DecodedRecord } from '../../protocol/record_batch.ts';
import type { PartitionReader } from '../../core/partition_reader.ts';
import type { DeadLetter } from './share_partition.ts';
import { DLQ_HEADERS } from '../../protocol/dead_letters.ts';
import { ATTRIBUTE_CONTROL, batch_attributes, batch_last_offset } from '../../format/batch_layout.ts';

export { DLQ_HEADERS, dead_letter_topic_name } from '../../protocol/dead_letters.ts';

const READ_BYTES = 1024 * 1024;
/** A reason longer than this is cut (a stack trace, say). */
const REASON_BYTES_MAX = 1024;

/** The records at `offsets` (ascending) of a log; offsets no longer in the log are left out. */
export async function read_records_at(
  log: PartitionReader,
  offsets: readonly number[],
): Promise<Map<number, DecodedRecord>> {
  const found = new Map<number, DecodedRecord>();
  let i = 0;
  while (i < offsets.length) {
    const offset = offsets[i]!;
    if (offset < log.log_start_offset || offset >= log.high_watermark) {
      i++;
      continue;
    }
    const { batches } = await log.read(offset, READ_BYTES);
    if (batches.length === 0) break;
    let last_seen = offset;
    for (const batch of batches) {
      last_seen = batch_last_offset(batch, 0);
      // A transaction marker is no record: it is never a dead letter's original.
      if ((batch_attributes(batch, 0) & ATTRIBUTE_CONTROL) !== 0) continue;
      for (const record of decode_record_batch(await decompress_record_batch(batch))) found.set(record.offset, record);
    }
    while (i < offsets.length && offsets[i]! <= last_seen) i++;
  }
  return found;
}

export interface DeadLetterOrigin {
  topic: string;
  partition: number;
  group: string;
}

/** The dead-letter record for each letter whose original was found. */
export function dead_letter_records(
  origin: DeadLetterOrigin,
  letters: readonly DeadLetter[],
  originals: Map<number, DecodedRecord>,
  now_ms: number,
): BatchRecord[] {
  const records: BatchRecord[] = [];
  for (const letter of letters) {
    const original = originals.get(letter.offset);
    if (!original) continue;
    const reason = Buffer.from(letter.reason).subarray(0, REASON_BYTES_MAX);
    records.push({
      key: original.key,
      value: original.value,
      timestamp_ms: original.timestamp_ms,
      headers: [
        ...(original.headers ?? []),
        { key: DLQ_HEADERS.topic, value: Buffer.from(origin.topic) },
        { key: DLQ_HEADERS.partition, value: Buffer.from(String(origin.partition)) },
        { key: DLQ_HEADERS.offset, value: Buffer.from(String(letter.offset)) },
        { key: DLQ_HEADERS.group, value: Buffer.from(origin.group) },
        { key: DLQ_HEADERS.delivery_count, value: Buffer.from(String(letter.delivery_count)) },
        { key: DLQ_HEADERS.reason, value: reason },
        { key: DLQ_HEADERS.time_ms, value: Buffer.from(String(now_ms)) },
      ],
    });
  }
  return records;
}
