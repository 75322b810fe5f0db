import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decode_record_batch, encode_record_batch } from './record_batch.ts';

const records = Array.from({ length: 10 }, (_, i) => ({
  key: i % 2 === 0 ? Buffer.from(`k${i}`) : null,
  value: Buffer.from(`value ${i}`),
  timestamp_ms: 1_700_000_000_000 + i,
  headers: [{ key: 'n', value: Buffer.from(String(i)) }],
}));

/** A batch as the log stores it: the base offset stamped in. */
function stored_at(base_offset: number): Buffer {
  const batch = encode_record_batch(records);
  batch.writeBigInt64BE(BigInt(base_offset), 0);
  return batch;
}

test('a batch decodes back to its records, at the offsets the log stamped', () => {
  const decoded = decode_record_batch(stored_at(100));
  assert.deepEqual(
    decoded.map((r) => r.offset),
    records.map((_, i) => 100 + i),
  );
  assert.deepEqual(
    decoded.map((r) => [
      r.key?.toString() ?? null,
      r.value?.toString(),
      r.timestamp_ms,
      r.headers?.[0]?.value?.toString(),
    ]),
    records.map((r, i) => [r.key?.toString() ?? null, r.value.toString(), r.timestamp_ms, String(i)]),
  );
});

test('a window of offsets decodes only the records inside it', () => {
  const decoded = decode_record_batch(stored_at(100), 0, 103, 106);
  assert.deepEqual(
    decoded.map((r) => [r.offset, r.value?.toString()]),
    [103, 104, 105, 106].map((offset) => [offset, `value ${offset - 100}`]),
  );
  assert.deepEqual(decode_record_batch(stored_at(100), 0, 200, 300), []);
  assert.equal(decode_record_batch(stored_at(100), 0, 0, 100).length, 1);
});
