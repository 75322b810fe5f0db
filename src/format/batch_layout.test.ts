import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encode_record_batch } from '../protocol/record_batch.ts';
import { batch_last_offset, records_in_batches, whole_batches } from './batch_layout.ts';

const batch = (n: number) =>
  encode_record_batch(
    Array.from({ length: n }, (_, i) => ({ key: null, value: Buffer.from(`v${i}`), timestamp_ms: 0 })),
  );

test('records are counted from batch headers, across concatenated batches', () => {
  assert.equal(records_in_batches(batch(1)), 1);
  assert.equal(records_in_batches(batch(7)), 7);
  assert.equal(records_in_batches(Buffer.concat([batch(3), batch(5)])), 8);
  assert.equal(records_in_batches(Buffer.alloc(0)), 0);
});

test('whole batches of a record set are views; a trailing partial batch is left out', () => {
  const set = Buffer.concat([batch(2), batch(3)]);
  const batches = whole_batches(set.subarray(0, set.length - 5));
  assert.equal(batches.length, 1);
  assert.equal(batch_last_offset(batches[0]!, 0), 1);
  assert.equal(whole_batches(set).length, 2);
});
