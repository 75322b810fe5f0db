import { test } from 'node:test';
import assert from 'node:assert/strict';
import { crc32c } from '@node-rs/crc32';
import {
  OFFSET_ATTRIBUTES,
  OFFSET_CRC,
  OFFSET_LAST_OFFSET_DELTA,
  OFFSET_RECORDS_COUNT,
} from '../format/batch_layout.ts';
import { encode_record_batch } from '../protocol/record_batch.ts';
import { check_batch } from './batch.ts';
import { InvalidBatchError } from './errors.ts';

const LIMITS = { message_bytes_max: 1024 * 1024, client_batch: true };

/** A one-record batch with a delay header whose header claims `count` records, CRC recomputed. */
function batch_claiming(count: number): Buffer {
  const batch = encode_record_batch([
    {
      key: null,
      value: Buffer.from('v'),
      timestamp_ms: 0,
      headers: [{ key: 'sluice-delay-ms', value: Buffer.from('5') }],
    },
  ]);
  batch.writeInt32BE(count - 1, OFFSET_LAST_OFFSET_DELTA);
  batch.writeInt32BE(count, OFFSET_RECORDS_COUNT);
  batch.writeUInt32BE(crc32c(batch.subarray(OFFSET_ATTRIBUTES)), OFFSET_CRC);
  return batch;
}

// Found by fuzzing (record_batch; fuzz/corpus/record_batch/crash-records-count-beyond-the-batch-bytes.bin):
// a 108-byte produced batch claiming 16,777,216 records passed the check, and the delay-header scan
// then allocated an array of that many entries (128 MiB).
test('records_count_beyond_the_batch_bytes: a count no bytes could hold is refused as record_count', () => {
  assert.throws(
    () => check_batch(batch_claiming(22_000_000), 0, LIMITS),
    (error: unknown) => error instanceof InvalidBatchError && error.reason === 'record_count',
  );
  const size = batch_claiming(1).length;
  assert.equal(check_batch(batch_claiming(1), 0, LIMITS), size, 'a count its bytes hold still passes');
});
