import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PartitionTxns } from './partition_txns.ts';

test('the last stable offset: the oldest open transaction, or an ended one until its marker is replicated', () => {
  const txns = new PartitionTxns();
  assert.equal(txns.last_stable_offset(10), 10, 'nothing open: the high watermark');
  txns.on_data(7, 10);
  txns.on_data(7, 12); // the same transaction
  txns.on_data(8, 11);
  assert.equal(txns.last_stable_offset(14), 10);
  txns.on_marker(7, 14, true);
  assert.equal(txns.last_stable_offset(14), 10, 'the marker at 14 is not below the high watermark');
  assert.equal(txns.last_stable_offset(15), 11, 'producer 8 still open');
  txns.on_marker(8, 15, false);
  assert.equal(txns.last_stable_offset(16), 16);
  assert.equal(txns.has_open(7), false);
});

test('aborted transactions are listed for the reads that overlap them, once replicated', () => {
  const txns = new PartitionTxns();
  txns.on_data(1, 0);
  txns.on_marker(1, 5, false);
  txns.on_data(2, 6);
  txns.on_marker(2, 8, true);
  txns.on_data(3, 9);
  txns.on_marker(3, 12, false);
  assert.deepEqual(txns.aborted_in(0, 20, 12), [{ producer_id: 1, first_offset: 0, last_offset: 5 }]);
  assert.deepEqual(
    txns.aborted_in(0, 20, 13).map((t) => t.producer_id),
    [1, 3],
  );
  assert.deepEqual(txns.aborted_in(6, 9, 13), [], 'committed in between');
  assert.deepEqual(
    txns.aborted_in(10, 11, 13).map((t) => t.producer_id),
    [3],
  );
  txns.prune_before(6);
  assert.deepEqual(
    txns.aborted_in(0, 20, 13).map((t) => t.producer_id),
    [3],
  );
});

test('a marker with nothing open is ignored; a cut log reopens the transactions whose marker it lost', () => {
  const txns = new PartitionTxns();
  txns.on_marker(4, 3, true);
  assert.equal(txns.last_stable_offset(4), 4);
  txns.on_data(5, 4);
  txns.on_marker(5, 6, false);
  txns.on_data(6, 7);
  assert.equal(txns.last_stable_offset(8), 7);
  txns.truncate_from(6); // the marker at 6 and producer 6's batch at 7 are gone
  assert.equal(txns.has_open(5), true);
  assert.equal(txns.has_open(6), false);
  assert.equal(txns.last_stable_offset(6), 4);
  assert.deepEqual(txns.aborted_in(0, 10, 6), []);
});

test('a snapshot up to an offset holds what the log held there; what follows is learnt again', () => {
  const txns = new PartitionTxns();
  txns.on_data(1, 0);
  txns.on_marker(1, 2, false);
  txns.on_data(2, 3);
  txns.on_marker(2, 6, true); // after the snapshot's offset: open as of 5
  txns.on_data(3, 7); // after it: not in the snapshot
  txns.last_stable_offset(10);
  const restored = PartitionTxns.from_json(JSON.parse(JSON.stringify(txns.to_json(5))));
  assert.equal(restored.has_open(2), true);
  assert.equal(restored.has_open(3), false);
  assert.deepEqual(restored.aborted_in(0, 5, 5), [{ producer_id: 1, first_offset: 0, last_offset: 2 }]);
  restored.on_marker(2, 6, true);
  restored.on_data(3, 7);
  assert.equal(restored.last_stable_offset(10), 7);
});
