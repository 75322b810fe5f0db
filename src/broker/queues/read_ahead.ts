// What a share group must know of records before it hands them out, read ahead of the group
// (records are acquired only once read here):
// - time to live: a record expires at its timestamp plus its `sluice-ttl-ms` header, or plus the
//   topic's `sluice.message.ttl.ms`; expiry times go into a due-time index, so an expired record is
//   found wherever it sits in the queue, not only at its head;
// - keys, for groups ordered by key: a 32-bit hash of each record's key (a collision only makes two
//   keys wait for each other), read no further than the group's window so every key is known.
// Transaction markers are no records of the group's, nor, under read_committed, are the records of
// aborted transactions: neither expires nor holds a key's order. A read_committed group reads no
// further than the last stable offset (a record of an open transaction may yet be aborted).
import { decompress_record_batch } from '../../protocol/compression.ts';
import { decode_record_batch } from '../../protocol/record_batch.ts';
import type { PartitionReader } from '../../core/partition_reader.ts';
import { hidden_batches } from '../txn/hidden_batches.ts';
import { DelayIndex, pack, unpack } from '../delayed/delay_index.ts';
import { TTL_MS_HEADER, ttl_of } from '../delayed/delay_headers.ts';
import { BATCH_HEADER_BYTES, batch_compression, batch_last_offset } from '../../format/batch_layout.ts';

/** Bytes read ahead per scan. */
const SCAN_BYTES = 1024 * 1024;
const HEADER_BYTES = Buffer.from(TTL_MS_HEADER);

export interface ScanOptions {
  /** The topic's sluice.message.ttl.ms; negative: none. */
  topic_ttl_ms: number;
  /** Keys are wanted (an ordered group) up to here, the end of its window; null: no keys. */
  keys_until: number | null;
  /** Read as a read_committed reader: to the last stable offset, aborted records left out. */
  committed: boolean;
}

export class ReadAhead {
  /** The next offset to read. */
  cursor: number;
  private readonly index = new DelayIndex();
  /** Key hash by offset (ordered groups only; records without a key are absent). */
  private readonly keys = new Map<number, number>();

  constructor(start_offset: number) {
    this.cursor = start_offset;
  }

  get tracked(): number {
    return this.index.size;
  }

  /**
   * Reads up to SCAN_BYTES past the cursor, not beyond the high watermark (the last stable offset
   * when committed) nor, when keys are wanted, beyond `keys_until`, indexing expiry times and keys.
   */
  async scan(log: PartitionReader, now_ms: number, options: ScanOptions): Promise<void> {
    const { topic_ttl_ms, keys_until, committed } = options;
    if (this.cursor < log.log_start_offset) this.cursor = log.log_start_offset;
    const end = committed ? log.last_stable_offset : log.high_watermark;
    const limit = keys_until === null ? end : Math.min(end, keys_until);
    if (this.cursor >= limit) return;
    const { batches, aborted } = committed
      ? await log.read_committed(this.cursor, SCAN_BYTES)
      : { ...(await log.read(this.cursor, SCAN_BYTES)), aborted: null };
    const hidden = hidden_batches(batches, aborted);
    for (const [i, batch] of batches.entries()) {
      if (this.cursor >= limit) break;
      const last = batch_last_offset(batch, 0);
      if (hidden[i]) {
        this.cursor = Math.max(this.cursor, last + 1);
        continue;
      }
      const compressed = batch_compression(batch, 0) !== 0;
      const may_have_header = compressed || batch.indexOf(HEADER_BYTES, BATCH_HEADER_BYTES) >= 0;
      if (topic_ttl_ms >= 0 || may_have_header || keys_until !== null) {
        const records = decode_record_batch(compressed ? await decompress_record_batch(batch) : batch);
        for (const record of records) {
          if (record.offset < this.cursor) continue;
          const ttl = (may_have_header ? safe_ttl(record) : null) ?? (topic_ttl_ms >= 0 ? topic_ttl_ms : null);
          if (ttl !== null) this.index.add(record.timestamp_ms + ttl, pack(record.offset, 0), now_ms);
          if (keys_until !== null && record.key) this.keys.set(record.offset, hash(record.key));
        }
      }
      this.cursor = Math.max(this.cursor, last + 1);
    }
  }

  /** The key hash of a record read with keys (undefined: no key, or not read with keys). */
  key_of(offset: number): number | undefined {
    return this.keys.get(offset);
  }

  /** Offsets whose expiry time has passed (up to `max`), removed from the index. */
  take_expired(now_ms: number, max: number): number[] {
    return this.index.take_due(now_ms, max).map((ref) => unpack(ref).batch_offset);
  }

  /** Forgets records below `offset` (finished or gone); a full pass over the index. */
  forget_below(offset: number): void {
    this.index.retain((ref) => unpack(ref).batch_offset >= offset);
    for (const key_offset of this.keys.keys()) {
      if (key_offset >= offset) break; // inserted in offset order
      this.keys.delete(key_offset);
    }
  }

  /** Looks at `offset` again at `at_ms` (it could not be expired yet). */
  retry(offset: number, at_ms: number, now_ms: number): void {
    this.index.add(at_ms, pack(offset, 0), now_ms);
  }
}

/** FNV-1a, 32 bits. */
function hash(bytes: Buffer): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return h >>> 0;
}

/** A malformed header was refused when produced; one written some other way is ignored. */
function safe_ttl(record: Parameters<typeof ttl_of>[0]): number | null {
  try {
    return ttl_of(record);
  } catch {
    return null;
  }
}
