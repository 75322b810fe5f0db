import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hidden_batches } from './hidden_batches.ts';
import { encode_record_batch } from '../../protocol/record_batch.ts';
import { encode_marker } from '../../protocol/control_records.ts';
import { ATTRIBUTE_TRANSACTIONAL, write_int64 } from '../../format/batch_layout.ts';

/** A batch of `count` records at `offset`: plain (producer -1), or transactional of `producer_id`. */
function batch_at(offset: number, count: number, producer_id = -1): Buffer {
  const records = Array.from({ length: count }, (_, i) => ({
    key: null,
    value: Buffer.from(`v${i}`),
    timestamp_ms: 1,
  }));
  const options = producer_id < 0 ? {} : { producer_id, producer_epoch: 0, base_sequence: 0 };
  const batch = encode_record_batch(records, { ...options, attributes: producer_id < 0 ? 0 : ATTRIBUTE_TRANSACTIONAL });
  write_int64(batch, 0, offset);
  return batch;
}

function marker_at(offset: number, producer_id: number, commit: boolean): Buffer {
  const batch = encode_marker({ producer_id, producer_epoch: 0, commit, coordinator_epoch: 0, timestamp_ms: 1 });
  write_int64(batch, 0, offset);
  return batch;
}

test('markers are always hidden; aborted batches only for a read_committed read', () => {
  const batches = [
    batch_at(0, 2, 7), // producer 7's aborted transaction
    batch_at(2, 1, 8), // producer 8's committed one, interleaved
    batch_at(3, 1), // not transactional
    batch_at(4, 1, 7),
    marker_at(5, 7, false),
    marker_at(6, 8, true),
    batch_at(7, 1, 7), // producer 7's next transaction, committed
    marker_at(8, 7, true),
  ];
  const aborted = [{ producer_id: 7, first_offset: 0 }];
  assert.deepEqual(hidden_batches(batches, aborted), [true, false, false, true, true, true, false, true]);
  assert.deepEqual(hidden_batches(batches, null), [false, false, false, false, true, true, false, true]);
});

test('a read starting inside an aborted transaction hides the rest of it (listed by its first offset)', () => {
  const batches = [batch_at(10, 1, 7), marker_at(11, 7, false), batch_at(12, 1, 7)];
  assert.deepEqual(hidden_batches(batches, [{ producer_id: 7, first_offset: 4 }]), [true, true, false]);
  assert.deepEqual(hidden_batches(batches, []), [false, true, false]);
});
