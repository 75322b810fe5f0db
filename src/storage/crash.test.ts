// Crash recovery with the simulated file system: a machine stop at every byte of the last write,
// power loss versus process crash, garbage tails, and random append/crash sequences checked
// against a model of what was acknowledged.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SimFileIO, type AppendResult, type Storage } from './index.ts';
import { make_batch, open_sim, read_all, settle } from '../../test/support/storage.ts';

const PARTITION = 'events-0';

interface Workload {
  storage: Storage;
  acked: AppendResult[];
}

/** Appends `count` single batches one after another (each acknowledged), on a fresh storage. */
async function prefix_workload(io: SimFileIO, count: number): Promise<Workload> {
  const storage = await open_sim(io);
  const log = await storage.create_partition(PARTITION, { index_interval_bytes: 256 });
  const acked: AppendResult[] = [];
  for (let i = 0; i < count; i++) acked.push(await log.append(make_batch(`p${i}`, 1 + (i % 3), { value_bytes: 40 })));
  return { storage, acked };
}

/** The last write: `group` appends issued together, so they share one write call. */
function final_group(storage: Storage, group: number): Array<Promise<AppendResult>> {
  const log = storage.require(PARTITION);
  return Array.from({ length: group }, (_, i) => log.append(make_batch(`last${i}`, 2, { value_bytes: 30 })));
}

async function stop_and_crash(
  io: SimFileIO,
  storage: Storage,
  pending: Array<Promise<unknown>>,
  keep_unsynced: boolean,
) {
  io.stop();
  await Promise.allSettled(pending);
  await settle();
  storage.halt();
  io.crash({ keep_unsynced });
}

test('a machine stop at every byte of the last write keeps exactly the valid prefix', async () => {
  const PREFIX = 6;
  const GROUP = 3;
  // Dry run: where does the final write start and how big is each of its batches?
  const dry = new SimFileIO();
  const { storage: dry_storage } = await prefix_workload(dry, PREFIX);
  const write_start = dry.bytes_written;
  const sizes = Array.from({ length: GROUP }, (_, i) => make_batch(`last${i}`, 2, { value_bytes: 30 }).length);
  await Promise.all(final_group(dry_storage, GROUP));
  assert.equal(dry.writes > 0, true);
  await dry_storage.close();
  const write_bytes = sizes.reduce((a, b) => a + b, 0);

  for (const keep_unsynced of [true, false]) {
    for (let torn = 0; torn <= write_bytes; torn++) {
      const io = new SimFileIO();
      const { storage, acked } = await prefix_workload(io, PREFIX);
      assert.equal(io.bytes_written, write_start, 'the workload is deterministic');
      io.stop_after_bytes_written = write_start + torn;
      const pending = final_group(storage, GROUP);
      await Promise.allSettled(pending); // the machine stops by itself at the chosen byte
      await stop_and_crash(io, storage, pending, keep_unsynced);
      for (const result of await Promise.allSettled(pending))
        assert.equal(result.status, 'rejected', 'nothing unsynced was acknowledged');

      const reopened = await open_sim(io);
      const log = reopened.require(PARTITION);
      let whole = 0;
      for (let used = 0; whole < GROUP && used + sizes[whole]! <= torn; whole++) used += sizes[whole]!;
      const survivors = keep_unsynced ? whole : 0;
      const records = await read_all(log);
      const acked_records = acked[acked.length - 1]!.last_offset + 1;
      assert.equal(records.length, acked_records + survivors * 2, `torn at ${torn} (keep_unsynced ${keep_unsynced})`);
      assert.deepEqual(
        records.map((r) => r.offset),
        records.map((_, i) => i),
        'offsets stay dense',
      );
      const expected_tail = Array.from({ length: survivors }, (_, i) => [`last${i}:0`, `last${i}:1`]).flat();
      assert.deepEqual(
        records.slice(acked_records).map((r) => r.value),
        expected_tail,
      );
      // The log takes appends again right after the recovered end.
      const next = await log.append(make_batch('after', 1));
      assert.equal(next.base_offset, acked_records + survivors * 2);
      await reopened.close();
    }
  }
});

test('power loss keeps every append acknowledged under the fsync policy, across partitions', async () => {
  const io = new SimFileIO();
  const storage = await open_sim(io);
  const logs = await Promise.all([0, 1, 2].map((p) => storage.create_partition(`t-${p}`)));
  const acked = new Map<string, string[]>();
  const pending: Array<Promise<unknown>> = [];
  for (let round = 0; round < 20; round++) {
    for (const log of logs) {
      const tag = `${log.name}/${round}`;
      pending.push(
        log.append(make_batch(tag, 2)).then(() => {
          const list = acked.get(log.name) ?? [];
          list.push(`${tag}:0`, `${tag}:1`);
          acked.set(log.name, list);
        }),
      );
    }
    if (round === 12) await settle(3); // let some rounds of fsync complete mid-way
  }
  await settle(8);
  await stop_and_crash(io, storage, pending, false);
  const reopened = await open_sim(io);
  let survived = 0;
  for (const log of logs) {
    const values = (await read_all(reopened.require(log.name))).map((r) => r.value);
    const expected = acked.get(log.name) ?? [];
    assert.deepEqual(values.slice(0, expected.length), expected, `${log.name} lost an acknowledged append`);
    survived += expected.length;
  }
  assert.ok(survived > 0, 'some appends were acknowledged before the power loss');
  await reopened.close();
});

test('a zero-filled or garbage tail is cut at the last valid batch', async () => {
  for (const tail of [Buffer.alloc(300), Buffer.from(Array.from({ length: 300 }, (_, i) => (i * 37 + 11) & 0xff))]) {
    const io = new SimFileIO();
    const { storage, acked } = await prefix_workload(io, 4);
    const segment_file = `/data/${PARTITION}/${'0'.padStart(20, '0')}.log`;
    const size_before = io.peek(segment_file)!.length;
    const fd = await io.open(segment_file, 'update');
    await io.writev(fd, [tail], size_before);
    await io.fdatasync(fd);
    await stop_and_crash(io, storage, [], true);
    const reopened = await open_sim(io);
    const log = reopened.require(PARTITION);
    assert.equal(io.peek(segment_file)!.length, size_before);
    assert.equal((await read_all(log)).length, acked[acked.length - 1]!.last_offset + 1);
    await reopened.close();
  }
});

test('random appends and crashes never lose an acknowledged record nor invent one', async () => {
  let seed = 0x5eed;
  const random = () => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return seed / 0x7fffffff;
  };
  const io = new SimFileIO();
  const small_segments = { log_config: () => ({ segment_bytes: 2048, index_interval_bytes: 128 }) };
  let storage = await open_sim(io, {}, small_segments);
  await storage.create_partition(PARTITION, { segment_bytes: 2048, index_interval_bytes: 128 });
  const acked: string[] = [];
  const issued = new Set<string>();
  for (let cycle = 0; cycle < 25; cycle++) {
    const log = storage.require(PARTITION);
    const pending: Array<Promise<unknown>> = [];
    const appends = 1 + Math.floor(random() * 12);
    for (let i = 0; i < appends; i++) {
      const tag = `c${cycle}a${i}`;
      const count = 1 + Math.floor(random() * 4);
      for (let r = 0; r < count; r++) issued.add(`${tag}:${r}`);
      pending.push(
        log.append(make_batch(tag, count, { value_bytes: 20 + Math.floor(random() * 200) })).then(
          () => {
            for (let r = 0; r < count; r++) acked.push(`${tag}:${r}`);
          },
          () => undefined,
        ),
      );
      if (random() < 0.3) await settle(1 + Math.floor(random() * 4));
    }
    if (random() < 0.5) io.stop_after_bytes_written = io.bytes_written + Math.floor(random() * 1500);
    await settle(Math.floor(random() * 6));
    await stop_and_crash(io, storage, pending, random() < 0.5);
    storage = await open_sim(io, {}, small_segments);
    const values = (await read_all(storage.require(PARTITION))).map((r) => r.value);
    for (const value of values) assert.ok(issued.has(value), `record ${value} was never appended`);
    const present = new Set(values);
    for (const value of acked) assert.ok(present.has(value), `cycle ${cycle}: acknowledged ${value} is missing`);
    // Acknowledged records keep their relative order.
    const positions = acked.map((value) => values.indexOf(value));
    assert.deepEqual(
      positions,
      [...positions].sort((a, b) => a - b),
    );
    acked.length = 0;
    acked.push(...values);
  }
  await storage.close();
});
