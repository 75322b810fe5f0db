// The reads behind a share fetch: the batches holding the records just acquired, within the
// fetch's byte budget, and the checks on an acknowledgement's offset ranges.
import type { PartitionReader } from '../../core/partition_reader.ts';
import type { AcquiredRange, OffsetRange } from '../../core/types.ts';
import { AckError } from '../../core/errors.ts';
import { batch_last_offset } from '../../format/batch_layout.ts';

/**
 * Bytes asked of the log in one read: the acquired records are usually far fewer bytes than the
 * fetch's budget, and a read costs what it asks for (file read and CRC checks), not what is used.
 */
const READ_BYTES_MAX = 256 * 1024;

export interface AcquiredRead {
  batches: Buffer[];
  /** The acquired ranges the batches cover. */
  ranges: AcquiredRange[];
  /** Acquired offsets whose batch did not fit: they go back to the queue. */
  unsent: number[];
  bytes: number;
  count: number;
}

/**
 * Reads the batches holding the acquired ranges, in order, until `bytes_max` (at least one batch
 * is always read). Offsets whose batch did not fit come back in `unsent`.
 */
export async function read_acquired(
  log: PartitionReader,
  acquired: AcquiredRange[],
  bytes_max: number,
): Promise<AcquiredRead> {
  const read: AcquiredRead = { batches: [], ranges: [], unsent: [], bytes: 0, count: 0 };
  let covered_to = -1; // last offset of the batches read so far
  for (const range of acquired) {
    let first = range.first_offset;
    while (first <= range.last_offset) {
      if (first > covered_to) {
        if (read.batches.length > 0 && read.bytes >= bytes_max) break;
        covered_to = await read_batches_from(log, first, range.last_offset, bytes_max, read, covered_to);
      }
      const last = Math.min(range.last_offset, covered_to);
      if (last < first) break;
      read.ranges.push({ first_offset: first, last_offset: last, delivery_count: range.delivery_count });
      read.count += last - first + 1;
      first = last + 1;
    }
    for (let offset = first; offset <= range.last_offset; offset++) read.unsent.push(offset);
  }
  return read;
}

/** Adds the batches from `first` on (up to `last` or the budget) to `read`; the last offset they cover. */
async function read_batches_from(
  log: PartitionReader,
  first: number,
  last: number,
  bytes_max: number,
  read: AcquiredRead,
  covered_to: number,
): Promise<number> {
  const result = await log.read(first, Math.max(1, Math.min(READ_BYTES_MAX, bytes_max - read.bytes)));
  for (const batch of result.batches) {
    const batch_last = batch_last_offset(batch, 0);
    if (batch_last < first) continue;
    read.batches.push(batch);
    read.bytes += batch.length;
    covered_to = batch_last;
    if (read.bytes >= bytes_max || batch_last >= last) break;
  }
  return covered_to;
}

/** Acknowledgement batches of one partition must not overlap (an offset is settled once). */
export function check_disjoint(batches: readonly OffsetRange[]): void {
  const sorted = [...batches].sort((a, b) => a.first_offset - b.first_offset);
  for (let i = 1; i < sorted.length; i++) {
    if (sorted[i]!.first_offset <= sorted[i - 1]!.last_offset)
      throw new AckError('invalid_request', `acknowledgement batches overlap at offset ${sorted[i]!.first_offset}`);
  }
}

export function offsets_in(range: OffsetRange): number[] {
  return Array.from({ length: range.last_offset - range.first_offset + 1 }, (_, i) => range.first_offset + i);
}
