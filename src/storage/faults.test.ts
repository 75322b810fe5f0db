// Bad input and I/O faults: refused batches write nothing, a full disk and I/O errors never leave a
// partial batch readable, and appends resume when the fault clears.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CorruptDataError,
  DiskFullError,
  InvalidBatchError,
  MessageTooLargeError,
  PartitionOfflineError,
  SimFileIO,
  StorageIOError,
  OffsetOutOfRangeError,
} from './index.ts';
import { make_batch, open_sim, read_all, settle } from '../../test/support/storage.ts';

const SEGMENT = `/data/p-0/${'0'.padStart(20, '0')}.log`;

test('malformed batches are refused with the reason, nothing is written, the log stays usable', async () => {
  const io = new SimFileIO();
  const storage = await open_sim(io);
  const log = await storage.create_partition('p-0', { message_bytes_max: 2000 });
  await log.append(make_batch('ok', 2));
  const size_before = io.peek(SEGMENT)!.length;
  const cases: Array<[string, Buffer, string]> = [];
  const bad_crc = make_batch('x', 2);
  bad_crc[bad_crc.length - 1]! ^= 0xff;
  cases.push(['crc', bad_crc, 'crc']);
  const bad_magic = make_batch('x', 2);
  bad_magic[16] = 1;
  cases.push(['magic', bad_magic, 'magic']);
  const short = make_batch('x', 2).subarray(0, 70);
  cases.push(['truncated', short, 'truncated']);
  const bad_length = make_batch('x', 2);
  bad_length.writeInt32BE(10, 8);
  cases.push(['length', bad_length, 'length']);
  const bad_count = make_batch('x', 2);
  bad_count.writeInt32BE(5, 57);
  cases.push(['record count', bad_count, 'crc']); // recordsCount is covered by the CRC
  cases.push(['empty', Buffer.alloc(0), 'truncated']);
  for (const [name, buffer, reason] of cases) {
    await assert.rejects(
      async () => log.append(buffer),
      (error: unknown) => error instanceof InvalidBatchError && error.reason === reason,
      name,
    );
  }
  await assert.rejects(async () => log.append(make_batch('big', 30, { value_bytes: 100 })), MessageTooLargeError);
  assert.equal(io.peek(SEGMENT)!.length, size_before, 'nothing was written');
  const next = await log.append(make_batch('after', 1));
  assert.equal(next.base_offset, 2);
  assert.deepEqual(
    (await read_all(log)).map((r) => r.value),
    ['ok:0', 'ok:1', 'after:0'],
  );
  await storage.close();
});

test('a full disk fails the append with a retriable error, leaves nothing partial, and appends resume', async () => {
  const io = new SimFileIO();
  const storage = await open_sim(io);
  const log = await storage.create_partition('p-0');
  await log.append(make_batch('before', 3, { value_bytes: 100 }));
  io.capacity_bytes = io.used_bytes() + 200; // room for part of the next batch only
  const results = await Promise.allSettled([
    log.append(make_batch('full-a', 3, { value_bytes: 100 })),
    log.append(make_batch('full-b', 3, { value_bytes: 100 })),
  ]);
  for (const result of results) {
    assert.equal(result.status, 'rejected');
    const error = (result as PromiseRejectedResult).reason;
    assert.ok(error instanceof DiskFullError, String(error));
    assert.equal(error.retriable, true);
  }
  assert.equal(log.written_offset, 3);
  assert.equal(log.next_offset, 3, 'offsets of refused appends are handed out again');
  assert.deepEqual(
    (await read_all(log)).map((r) => r.value),
    ['before:0', 'before:1', 'before:2'],
  );
  const file_size = io.peek(SEGMENT)!.length;
  io.capacity_bytes = null; // space returns
  const resumed = await log.append(make_batch('resumed', 1));
  assert.equal(resumed.base_offset, 3);
  assert.equal(io.peek(SEGMENT)!.length > file_size, true);
  await storage.close();
  const reopened = await open_sim(io);
  assert.deepEqual(
    (await read_all(reopened.require('p-0'))).map((r) => r.value),
    ['before:0', 'before:1', 'before:2', 'resumed:0'],
  );
  await reopened.close();
});

test('a torn write with EIO is cut back; the next append continues at the same offset', async () => {
  const io = new SimFileIO();
  const storage = await open_sim(io);
  const log = await storage.create_partition('p-0');
  await log.append(make_batch('a', 2));
  io.inject({ op: 'writev', path_includes: 'p-0', code: 'EIO', after_bytes: 40 });
  await assert.rejects(async () => log.append(make_batch('torn', 2)), StorageIOError);
  assert.equal(io.peek(SEGMENT)!.length, (await log.read(0, 1 << 20)).bytes, 'the torn bytes were cut off');
  const next = await log.append(make_batch('b', 1));
  assert.equal(next.base_offset, 2);
  assert.deepEqual(
    (await read_all(log)).map((r) => r.value),
    ['a:0', 'a:1', 'b:0'],
  );
  await storage.close();
});

test('a failed fsync takes the partition offline and acknowledges nothing; other partitions carry on', async () => {
  const io = new SimFileIO();
  const storage = await open_sim(io);
  const sick = await storage.create_partition('p-0');
  const healthy = await storage.create_partition('q-0');
  await sick.append(make_batch('a', 1));
  io.inject({ op: 'fdatasync', path_includes: '/p-0/', code: 'EIO' });
  const [failed, fine] = await Promise.allSettled([
    sick.append(make_batch('b', 1)),
    healthy.append(make_batch('c', 1)),
  ]);
  assert.equal(failed.status, 'rejected');
  assert.ok((failed as PromiseRejectedResult).reason instanceof PartitionOfflineError);
  assert.equal(fine.status, 'fulfilled');
  assert.equal(sick.is_offline, true);
  await assert.rejects(async () => sick.append(make_batch('d', 1)), PartitionOfflineError);
  await assert.rejects(async () => sick.read(0, 100), PartitionOfflineError);
  await healthy.append(make_batch('e', 1));
  await storage.close();
  // Reopening recovers it; the unacknowledged batch may or may not be there, the acknowledged one is.
  const reopened = await open_sim(io);
  const values = (await read_all(reopened.require('p-0'))).map((r) => r.value);
  assert.equal(values[0], 'a:0');
  await reopened.close();
});

test('a batch whose bytes rot on disk is never served', async () => {
  const io = new SimFileIO();
  const storage = await open_sim(io, { tail_cache_bytes_max: 0 });
  const log = await storage.create_partition('p-0', { segment_bytes: 600 });
  for (let i = 0; i < 12; i++) await log.append(make_batch(`m${i}`, 2, { value_bytes: 60 }));
  await storage.close();
  // Flip a byte inside a record of the first (closed, trusted) segment.
  io.poke(SEGMENT, 100, Buffer.from([0x55]));
  const reopened = await open_sim(io, { tail_cache_bytes_max: 0 });
  const again = reopened.require('p-0');
  await assert.rejects(async () => again.read(0, 1 << 20), CorruptDataError);
  const later = await again.read(again.segment_base_offsets()[1]!, 1 << 20);
  assert.ok(later.batches.length > 0, 'other segments still serve');
  await reopened.close();
});

test('reads outside the log are refused with its range', async () => {
  const io = new SimFileIO();
  const storage = await open_sim(io);
  const log = await storage.create_partition('p-0');
  await log.append(make_batch('a', 3));
  await assert.rejects(
    async () => log.read(4, 100),
    (error: unknown) => error instanceof OffsetOutOfRangeError && error.log_end_offset === 3,
  );
  await assert.rejects(async () => log.read(-1, 100), OffsetOutOfRangeError);
  assert.deepEqual((await log.read(3, 100)).batches, [], 'reading at the end returns nothing yet');
  await settle();
  await storage.close();
});

// Regression, found by the fault suite (seed 707): a consumer fetching at its position from a new
// leader whose high watermark had not yet caught up was told OFFSET_OUT_OF_RANGE, reset to the
// earliest offset, read the partition again from 0 and committed an offset far back.
const ABOVE_THE_HIGH_WATERMARK = 'consumer_reset_by_a_lagging_high_watermark: above it but within the log is empty';

test(ABOVE_THE_HIGH_WATERMARK, async () => {
  const storage = await open_sim(new SimFileIO());
  const log = await storage.create_partition('p-0');
  log.high_watermark_mode = 'external';
  await log.append(make_batch('a', 3));
  log.set_high_watermark(1);
  const above = await log.read(2, 100);
  assert.deepEqual(above.batches, [], 'nothing above the high watermark');
  assert.equal(above.high_watermark, 1);
  await assert.rejects(async () => log.read(4, 100), OffsetOutOfRangeError, 'past the written end is out of range');
  await storage.close();
});

const DURING_ROLLBACK = 'appends made while a failed write is rolled back are refused, not written at stale positions';

test(`${DURING_ROLLBACK} (append_during_rollback_broke_the_log)`, async () => {
  const io = new SimFileIO();
  const storage = await open_sim(io);
  const log = await storage.create_partition('p-0');
  await log.append(make_batch('before', 2, { value_bytes: 100 }));
  io.capacity_bytes = io.used_bytes() + 100;
  const first = log.append(make_batch('full', 2, { value_bytes: 100 }));
  let settled = false;
  void first.catch(() => undefined).finally(() => (settled = true));
  const late: Promise<unknown>[] = [];
  for (let i = 0; !settled && i < 1000; i++) {
    const appended = log.append(make_batch(`late${i}`, 1, { value_bytes: 100 }));
    appended.catch(() => undefined); // looked at below
    late.push(appended);
    await new Promise((resolve) => setImmediate(resolve));
  }
  await assert.rejects(first, DiskFullError);
  const outcomes = await Promise.allSettled(late);
  assert.ok(late.length > 1, 'appends came in while the write was failing');
  for (const outcome of outcomes) assert.equal(outcome.status, 'rejected');
  io.capacity_bytes = null;
  const after = await log.append(make_batch('after', 1));
  assert.equal(after.base_offset, 2, 'the refused offsets are handed out again');
  assert.deepEqual(
    (await read_all(log)).map((r) => r.value),
    ['before:0', 'before:1', 'after:0'],
  );
  await storage.close();
});
