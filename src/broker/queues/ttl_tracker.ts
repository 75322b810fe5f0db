// Time to live in a share group: a record expires at its timestamp plus its `sluice-ttl-ms` header,
// or plus the topic's `sluice.message.ttl.ms`. The tracker reads a partition ahead of the group
// (records are acquired only once it has read them) and keeps the expiry time of every record that
// has one in a due-time index, so an expired record is found wherever it sits in the queue, not only
// at its head.
import { decompress_record_batch } from '../../protocol/compression.ts';
import { decode_record_batch } from '../../protocol/record_batch.ts';
import type { PartitionLog } from '../../storage/index.ts';
import { DelayIndex, pack, unpack } from '../delayed/delay_index.ts';
import { TTL_MS_HEADER, ttl_of } from '../delayed/delay_headers.ts';

/** Bytes read ahead per scan. */
const SCAN_BYTES = 1024 * 1024;
const HEADER_BYTES = Buffer.from(TTL_MS_HEADER);
const ATTRIBUTES_AT = 21;
const BATCH_HEADER_BYTES = 61;

export class TtlTracker {
  /** The next offset to read. */
  cursor: number;
  private readonly index = new DelayIndex();

  constructor(start_offset: number) {
    this.cursor = start_offset;
  }

  get tracked(): number {
    return this.index.size;
  }

  /** Reads up to SCAN_BYTES past the cursor (not beyond the high watermark), indexing expiry times. */
  async scan(log: PartitionLog, topic_ttl_ms: number, now_ms: number): Promise<void> {
    if (this.cursor < log.log_start_offset) this.cursor = log.log_start_offset;
    if (this.cursor >= log.high_watermark) return;
    const { batches } = await log.read(this.cursor, SCAN_BYTES);
    for (const batch of batches) {
      const last = Number(batch.readBigInt64BE(0)) + batch.readInt32BE(23);
      const compressed = (batch.readInt16BE(ATTRIBUTES_AT) & 0x07) !== 0;
      const may_have_header = compressed || batch.indexOf(HEADER_BYTES, BATCH_HEADER_BYTES) >= 0;
      if (topic_ttl_ms >= 0 || may_have_header) {
        const records = decode_record_batch(compressed ? await decompress_record_batch(batch) : batch);
        for (const record of records) {
          if (record.offset < this.cursor) continue;
          const ttl = (may_have_header ? safe_ttl(record) : null) ?? (topic_ttl_ms >= 0 ? topic_ttl_ms : null);
          if (ttl !== null) this.index.add(record.timestamp_ms + ttl, pack(record.offset, 0), now_ms);
        }
      }
      this.cursor = Math.max(this.cursor, last + 1);
    }
  }

  /** Offsets whose expiry time has passed (up to `max`), removed from the index. */
  take_expired(now_ms: number, max: number): number[] {
    return this.index.take_due(now_ms, max).map((ref) => unpack(ref).batch_offset);
  }

  /** Forgets records below `offset` (finished or gone); a full pass over the index. */
  forget_below(offset: number): void {
    this.index.retain((ref) => unpack(ref).batch_offset >= offset);
  }

  /** Looks at `offset` again at `at_ms` (it could not be expired yet). */
  retry(offset: number, at_ms: number, now_ms: number): void {
    this.index.add(at_ms, pack(offset, 0), now_ms);
  }
}

/** A malformed header was refused when produced; one written some other way is ignored. */
function safe_ttl(record: Parameters<typeof ttl_of>[0]): number | null {
  try {
    return ttl_of(record);
  } catch {
    return null;
  }
}
