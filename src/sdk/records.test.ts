// Decoding fetched record sets on its own: offsets below the fetch offset and control batches
// skipped, partial batches left for the next fetch (and the next fetch offset read off the
// headers alone), aborted transactions, CRC checks and codecs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import zlib from 'node:zlib';
import { crc32c } from '@node-rs/crc32';
import { decode_fetched, next_fetch_offset } from './records.ts';
import { compress_record_batch } from '../protocol/compression.ts';
import { encode_record_batch, type BatchRecord } from '../protocol/record_batch.ts';
import { encode_marker } from '../protocol/control_records.ts';

/** Rewrites an uncompressed batch as a gzip batch (records section compressed, CRC recomputed). */
function gzip_batch(batch: Buffer): Buffer {
  const records = zlib.gzipSync(batch.subarray(61));
  const out = Buffer.concat([batch.subarray(0, 61), records]);
  out.writeInt32BE(out.length - 12, 8);
  out.writeInt16BE(out.readInt16BE(21) | 1, 21);
  out.writeUInt32BE(crc32c(out.subarray(21)), 17);
  return out;
}

function with_base_offset(batch: Buffer, offset: number): Buffer {
  const out = Buffer.from(batch);
  out.writeBigInt64BE(BigInt(offset), 0);
  return out;
}

const record = (i: number): BatchRecord => ({
  key: Buffer.from(`k${i}`),
  value: Buffer.from(`v${i}`),
  timestamp_ms: 1000 + i,
});

/** A transaction marker of `producer_id` at `offset`: a control batch, a commit or an abort. */
function control_batch(producer_id: number, abort: boolean, offset: number): Buffer {
  const marker = { producer_id, producer_epoch: 0, commit: !abort, coordinator_epoch: 0, timestamp_ms: 2000 };
  return with_base_offset(encode_marker(marker), offset);
}

/**
 * The consumer's next fetch is sent before a set is decoded, from its batch headers alone; keys and
 * values are views of the fetched memory, and Buffers in every respect. `value` is 'v4', from an
 * uncompressed batch of `set`.
 */
async function check_headers_and_views(set: Buffer, value: Buffer): Promise<void> {
  for (const fetch_offset of [10, 12, 14, 15, 17]) {
    assert.equal(
      next_fetch_offset(set, fetch_offset),
      (await decode_fetched(set, fetch_offset)).next_offset,
      `from the headers, fetching at ${fetch_offset}`,
    );
  }
  assert.equal(next_fetch_offset(set.subarray(0, 20), 10), 10, 'a set of one cut batch');
  assert.equal(next_fetch_offset(null, 10), 10);
  assert.equal(Object.getPrototypeOf(value), Buffer.prototype);
  assert.ok(Buffer.isBuffer(value));
  assert.deepStrictEqual(value, Buffer.from('v4'));
  assert.equal(value.buffer, set.buffer, 'no copy');
}

test('record decoding: control batches, offsets below the fetch offset skipped, a cut batch left; codecs', async () => {
  const first = with_base_offset(gzip_batch(encode_record_batch([0, 1, 2, 3].map(record))), 10);
  const control = control_batch(7, false, 14);
  const last = with_base_offset(encode_record_batch([4, 5].map(record)), 15);
  const set = Buffer.concat([first, control, last, last.subarray(0, 30)]);
  const fetched = await decode_fetched(set, 12);
  assert.deepEqual(
    fetched.messages.map((m) => [m.offset, m.value!.toString(), m.timestamp]),
    [
      ['12', 'v2', '1002'],
      ['13', 'v3', '1003'],
      ['15', 'v4', '1004'],
      ['16', 'v5', '1005'],
    ],
  );
  assert.equal(fetched.next_offset, 17, 'after the last whole batch; the cut one is fetched again');
  await check_headers_and_views(set, fetched.messages[2]!.value!);

  // Only a control batch: no messages, the position moves past it.
  const only_control = await decode_fetched(control, 14);
  assert.deepEqual(only_control, { messages: [], next_offset: 15 });

  // Aborted transactions are dropped under read_committed.
  const txn = with_base_offset(
    encode_record_batch([6, 7].map(record), {
      attributes: 0x10,
      producer_id: 9,
      producer_epoch: 0,
      base_sequence: 0,
    }),
    20,
  );
  const abort = control_batch(9, true, 22);
  const after = with_base_offset(encode_record_batch([8].map(record)), 23);
  const committed_view = await decode_fetched(Buffer.concat([txn, abort, after]), 20, {
    aborted_transactions: [{ producer_id: 9, first_offset: 20 }],
  });
  assert.deepEqual(
    committed_view.messages.map((m) => m.offset),
    ['23'],
  );
  const uncommitted_view = await decode_fetched(Buffer.concat([txn, abort, after]), 20);
  assert.deepEqual(
    uncommitted_view.messages.map((m) => m.offset),
    ['20', '21', '23'],
  );

  // A corrupted batch fails its CRC; a codec id beyond zstd is refused.
  const corrupt = Buffer.from(last);
  corrupt[corrupt.length - 1]! ^= 0xff;
  await assert.rejects(decode_fetched(corrupt, 0), /CRC/);
  const unknown = Buffer.from(last);
  unknown.writeInt16BE(5, 21);
  unknown.writeUInt32BE(crc32c(unknown.subarray(21)), 17);
  await assert.rejects(decode_fetched(unknown, 0), /unknown compression codec 5/);

  // snappy, lz4 and zstd through compression.ts.
  for (const codec of ['snappy', 'lz4', 'zstd'] as const) {
    const batch = with_base_offset(await compress_record_batch(encode_record_batch([0, 1, 2].map(record)), codec), 30);
    assert.equal(batch.readInt16BE(21) & 7, { snappy: 2, lz4: 3, zstd: 4 }[codec]);
    const decoded = await decode_fetched(batch, 31);
    assert.deepEqual(
      decoded.messages.map((m) => [m.offset, m.key!.toString(), m.value!.toString()]),
      [
        ['31', 'k1', 'v1'],
        ['32', 'k2', 'v2'],
      ],
      codec,
    );
  }
});

test("an aborted transaction hides only its own records: the producer's next, committed one is read", async () => {
  // An ABORT marker is type 0 and COMMIT 1: taking COMMIT for the end of the aborted transaction
  // left the producer's later records dropped.
  const txn = with_base_offset(
    encode_record_batch([6, 7].map(record), { attributes: 0x10, producer_id: 9, producer_epoch: 0, base_sequence: 0 }),
    20,
  );
  const next_txn = with_base_offset(
    encode_record_batch([9].map(record), { attributes: 0x10, producer_id: 9, producer_epoch: 0, base_sequence: 2 }),
    23,
  );
  const set = Buffer.concat([txn, control_batch(9, true, 22), next_txn, control_batch(9, false, 24)]);
  const view = await decode_fetched(set, 20, { aborted_transactions: [{ producer_id: 9, first_offset: 20 }] });
  assert.deepEqual(
    view.messages.map((m) => m.offset),
    ['23'],
  );
});
