// Rewriting closed segments (the storage half of log compaction): offsets kept and gaps read
// across, a follower copying a log with gaps, reads under way during a swap never mixing the two
// files, and a machine stop at every step of a rewrite leaving the old segment or the new one,
// whole, after recovery (power loss and process crash alike). And a read that finds only empty
// batches at a segment's end goes on into the next segment.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SimFileIO, type PartitionLog, type Storage } from './index.ts';
import { make_batch, open_sim, read_all, settle } from '../../test/support/storage.ts';
import { crc32c } from '@node-rs/crc32';
import { batch_base_offset, batch_records_count } from '../format/batch_layout.ts';
import type { SegmentView } from './segment_rewriter.ts';

const PARTITION = 'compacted-0';
const LOG_CONFIG = { segment_bytes: 600, index_interval_bytes: 128 };

/** 30 batches of 2 records in segments of a few batches each; returns the log. */
async function filled(storage: Storage): Promise<PartitionLog> {
  const log = await storage.create_partition(PARTITION, LOG_CONFIG);
  for (let i = 0; i < 30; i++) await log.append(make_batch(`b${i}`, 2, { value_bytes: 40 }));
  return log;
}

/** Rewrites every closed segment keeping only the batches whose base offset is a multiple of 4. */
async function drop_batches(log: PartitionLog): Promise<SegmentView[]> {
  const views = await log.rewriter.closed_below(Number.POSITIVE_INFINITY);
  for (const view of views) {
    await log.rewriter.rewrite(view, async (write) => {
      for await (const batches of log.rewriter.batches(view, 256)) {
        await write(batches.filter((batch) => batch_base_offset(batch, 0) % 4 === 0));
      }
      return true;
    });
  }
  return views;
}

function kept_after(views: SegmentView[], records: Array<{ offset: number }>) {
  const rewritten_end = views.at(-1)!.end_offset;
  return records.filter((r) => r.offset >= rewritten_end || Math.floor(r.offset / 2) % 2 === 0);
}

test('a rewrite keeps offsets, reads step over the gaps, and the log survives a restart', async () => {
  const io = new SimFileIO();
  const storage = await open_sim(io, {}, { log_config: () => LOG_CONFIG });
  const log = await filled(storage);
  const before = await read_all(log);
  const size_before = log.size_bytes;
  const views = await drop_batches(log);
  assert.ok(views.length >= 3, `closed segments: ${views.length}`);
  const expected = kept_after(views, before);
  assert.deepEqual(await read_all(log), expected);
  assert.ok(log.size_bytes < size_before);
  // A read from inside a gap returns the next batch kept.
  const { batches } = await log.read(2, 1024);
  assert.equal(batch_base_offset(batches[0]!, 0), 4);
  const appended = await log.append(make_batch('after', 1));
  assert.equal(appended.base_offset, 60, 'appends go on at the same end');
  await storage.close();
  const reopened = await open_sim(io, {}, { log_config: () => LOG_CONFIG });
  const again = reopened.require(PARTITION);
  assert.deepEqual((await read_all(again)).slice(0, expected.length), expected);
  assert.equal(again.next_offset, 61);
  await reopened.close();
});

test('a follower copies a log with gaps: batches after its end are taken', async () => {
  const io = new SimFileIO();
  const storage = await open_sim(io);
  const leader = await filled(storage);
  await drop_batches(leader);
  const follower = await storage.create_partition('copy-0', LOG_CONFIG);
  let offset = 0;
  while (offset < leader.high_watermark) {
    const { batches } = await leader.read(offset, 300, 'log_end');
    if (batches.length === 0) break;
    await follower.append(Buffer.concat(batches), { replicated: true });
    offset = follower.next_offset;
  }
  assert.deepEqual(await read_all(follower), await read_all(leader));
  assert.equal(follower.next_offset, leader.next_offset);
  await assert.rejects(follower.append(make_batch('x', 1), { replicated: true }), /does not continue the log/);
  await storage.close();
});

test('reads under way while segments are swapped see whole batches of one file or the other', async () => {
  const io = new SimFileIO();
  const storage = await open_sim(io, { verify_reads: true });
  const log = await filled(storage);
  const before = await read_all(log);
  let reading = true;
  const readers = Array.from({ length: 4 }, async () => {
    let reads = 0;
    while (reading || reads === 0) {
      const records = await read_all(log, 100);
      for (const record of records)
        assert.ok(before.some((r) => r.offset === record.offset && r.value === record.value));
      reads++;
      await new Promise((resolve) => setImmediate(resolve)); // the rewrite's I/O runs between reads
    }
    return reads;
  });
  const views = await drop_batches(log);
  reading = false;
  for (const reads of await Promise.all(readers)) assert.ok(reads > 0);
  assert.deepEqual(await read_all(log), kept_after(views, before));
  await storage.close();
});

/** SimFileIO that stops the machine at the `stop_at`-th changing operation once armed. */
class StepIO extends SimFileIO {
  armed = false;
  steps = 0;
  stop_at = Number.POSITIVE_INFINITY;
  private step(): void {
    if (!this.armed) return;
    this.steps++;
    if (this.steps === this.stop_at) this.stop();
  }
  override open(file: string, mode: 'read' | 'update' | 'create') {
    if (mode !== 'read') this.step();
    return super.open(file, mode);
  }
  override writev(fd: number, buffers: readonly Buffer[], position: number) {
    this.step();
    return super.writev(fd, buffers, position);
  }
  override fdatasync(fd: number) {
    this.step();
    return super.fdatasync(fd);
  }
  override rename(from: string, to: string) {
    this.step();
    return super.rename(from, to);
  }
  override unlink(file: string) {
    this.step();
    return super.unlink(file);
  }
  override fsync_dir(dir: string) {
    this.step();
    return super.fsync_dir(dir);
  }
}

test('a machine stop at every step of a rewrite leaves the old or the new segment, whole', async () => {
  // Dry run: how many changing steps does the rewrite of every closed segment take?
  const dry = new StepIO();
  const dry_storage = await open_sim(dry, {}, { log_config: () => LOG_CONFIG });
  const before = await read_all(await filled(dry_storage));
  dry.armed = true;
  const views = await drop_batches(dry_storage.require(PARTITION));
  const total = dry.steps;
  await dry_storage.close();
  const after = kept_after(views, before);
  assert.ok(total > 10, `steps: ${total}`);
  for (const keep_unsynced of [false, true]) {
    for (let stop_at = 1; stop_at <= total; stop_at++) {
      const io = new StepIO();
      const storage = await open_sim(io, {}, { log_config: () => LOG_CONFIG });
      await filled(storage);
      io.armed = true;
      io.stop_at = stop_at;
      await drop_batches(storage.require(PARTITION)).catch(() => undefined);
      await settle();
      storage.halt();
      io.crash({ keep_unsynced });
      const reopened = await open_sim(io, {}, { log_config: () => LOG_CONFIG });
      const records = await read_all(reopened.require(PARTITION));
      const where = `stop at step ${stop_at} of ${total} (keep_unsynced ${keep_unsynced})`;
      // Each segment holds its old records or its new ones: every record read is one of the old
      // ones, each kept record is there, and the log ends where it did.
      for (const record of after)
        assert.ok(
          records.some((r) => r.offset === record.offset),
          `${where}: ${record.offset}`,
        );
      for (const record of records) {
        const old = before.find((r) => r.offset === record.offset);
        assert.equal(record.value, old?.value, where);
      }
      assert.equal(reopened.require(PARTITION).next_offset, 60, where);
      const names = await io.readdir(`/data/${PARTITION}`);
      assert.deepEqual(
        names.filter((name) => name.endsWith('.cleaned')),
        [],
        `${where}: no copy left`,
      );
      await reopened.close();
    }
  }
});

/** The batch with no records left: its header alone (a producer's batch a cleaner keeps empty). */
function emptied(batch: Buffer): Buffer {
  const out = Buffer.from(batch.subarray(0, 61));
  out.writeInt32BE(61 - 12, 8);
  out.writeInt32BE(0, 57);
  out.writeUInt32BE(crc32c(out.subarray(21)), 17);
  return out;
}

test('a read finding only empty batches goes on into the next segment (kafkajs_stuck_on_empty_batches)', async () => {
  // A cluster test's kafkajs consumer asked for the same offset for ever: the response held only
  // the empty batches that ended a compacted segment, and kafkajs steps over records, not batches.
  const io = new SimFileIO();
  const storage = await open_sim(io);
  const log = await filled(storage);
  const [view] = await log.rewriter.closed_below(Number.POSITIVE_INFINITY);
  let last_base = -1;
  await log.rewriter.rewrite(view!, async (write) => {
    const all: Buffer[] = [];
    for await (const batches of log.rewriter.batches(view!, 256)) all.push(...batches);
    const last = all.at(-1)!;
    last_base = batch_base_offset(last, 0);
    await write([emptied(last)]);
    return true;
  });
  const { batches } = await log.read(0, 64);
  assert.equal(batch_base_offset(batches[0]!, 0), last_base, 'the empty batch first');
  assert.equal(batch_records_count(batches[0]!, 0), 0);
  assert.equal(batch_base_offset(batches[1]!, 0), view!.end_offset, "then the next segment's first batch");
  assert.ok(batch_records_count(batches[1]!, 0) > 0);
  await storage.close();
});
