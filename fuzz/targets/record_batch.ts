// A produced record batch, through what the broker runs on it: the produce path's header reads,
// the batch check (length, magic, CRC-32C, offsets, client rules), decompression, the delay-header
// scan, and the record decoding readers of the stored batch run (share groups, AMQP deliveries,
// dead letters, the message browser).
//
// The input is one flags byte and the batch. A mutated batch almost never keeps its CRC, which
// would stop every input at the check; with flag REPAIR the target first sets batchLength and the
// CRC to match the bytes (and recordsCount to lastOffsetDelta + 1), so the records behind reach
// the decoders. Seeds carry REPAIR; inputs without it test the checks themselves.
import { crc32c } from '@node-rs/crc32';
import {
  ATTRIBUTE_TRANSACTIONAL,
  BATCH_HEADER_BYTES,
  BATCH_LOG_OVERHEAD_BYTES,
  OFFSET_ATTRIBUTES,
  OFFSET_BATCH_LENGTH,
  OFFSET_CRC,
  OFFSET_RECORDS_COUNT,
  batch_attributes,
  batch_base_sequence,
  batch_compression,
  batch_last_offset_delta,
  batch_producer_epoch,
  batch_producer_id,
  batch_records_count,
  batch_size_at,
} from '../../src/format/batch_layout.ts';
import { CompressionError, decompress_record_batch } from '../../src/protocol/compression.ts';
import { decode_record_batch } from '../../src/protocol/record_batch.ts';
import { delayed_records } from '../../src/broker/delayed/delay_headers.ts';
import { DELAYED_SETTINGS_DEFAULT } from '../../src/broker/delayed/delayed_delivery.ts';
import { BrokerError } from '../../src/core/errors.ts';
import { check_batch, type BatchCheckLimits } from '../../src/storage/batch.ts';
import { LOG_CONFIG_DEFAULT } from '../../src/storage/config.ts';
import { StorageError } from '../../src/storage/errors.ts';
import type { FuzzTarget } from '../engine/target.ts';

export const REPAIR = 0x01;

const LIMITS: BatchCheckLimits = { message_bytes_max: LOG_CONFIG_DEFAULT.message_bytes_max, client_batch: true };
const RECEIVED_MS = 1_700_000_000_000;
/** A sixteenth of the broker's DECOMPRESSED_BYTES_MAX: twice it stays below the allocation limit. */
const DECOMPRESSED_BYTES_FUZZED = 4 * 1024 * 1024;

/** Makes the header agree with the bytes: batchLength, recordsCount and the CRC. */
function repair(batch: Buffer): void {
  if (batch.length < BATCH_HEADER_BYTES) return;
  batch.writeInt32BE(batch.length - BATCH_LOG_OVERHEAD_BYTES, OFFSET_BATCH_LENGTH);
  const last_offset_delta = batch_last_offset_delta(batch, 0);
  if (last_offset_delta >= 0 && last_offset_delta < 0x7fffffff)
    batch.writeInt32BE(last_offset_delta + 1, OFFSET_RECORDS_COUNT);
  batch.writeUInt32BE(crc32c(batch.subarray(OFFSET_ATTRIBUTES)), OFFSET_CRC);
}

/** What produce_path.ts reads of the header before anything else (its read_header). */
function read_produce_header(records: Buffer): void {
  if (records.length < BATCH_HEADER_BYTES) return;
  if (batch_size_at(records, 0) !== records.length)
    throw new BrokerError('invalid_record', 'a produce request must carry exactly one record batch per partition');
  const transactional = (batch_attributes(records, 0) & ATTRIBUTE_TRANSACTIONAL) !== 0;
  if (transactional && (batch_producer_id(records, 0) < 0 || batch_base_sequence(records, 0) < 0))
    throw new BrokerError('invalid_record', 'a transactional batch needs a producer id and a sequence');
  batch_records_count(records, 0);
  batch_producer_epoch(records, 0);
}

/** Runs the batch through the produce path and the readers; returns its codec and whether it had delays. */
async function produced_batch(input: Buffer): Promise<string | void> {
  if (input.length === 0) return;
  const records = Buffer.from(input.subarray(1));
  if ((input[0]! & REPAIR) !== 0) repair(records);
  read_produce_header(records);
  check_batch(records, 0, LIMITS);
  // Decompressed first under a bound far below the broker's, so that the allocation check keeps its
  // meaning (the bound's handling is the same code); a batch it refuses stops here.
  const plain = await decompress_record_batch(records, DECOMPRESSED_BYTES_FUZZED);
  const delayed = await delayed_records(records, RECEIVED_MS, DELAYED_SETTINGS_DEFAULT.delay_max_ms);
  // Readers of the stored batch: share-group read-ahead, AMQP deliveries, dead letters, the browser.
  decode_record_batch(plain);
  return `codec ${batch_compression(records, 0)}${delayed ? ' delayed' : ''}`;
}

export const target: FuzzTarget = {
  name: 'record_batch',
  summary: 'produce header reads, batch check and CRC, delay-header scan, decompression, record decoding',
  run: produced_batch,
  is_expected: (error) =>
    error instanceof StorageError ||
    error instanceof BrokerError ||
    error instanceof CompressionError ||
    // decode_record_batch's own refusal is a RangeError naming the record field; Node's carry a code.
    (error instanceof RangeError && !('code' in error)),
  max_bytes: 64 * 1024,
  dictionary: [
    'sluice-delay-ms',
    'sluice-deliver-at',
    'sluice-ttl-ms',
    'amqp.exchange',
    'amqp.properties',
    '\x1f\x8b\x08', // gzip
    '\x28\xb5\x2f\xfd', // zstd frame
    '\x04\x22\x4d\x18', // lz4 frame
    '\x82SNAPPY\x00\x00\x00\x00\x01\x00\x00\x00\x01', // xerial snappy header
  ].map((token) => Buffer.from(token, 'latin1')),
};
