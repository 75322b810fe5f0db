import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ManualClock, SimFileIO, Storage, storage_config_default, type PartitionLog } from './index.ts';
import { decode_record_batch } from '../protocol/record_batch.ts';
import { make_batch, open_sim, read_all, settle, temp_dir, values_of } from '../../test/support/storage.ts';

test('appends get consecutive offsets and read back byte for byte', async () => {
  const io = new SimFileIO();
  const storage = await open_sim(io);
  const log = await storage.create_partition('orders-0');
  const first = await log.append(make_batch('a', 3));
  const second = await log.append(make_batch('b', 2));
  assert.deepEqual([first.base_offset, first.last_offset, second.base_offset, second.last_offset], [0, 2, 3, 4]);
  assert.equal(log.high_watermark, 5);
  const { batches } = await log.read(0, 1 << 20);
  assert.deepEqual(values_of(batches), ['a:0', 'a:1', 'a:2', 'b:0', 'b:1']);
  const tail = await log.read(4, 1);
  assert.equal(tail.batches.length, 1, 'a read inside a batch returns that whole batch');
  assert.deepEqual(values_of(tail.batches), ['b:0', 'b:1']);
  await storage.close();
  const reopened = await open_sim(io);
  const again = reopened.require('orders-0');
  assert.equal(again.high_watermark, 5);
  assert.deepEqual(
    (await read_all(again)).map((r) => r.value),
    ['a:0', 'a:1', 'a:2', 'b:0', 'b:1'],
  );
  await reopened.close();
});

function random_source(seed: number) {
  let state = seed;
  return (limit: number) => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state % limit;
  };
}

interface Expected {
  offset: number;
  value: string;
  timestamp_ms: number;
  batch_base: number;
}

/** A log of random batches (sizes, record counts, shuffled timestamps) and its brute-force view. */
async function random_log(log: PartitionLog, seed: number, batches: number): Promise<Expected[]> {
  const random = random_source(seed);
  const expected: Expected[] = [];
  for (let b = 0; b < batches; b++) {
    const count = 1 + random(5);
    const timestamps = Array.from({ length: count }, () => 1_000_000 + b * 10 + random(40) - 20);
    const result = await log.append(make_batch(`b${b}`, count, { value_bytes: 10 + random(300), timestamps }));
    for (let i = 0; i < count; i++) {
      expected.push({
        offset: result.base_offset + i,
        value: `b${b}:${i}`,
        timestamp_ms: timestamps[i]!,
        batch_base: result.base_offset,
      });
    }
  }
  return expected;
}

async function check_lookups(log: PartitionLog, expected: Expected[], seed: number): Promise<void> {
  for (const record of expected) {
    const { batches } = await log.read(record.offset, 1);
    assert.equal(batches.length, 1);
    assert.equal(Number(batches[0]!.readBigInt64BE(0)), record.batch_base, `offset ${record.offset} maps to its batch`);
    assert.ok(
      decode_record_batch(batches[0]!).some(
        (r) => r.offset === record.offset && r.value!.toString().startsWith(record.value),
      ),
    );
  }
  const random = random_source(seed);
  const low = Math.min(...expected.map((r) => r.timestamp_ms)) - 5;
  const high = Math.max(...expected.map((r) => r.timestamp_ms)) + 5;
  for (let i = 0; i < 300; i++) {
    const target = low + random(high - low);
    const brute = expected.find((r) => r.timestamp_ms >= target);
    const found = await log.offset_for_timestamp(target);
    assert.equal(found?.offset ?? null, brute?.offset ?? null, `first offset with timestamp >= ${target}`);
  }
}

test('offset and time lookups agree with a brute-force scan, before and after reopening', async () => {
  for (const seed of [1, 2, 3]) {
    const io = new SimFileIO();
    const overrides = { tail_cache_bytes_max: 0 };
    const log_config = { segment_bytes: 3000, index_interval_bytes: 200 };
    const storage = await open_sim(io, overrides, { log_config: () => log_config });
    const log = await storage.create_partition('p-0', log_config);
    const expected = await random_log(log, seed, 120);
    assert.ok(log.segment_count > 5, 'the log spans many segments');
    await check_lookups(log, expected, seed);
    await storage.close();
    const reopened = await open_sim(io, overrides, { log_config: () => log_config });
    await check_lookups(reopened.require('p-0'), expected, seed + 100);
    await reopened.close();
  }
});

test('segments roll by size and by age', async () => {
  const io = new SimFileIO();
  const clock = new ManualClock();
  const storage = await open_sim(io, {}, { clock });
  const log = await storage.create_partition('p-0', { segment_bytes: 1000, segment_ms: 60_000 });
  const batch_bytes = make_batch('x0', 2, { value_bytes: 100 }).length;
  for (let i = 0; i < 8; i++) await log.append(make_batch(`x${i}`, 2, { value_bytes: 100 }));
  const per_segment = Math.floor(1000 / batch_bytes);
  assert.equal(log.segment_count, Math.ceil(8 / per_segment));
  const before = log.segment_count;
  clock.advance(61_000);
  await log.append(make_batch('late', 1));
  assert.equal(log.segment_count, before + 1, 'an old active segment rolls on the next append');
  assert.deepEqual(log.segment_base_offsets().slice(-1), [16]);
  await storage.close();
});

test('retention by time and by size deletes whole closed segments and moves the log start', async () => {
  const io = new SimFileIO();
  const clock = new ManualClock(2_000_000);
  const log_config = { segment_bytes: 700, retention_ms: 10_000, retention_bytes: -1 };
  const storage = await open_sim(io, {}, { clock, log_config: () => log_config });
  const log = await storage.create_partition('p-0', log_config);
  for (let i = 0; i < 6; i++) await log.append(make_batch(`old${i}`, 2, { value_bytes: 100, timestamp_ms: 1_000_000 }));
  for (let i = 0; i < 6; i++) await log.append(make_batch(`new${i}`, 2, { value_bytes: 100, timestamp_ms: 1_995_000 }));
  const deleted = await storage.enforce_retention();
  assert.ok(deleted > 0);
  const records = await read_all(log);
  assert.ok(records.every((r) => r.value.startsWith('new') || r.offset >= log.log_start_offset));
  assert.ok(
    records.some((r) => r.value.startsWith('new0')),
    'recent records stay',
  );
  assert.equal(
    records.filter((r) => r.value.startsWith('old')).length <= 4,
    true,
    'at most the segment holding the boundary keeps old records',
  );
  const start = log.log_start_offset;
  await assert.rejects(async () => log.read(start - 1, 100));
  // By size: keep at most ~1000 bytes.
  log.config = { ...log.config, retention_ms: -1, retention_bytes: 1000 };
  await storage.enforce_retention();
  assert.ok(log.size_bytes - 700 < 1000, `size ${log.size_bytes} is within one segment of the limit`);
  const start_after = log.log_start_offset;
  await storage.close();
  const reopened = await open_sim(io, {}, { clock, log_config: () => log_config });
  assert.equal(reopened.require('p-0').log_start_offset, start_after, 'the log start survives a restart');
  await reopened.close();
});

test('delete-records advances the log start durably and removes segments below it', async () => {
  const io = new SimFileIO();
  const log_config = { segment_bytes: 700 };
  const storage = await open_sim(io, {}, { log_config: () => log_config });
  const log = await storage.create_partition('p-0', log_config);
  for (let i = 0; i < 10; i++) await log.append(make_batch(`m${i}`, 2, { value_bytes: 100 }));
  const segments_before = log.segment_count;
  assert.equal(await log.delete_records_before(9), 9);
  assert.ok(log.segment_count < segments_before);
  await assert.rejects(async () => log.read(8, 100));
  const { batches } = await log.read(9, 1);
  assert.equal(
    decode_record_batch(batches[0]!).some((r) => r.offset === 9),
    true,
  );
  await assert.rejects(async () => log.delete_records_before(25), /high watermark/);
  // A power loss right after: the new start is durable.
  io.stop();
  await settle();
  storage.halt();
  io.crash({ keep_unsynced: false });
  const reopened = await open_sim(io, {}, { log_config: () => log_config });
  assert.equal(reopened.require('p-0').log_start_offset, 9);
  assert.equal((await read_all(reopened.require('p-0')))[0]!.offset, 9);
  await reopened.close();
});

test('a deleted or damaged index file is rebuilt from the segment (real file system)', async () => {
  const dir = temp_dir('index');
  try {
    const config = { ...storage_config_default(dir), tail_cache_bytes_max: 0, retention_check_interval_ms: 0 };
    const log_config = { segment_bytes: 4000, index_interval_bytes: 300 };
    const storage = await Storage.open(config, { log_config: () => log_config });
    const log = await storage.create_partition('p-0', log_config);
    const expected = await random_log(log, 7, 80);
    await storage.close();
    const partition_dir = path.join(dir, 'p-0');
    const index_files = fs.readdirSync(partition_dir).filter((name) => name.endsWith('.index'));
    assert.ok(index_files.length > 2);
    fs.unlinkSync(path.join(partition_dir, index_files[0]!));
    fs.writeFileSync(path.join(partition_dir, index_files[1]!), Buffer.from([1, 2, 3])); // not a whole entry
    const time_files = fs.readdirSync(partition_dir).filter((name) => name.endsWith('.timeindex'));
    fs.unlinkSync(path.join(partition_dir, time_files[2]!));
    const reopened = await Storage.open(config, { log_config: () => log_config });
    await check_lookups(reopened.require('p-0'), expected, 9);
    await reopened.close();
    assert.ok(fs.existsSync(path.join(partition_dir, index_files[0]!)), 'the rebuilt index was saved');
    assert.equal(fs.statSync(path.join(partition_dir, index_files[1]!)).size % 8, 0);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('tail reads come from memory; older reads from the files', async () => {
  const io = new SimFileIO();
  const storage = await open_sim(io, { tail_cache_bytes_max: 2000 });
  const log = await storage.create_partition('p-0');
  for (let i = 0; i < 20; i++) await log.append(make_batch(`m${i}`, 2, { value_bytes: 100 }));
  const reads_before = io.reads;
  const tail = await log.read(38, 1 << 20);
  assert.equal(io.reads, reads_before, 'the tail came from the cache');
  assert.deepEqual(values_of(tail.batches), ['m19:0', 'm19:1']);
  const head = await log.read(0, 300);
  assert.ok(io.reads > reads_before, 'the head came from the file');
  assert.deepEqual(values_of(head.batches).slice(0, 2), ['m0:0', 'm0:1']);
  assert.ok(storage.tail_cache.bytes <= 2000);
  await storage.close();
});

test('interval and none policies acknowledge on write; fsync waits for the flush round', async () => {
  for (const durability of [{ kind: 'interval', interval_ms: 50 }, { kind: 'none' }, { kind: 'fsync' }] as const) {
    const io = new SimFileIO();
    const storage = await open_sim(io, { durability });
    const log = await storage.create_partition('p-0');
    const syncs_before = io.fdatasyncs;
    await log.append(make_batch('a', 1));
    const synced = io.fdatasyncs > syncs_before;
    assert.equal(
      synced,
      durability.kind === 'fsync',
      `${durability.kind}: acknowledged ${synced ? 'after' : 'before'} fdatasync`,
    );
    assert.equal(log.high_watermark, 1);
    await storage.checkpoint();
    assert.equal(log.flushed_offset, 1, 'a checkpoint flushes under every policy');
    await storage.close();
  }
});

test('group commit: concurrent appends to many partitions share flush rounds', async () => {
  const io = new SimFileIO();
  const storage = await open_sim(io);
  const logs = await Promise.all(Array.from({ length: 8 }, (_, p) => storage.create_partition(`g-${p}`)));
  const rounds_before = storage.flusher.rounds;
  const appends = [];
  for (let i = 0; i < 10; i++) for (const log of logs) appends.push(log.append(make_batch(`${log.name}-${i}`, 1)));
  await Promise.all(appends);
  const rounds = storage.flusher.rounds - rounds_before;
  assert.ok(rounds <= 4, `80 appends took ${rounds} flush rounds`);
  await storage.close();
});

test('the high watermark hook: replication sets it, reads and listeners follow it', async () => {
  const io = new SimFileIO();
  const storage = await open_sim(io);
  const log = await storage.create_partition('p-0');
  log.high_watermark_mode = 'external';
  const seen: number[] = [];
  const unsubscribe = log.on_high_watermark((hw) => seen.push(hw));
  await log.append(make_batch('a', 2));
  await log.append(make_batch('b', 2));
  assert.equal(log.high_watermark, 0, 'nothing is visible before replication says so');
  assert.equal((await log.read(0, 100, 'log_end')).batches.length, 1, 'followers read up to the written end');
  log.set_high_watermark(2);
  assert.deepEqual(values_of((await log.read(0, 1 << 20)).batches), ['a:0', 'a:1']);
  assert.throws(() => log.set_high_watermark(10), /beyond written end/);
  unsubscribe();
  log.set_high_watermark(4);
  assert.deepEqual(seen, [2]);
  await storage.close();
});
