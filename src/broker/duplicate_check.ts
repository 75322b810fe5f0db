// Whether a batch answered as a retry really is one: an idempotent producer's batch whose producer
// id, epoch and sequence numbers match a stored batch is acknowledged with that batch's offsets,
// so it must carry the same records. A client that reuses sequence numbers for other records (as
// kafkajs does after a request timeout: it hands the numbers of the failed send to the next one)
// would otherwise be told that records it never stored are stored. Timestamps are not compared: a
// client may stamp a retry anew. Runs only for duplicates, never on the ordinary append path.
import { decompress_record_batch } from '../protocol/compression.ts';
import { decode_record_batch, type DecodedRecord } from '../protocol/record_batch.ts';
import { batch_base_offset } from '../format/batch_layout.ts';
import type { PartitionLog } from '../storage/index.ts';

const same_bytes = (a: Buffer | null, b: Buffer | null) => (a === null || b === null ? a === b : a.equals(b));

function same_record(a: DecodedRecord, b: DecodedRecord): boolean {
  if (!same_bytes(a.key, b.key) || !same_bytes(a.value, b.value)) return false;
  const x = a.headers ?? [];
  const y = b.headers ?? [];
  return x.length === y.length && x.every((h, i) => h.key === y[i]!.key && same_bytes(h.value, y[i]!.value));
}

/**
 * True when `incoming` holds the same records as the stored batch at `base_offset`, or that batch
 * was deleted (below the log start). No batch beginning there means the producer state names a
 * batch this log does not hold (finding 25: a follower's copy that a full disk refused), so the
 * offsets it names belong to other records.
 */
export async function matches_stored(log: PartitionLog, base_offset: number, incoming: Buffer): Promise<boolean> {
  if (base_offset < log.log_start_offset) return true;
  if (base_offset >= log.written_offset) return false;
  const { batches } = await log.read(base_offset, incoming.length, 'log_end');
  const stored = batches.find((batch) => batch_base_offset(batch, 0) === base_offset);
  if (!stored) return false;
  const [mine, theirs] = await Promise.all([decompress_record_batch(incoming), decompress_record_batch(stored)]);
  const a = decode_record_batch(mine);
  const b = decode_record_batch(theirs);
  return a.length === b.length && a.every((record, i) => same_record(record, b[i]!));
}
