// Record batch v2 (magic 2), byte by byte: where each header field lies, what the attribute bits
// mean, and reads of the header without decoding records. The one definition of the layout for
// storage, protocol codecs, the broker, the SDK and the benchmarks; it imports nothing. The bytes
// of the layout are described in docs/storage-format.md.
//
//   0 baseOffset int64          27 baseTimestamp int64
//   8 batchLength int32         35 maxTimestamp int64
//  12 partitionLeaderEpoch      43 producerId int64
//  16 magic int8                51 producerEpoch int16
//  17 crc uint32 (CRC-32C of    53 baseSequence int32
//     attributes..end)          57 recordsCount int32
//  21 attributes int16          61 records
//  23 lastOffsetDelta int32

export const BATCH_HEADER_BYTES = 61;
/** baseOffset (8) + batchLength (4): the bytes batchLength does not count. */
export const BATCH_LOG_OVERHEAD_BYTES = 12;
export const BATCH_MAGIC_V2 = 2;

export const OFFSET_BASE_OFFSET = 0;
export const OFFSET_BATCH_LENGTH = 8;
export const OFFSET_LEADER_EPOCH = 12;
export const OFFSET_MAGIC = 16;
export const OFFSET_CRC = 17;
export const OFFSET_ATTRIBUTES = 21;
export const OFFSET_LAST_OFFSET_DELTA = 23;
export const OFFSET_BASE_TIMESTAMP = 27;
export const OFFSET_MAX_TIMESTAMP = 35;
export const OFFSET_PRODUCER_ID = 43;
export const OFFSET_PRODUCER_EPOCH = 51;
export const OFFSET_BASE_SEQUENCE = 53;
export const OFFSET_RECORDS_COUNT = 57;

export const ATTRIBUTE_COMPRESSION_MASK = 0x07;
export const ATTRIBUTE_LOG_APPEND_TIME = 0x08;
export const ATTRIBUTE_TRANSACTIONAL = 0x10;
export const ATTRIBUTE_CONTROL = 0x20;

const TWO_POW_32 = 0x1_0000_0000;

/** Reads a non-negative or negative int64 as a JS number; exact for |value| < 2^53. */
export function read_int64(buffer: Buffer, position: number): number {
  const high = buffer.readInt32BE(position);
  const low = buffer.readUInt32BE(position + 4);
  return high * TWO_POW_32 + low;
}

export function write_int64(buffer: Buffer, position: number, value: number): void {
  const high = Math.floor(value / TWO_POW_32);
  const low = value - high * TWO_POW_32;
  buffer.writeInt32BE(high, position);
  buffer.writeUInt32BE(low, position + 4);
}

/** Total bytes of the batch starting at `position`, from its batchLength field. */
export function batch_size_at(buffer: Buffer, position: number): number {
  return buffer.readInt32BE(position + OFFSET_BATCH_LENGTH) + BATCH_LOG_OVERHEAD_BYTES;
}

export function batch_base_offset(buffer: Buffer, position: number): number {
  return read_int64(buffer, position + OFFSET_BASE_OFFSET);
}

export function batch_last_offset_delta(buffer: Buffer, position: number): number {
  return buffer.readInt32BE(position + OFFSET_LAST_OFFSET_DELTA);
}

/** The offset of the batch's last record. */
export function batch_last_offset(buffer: Buffer, position: number): number {
  return batch_base_offset(buffer, position) + batch_last_offset_delta(buffer, position);
}

export function batch_base_timestamp(buffer: Buffer, position: number): number {
  return read_int64(buffer, position + OFFSET_BASE_TIMESTAMP);
}

export function batch_max_timestamp(buffer: Buffer, position: number): number {
  return read_int64(buffer, position + OFFSET_MAX_TIMESTAMP);
}

export function batch_attributes(buffer: Buffer, position: number): number {
  return buffer.readInt16BE(position + OFFSET_ATTRIBUTES);
}

export function batch_compression(buffer: Buffer, position: number): number {
  return batch_attributes(buffer, position) & ATTRIBUTE_COMPRESSION_MASK;
}

export function batch_producer_id(buffer: Buffer, position: number): number {
  return read_int64(buffer, position + OFFSET_PRODUCER_ID);
}

export function batch_producer_epoch(buffer: Buffer, position: number): number {
  return buffer.readInt16BE(position + OFFSET_PRODUCER_EPOCH);
}

export function batch_base_sequence(buffer: Buffer, position: number): number {
  return buffer.readInt32BE(position + OFFSET_BASE_SEQUENCE);
}

export function batch_records_count(buffer: Buffer, position: number): number {
  return buffer.readInt32BE(position + OFFSET_RECORDS_COUNT);
}

/**
 * The fewest bytes a record takes: its length, attributes, timestamp and offset deltas, key and
 * value lengths and header count are one byte each at least.
 */
export const RECORD_BYTES_MIN = 7;

/**
 * Whether the batch's recordsCount could be records in `records_bytes` bytes (the uncompressed
 * records section). A count no bytes back is corrupt, and readers size their work by it.
 */
export function records_count_fits(buffer: Buffer, position: number, records_bytes: number): boolean {
  return batch_records_count(buffer, position) <= records_bytes / RECORD_BYTES_MIN;
}

/** Records in the batches laid back to back in `batches`, read from each header (lastOffsetDelta + 1). */
export function records_in_batches(batches: Buffer): number {
  let count = 0;
  for (
    let position = 0;
    position + BATCH_HEADER_BYTES <= batches.length;
    position += batch_size_at(batches, position)
  ) {
    count += batch_last_offset_delta(batches, position) + 1;
  }
  return count;
}

/** The whole batches in a record set, as views (a trailing partial batch is left out). */
export function whole_batches(records: Buffer): Buffer[] {
  const batches: Buffer[] = [];
  let position = 0;
  while (position + BATCH_HEADER_BYTES <= records.length) {
    const size = batch_size_at(records, position);
    if (size < BATCH_HEADER_BYTES || position + size > records.length) break;
    batches.push(records.subarray(position, position + size));
    position += size;
  }
  return batches;
}
