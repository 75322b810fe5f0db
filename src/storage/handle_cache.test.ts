import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HandleCache } from './handle_cache.ts';
import { SimFileIO } from './sim_file_io.ts';

test('the handle cache never holds more descriptors than its limit, even under contention', async () => {
  const io = new SimFileIO();
  await io.mkdir('/d');
  const cache = new HandleCache(io, 4);
  let peak = 0;
  const work = Array.from({ length: 200 }, (_, i) =>
    cache.with_handle(
      `/d/f${i % 37}`,
      async (fd) => {
        peak = Math.max(peak, io.open_fds);
        await io.writev(fd, [Buffer.from(`x${i}`)], 0);
      },
      true,
    ),
  );
  await Promise.all(work);
  assert.ok(peak <= 4, `peak ${peak}`);
  assert.ok(io.open_fds_max <= 4, `sim saw ${io.open_fds_max}`);
  await cache.close_all();
  assert.equal(io.open_fds, 0);
  assert.equal(cache.open_count, 0);
});

test('forget closes a descriptor only after its last user releases it', async () => {
  const io = new SimFileIO();
  await io.mkdir('/d');
  const cache = new HandleCache(io, 2);
  const lease = await cache.acquire('/d/a', true);
  const forgotten = cache.forget('/d/a');
  await forgotten;
  assert.equal(io.open_fds, 1, 'still in use');
  await io.writev(lease.fd, [Buffer.from('still usable')], 0);
  lease.release();
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(io.open_fds, 0);
  assert.throws(() => lease.release(), /released twice/);
});

test('opening a missing file without create fails and frees its slot', async () => {
  const io = new SimFileIO();
  await io.mkdir('/d');
  const cache = new HandleCache(io, 1);
  await assert.rejects(
    cache.with_handle('/d/missing', async () => undefined),
    /ENOENT/,
  );
  assert.equal(cache.open_count, 0);
  await cache.with_handle('/d/new', async () => undefined, true);
  await cache.close_all();
});
