// The log cleaner over a simulated disk: the latest record of each key kept and offsets unchanged,
// tombstones kept until delete.retention.ms, transactional batches left whole, a compressed batch
// compacted in its own codec, an idempotent producer's retained batch kept as an empty batch, the
// dirty ratio and min.compaction.lag.ms deciding when a pass runs, and the memory bound making a
// pass stop at a segment boundary.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ManualClock, SILENT_LOGGER, SimFileIO, type PartitionLog } from '../../storage/index.ts';
import { open_sim } from '../../../test/support/storage.ts';
import { decode_record_batch, encode_record_batch } from '../../protocol/record_batch.ts';
import { compress_record_batch, decompress_record_batch } from '../../protocol/compression.ts';
import { ATTRIBUTE_TRANSACTIONAL, batch_compression, batch_records_count } from '../../format/batch_layout.ts';
import { PartitionProducers } from '../producer_state.ts';
import { LogCleaner, type CompactionConfig } from './log_cleaner.ts';

const NOW_MS = 1_700_000_000_000;
const CONFIG: CompactionConfig = {
  delete_retention_ms: 60_000,
  min_compaction_lag_ms: 0,
  max_compaction_lag_ms: Number.MAX_SAFE_INTEGER,
  min_cleanable_dirty_ratio: 0.5,
};
const SETTINGS = { interval_ms: 60_000, memory_bytes_max: 16 * 1024 * 1024, io_bytes_per_s_max: 0 };

type Write = [key: string | null, value: string | null];

function batch_of(writes: Write[], timestamp_ms = NOW_MS, options = {}): Buffer {
  return encode_record_batch(
    writes.map(([key, value]) => ({
      key: key === null ? null : Buffer.from(key),
      value: value === null ? null : Buffer.from(value),
      timestamp_ms,
    })),
    options,
  );
}

async function compacted_log(clock = new ManualClock(NOW_MS)) {
  const storage = await open_sim(new SimFileIO(), {}, { clock });
  const log = await storage.create_partition('kv-0', { segment_bytes: 400, index_interval_bytes: 64 });
  return { storage, log, clock };
}

function cleaner_of(log: PartitionLog, clock: ManualClock, options: Partial<typeof SETTINGS> = {}, config = CONFIG) {
  const producers = new PartitionProducers();
  const entry = { topic: 'kv', partition: 0, log, config, producers };
  return { cleaner: new LogCleaner(() => [entry], clock, SILENT_LOGGER, { ...SETTINGS, ...options }), producers };
}

/** Every record below the high watermark: offset, key, value (null for a tombstone). */
async function records(log: PartitionLog) {
  const out: Array<{ offset: number; key: string | null; value: string | null }> = [];
  let offset = log.log_start_offset;
  while (offset < log.high_watermark) {
    const { batches } = await log.read(offset, 1 << 20);
    if (batches.length === 0) break;
    for (const stored of batches) {
      const batch = await decompress_record_batch(stored);
      for (const r of decode_record_batch(batch))
        out.push({ offset: r.offset, key: r.key?.toString() ?? null, value: r.value?.toString() ?? null });
      offset = Number(batch.readBigInt64BE(0)) + batch.readInt32BE(23) + 1;
    }
  }
  return out;
}

/** The latest value of each key in `writes` order, offsets counted from 0 (one record per offset). */
function latest(writes: Write[]) {
  const last = new Map<string, { offset: number; value: string | null }>();
  writes.forEach(([key, value], offset) => last.set(key!, { offset, value }));
  return last;
}

test("each key's latest record in the closed segments stays at its offset; the active one is untouched", async () => {
  const { storage, log, clock } = await compacted_log();
  const writes: Write[] = [];
  for (let i = 0; i < 120; i++) writes.push([`k${i % 10}`, `v${i}`]);
  for (let i = 0; i < writes.length; i += 3) await log.append(batch_of(writes.slice(i, i + 3)));
  const before = await records(log);
  const { cleaner } = cleaner_of(log, clock);
  await cleaner.run_once();
  const after = await records(log);
  const active_base = log.segment_base_offsets().at(-1)!;
  // The map reaches the end of the closed segments: below it, each key's latest there stays.
  const closed = latest(writes.slice(0, active_base));
  const expected = before.filter((r) => r.offset >= active_base || closed.get(r.key!)!.offset === r.offset);
  assert.deepEqual(after, expected);
  assert.ok(after.length < before.length);
  const [status] = cleaner.statuses_now();
  assert.equal(status!.passes, 1);
  assert.ok(status!.bytes_written < status!.bytes_read);
  await storage.close();
});

test('a tombstone stays until delete.retention.ms, then goes with every older value of its key', async () => {
  const { storage, log, clock } = await compacted_log();
  for (let round = 0; round < 6; round++)
    await log.append(
      batch_of([
        ['gone', `v${round}`],
        ['kept', `w${round}`],
      ]),
    );
  await log.append(batch_of([['gone', null]]));
  for (let i = 0; i < 12; i++) await log.append(batch_of([[`pad${i}`, 'x'.repeat(60)]]));
  const { cleaner } = cleaner_of(log, clock, {}, { ...CONFIG, min_cleanable_dirty_ratio: 0 });
  await cleaner.run_once();
  const keys_of = async () => (await records(log)).filter((r) => r.key === 'gone' || r.key === 'kept');
  assert.deepEqual(await keys_of(), [
    { offset: 11, key: 'kept', value: 'w5' },
    { offset: 12, key: 'gone', value: null },
  ]);
  clock.advance(CONFIG.delete_retention_ms + 1);
  // A new pass runs once something is dirty again: the last pass mapped every segment.
  for (let i = 0; i < 12; i++) await log.append(batch_of([[`more${i}`, 'y'.repeat(60)]]));
  await cleaner.run_once();
  assert.deepEqual(await keys_of(), [{ offset: 11, key: 'kept', value: 'w5' }]);
  await storage.close();
});

test('transactional batches stay whole and their records make no other go', async () => {
  const { storage, log, clock } = await compacted_log();
  await log.append(batch_of([['k', 'plain-1']]));
  const txn = { producer_id: 7, producer_epoch: 0, base_sequence: 0, attributes: ATTRIBUTE_TRANSACTIONAL };
  await log.append(batch_of([['k', 'in-txn']], NOW_MS, txn));
  for (let i = 0; i < 12; i++) await log.append(batch_of([[`pad${i}`, 'x'.repeat(60)]]));
  const { cleaner } = cleaner_of(log, clock, {}, { ...CONFIG, min_cleanable_dirty_ratio: 0 });
  await cleaner.run_once();
  const values = (await records(log)).filter((r) => r.key === 'k').map((r) => r.value);
  assert.deepEqual(values, ['plain-1', 'in-txn']);
  await storage.close();
});

test('a compressed batch is compacted in its own codec', async () => {
  const { storage, log, clock } = await compacted_log();
  await log.append(
    await compress_record_batch(
      batch_of([
        ['a', '1'],
        ['b', '1'],
        ['c', '1'],
      ]),
      'gzip',
    ),
  );
  await log.append(batch_of([['a', '2']]));
  for (let i = 0; i < 12; i++) await log.append(batch_of([[`pad${i}`, 'x'.repeat(60)]]));
  const { cleaner } = cleaner_of(log, clock, {}, { ...CONFIG, min_cleanable_dirty_ratio: 0 });
  await cleaner.run_once();
  const { batches } = await log.read(0, 1 << 20);
  assert.equal(batch_compression(batches[0]!, 0), 1, 'still gzip');
  assert.equal(batch_records_count(batches[0]!, 0), 2);
  const firsts = (await records(log)).filter((r) => ['a', 'b', 'c'].includes(r.key!));
  assert.deepEqual(
    firsts.map((r) => `${r.key}=${r.value}@${r.offset}`),
    ['b=1@1', 'c=1@2', 'a=2@3'],
  );
  await storage.close();
});

test("an idempotent producer's retained batch stays, emptied; others of its batches go", async () => {
  const { storage, log, clock } = await compacted_log();
  const { cleaner, producers } = cleaner_of(log, clock, {}, { ...CONFIG, min_cleanable_dirty_ratio: 0 });
  for (let sequence = 0; sequence < 2; sequence++) {
    const base_offset = log.next_offset;
    await log.append(
      batch_of([['k', `p${sequence}`]], NOW_MS, { producer_id: 3, producer_epoch: 0, base_sequence: sequence }),
    );
    if (sequence === 1) {
      producers.record(3, 0, {
        first_sequence: 1,
        last_sequence: 1,
        base_offset,
        last_offset: base_offset,
        max_timestamp_ms: NOW_MS,
        settled: Promise.resolve(),
      });
    }
  }
  await log.append(batch_of([['k', 'plain']]));
  for (let i = 0; i < 12; i++) await log.append(batch_of([[`pad${i}`, 'x'.repeat(60)]]));
  await cleaner.run_once();
  const { batches } = await log.read(0, 1 << 20);
  assert.equal(Number(batches[0]!.readBigInt64BE(0)), 1, 'the first batch went, the retained one is first');
  assert.equal(batch_records_count(batches[0]!, 0), 0, 'kept empty');
  assert.deepEqual(
    (await records(log)).filter((r) => r.key === 'k').map((r) => r.value),
    ['plain'],
  );
  await storage.close();
});

test('a pass waits for the dirty ratio and min.compaction.lag.ms; the memory bound stops at a segment', async () => {
  const { storage, log, clock } = await compacted_log();
  for (let i = 0; i < 60; i++) await log.append(batch_of([[`k${i % 5}`, `v${i}`.padEnd(40, '.')]]));
  const lagging = cleaner_of(log, clock, {}, { ...CONFIG, min_compaction_lag_ms: 10_000 }).cleaner;
  await lagging.run_once();
  assert.equal(lagging.statuses_now()[0]!.passes, 0, 'every segment is younger than the lag');
  const small = cleaner_of(log, clock, { memory_bytes_max: 3 * 66 }).cleaner;
  await small.run_once();
  const status = small.statuses_now()[0]!;
  assert.equal(status.passes, 1);
  const segments = log.segment_base_offsets();
  assert.ok(status.first_dirty_offset > 0 && status.first_dirty_offset < segments.at(-1)!, 'stopped part-way');
  assert.ok(segments.includes(status.first_dirty_offset), 'at a segment boundary');
  const full = cleaner_of(log, clock).cleaner;
  await full.run_once();
  const settled = full.statuses_now()[0]!;
  await full.run_once();
  assert.equal(full.statuses_now()[0]!.passes, settled.passes, 'nothing dirty: no second pass');
  assert.equal(settled.dirty_ratio, 0);
  await storage.close();
});

test('where the cleaner stopped survives a restart: the next pass maps only what came since', async () => {
  const io = new SimFileIO();
  const clock = new ManualClock(NOW_MS);
  const log_config = { segment_bytes: 400, index_interval_bytes: 64 };
  const storage = await open_sim(io, {}, { clock, log_config: () => log_config });
  const log = await storage.create_partition('kv-0', log_config);
  const write = async (into: PartitionLog, from: number) => {
    for (let i = from; i < from + 120; i += 3)
      await into.append(batch_of([0, 1, 2].map((j) => [`k${(i + j) % 10}`, `v${i + j}`] as Write)));
  };
  await write(log, 0);
  const first = cleaner_of(log, clock).cleaner;
  await first.run_once();
  const stopped_at = first.statuses_now()[0]!.first_dirty_offset;
  assert.ok(stopped_at > 0);
  await storage.close();

  const reopened = await open_sim(io, {}, { clock, log_config: () => log_config });
  const again = reopened.partition('kv-0')!;
  assert.equal(again.rewriter.cleaned_below, stopped_at);
  await write(again, 120);
  const second = cleaner_of(again, clock).cleaner;
  assert.equal(second.status('kv-0'), null);
  await second.run_once();
  const status = second.statuses_now()[0]!;
  assert.equal(status.passes, 1);
  const mapped = (await again.rewriter.closed_below(Number.POSITIVE_INFINITY)).filter((v) => v.end_offset > stopped_at);
  const all = await again.rewriter.closed_below(Number.POSITIVE_INFINITY);
  assert.ok(mapped.length < all.length, 'segments below the checkpoint were not dirty');
  assert.ok(again.rewriter.cleaned_below > stopped_at, 'the new stop is recorded');
  await reopened.close();
});
