// 10,000 partitions on the real file system with a small open-file limit: every partition is
// created, written, read back and reopened while the process never holds more descriptors than the
// handle cache allows (plus a fixed few of its own).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { Storage, storage_config_default } from '../src/storage/index.ts';
import { make_batch, temp_dir, values_of } from './support/storage.ts';

const PARTITIONS = 10_000;
const HANDLES_MAX = 64;
const PARALLEL = 200;

function open_descriptors(): number {
  return fs.readdirSync('/proc/self/fd').length;
}

async function in_waves(count: number, work: (i: number) => Promise<void>, probe: () => void): Promise<void> {
  for (let start = 0; start < count; start += PARALLEL) {
    const wave = [];
    for (let i = start; i < Math.min(count, start + PARALLEL); i++) wave.push(work(i));
    await Promise.all(wave);
    probe();
  }
}

test(
  `${PARTITIONS} partitions are created, written and read with at most ${HANDLES_MAX} files open`,
  { timeout: 600_000 },
  async () => {
    const dir = temp_dir('many');
    const baseline = open_descriptors();
    let peak = 0;
    const probe = () => {
      peak = Math.max(peak, open_descriptors() - baseline);
    };
    const config = { ...storage_config_default(dir), handles_max: HANDLES_MAX, tail_cache_bytes_max: 0 };
    const sampler = setInterval(probe, 2);
    try {
      const storage = await Storage.open(config);
      await in_waves(
        PARTITIONS,
        async (i) => {
          const log = await storage.create_partition(`topic${i % 100}-${Math.floor(i / 100)}`);
          await log.append(make_batch(`p${i}`, 2));
          assert.ok(storage.handles.open_count <= HANDLES_MAX);
        },
        probe,
      );
      assert.equal(storage.partition_count, PARTITIONS);
      await storage.checkpoint();
      await in_waves(
        PARTITIONS,
        async (i) => {
          const log = storage.require(`topic${i % 100}-${Math.floor(i / 100)}`);
          assert.deepEqual(values_of((await log.read(0, 1 << 20)).batches), [`p${i}:0`, `p${i}:1`]);
        },
        probe,
      );
      assert.ok(storage.handles.open_count <= HANDLES_MAX);
      const rss_mib = process.memoryUsage().rss / 2 ** 20;
      await storage.close();
      // Reopen (recovery of every partition) and read a sample.
      const reopened = await Storage.open(config);
      assert.equal(reopened.partition_count, PARTITIONS);
      await in_waves(
        PARTITIONS,
        async (i) => {
          if (i % 10 !== 0) return;
          const log = reopened.require(`topic${i % 100}-${Math.floor(i / 100)}`);
          assert.equal(log.high_watermark, 2);
          assert.deepEqual(values_of((await log.read(1, 100)).batches), [`p${i}:0`, `p${i}:1`]);
        },
        probe,
      );
      await reopened.close();
      // Beyond the cache, directories are opened briefly: by flush rounds (fsync of new segments'
      // folders), partition creation and opening, and checkpoint writes; each is bounded.
      const transient_max = config.flush_parallelism_max + config.open_parallelism_max + 4;
      assert.ok(peak <= HANDLES_MAX + transient_max, `peak of ${peak} descriptors above the baseline`);
      console.log(`# peak descriptors above baseline: ${peak}; rss ${rss_mib.toFixed(0)} MiB`);
      assert.ok(rss_mib < 1024, `resident memory ${rss_mib.toFixed(0)} MiB`);
    } finally {
      clearInterval(sampler);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  },
);
