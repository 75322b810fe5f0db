import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TailCache } from './tail_cache.ts';

test('the tail cache stays within its byte budget and every window stays a contiguous suffix', () => {
  const cache = new TailCache(1000);
  const windows = [cache.window(), cache.window(), cache.window()];
  const next = [0, 0, 0];
  for (let i = 0; i < 300; i++) {
    const w = i % 3;
    const count = 1 + (i % 4);
    windows[w]!.add(Buffer.alloc(30 + (i % 50)), next[w]!, next[w]! + count - 1);
    next[w]! += count;
    assert.ok(cache.bytes <= 1000);
  }
  for (const [w, window] of windows.entries()) {
    const first = window.first_offset;
    assert.ok(first > 0, 'old batches were evicted');
    const batches = window.read(first, 1 << 20, next[w]!)!;
    let bytes = 0;
    for (const batch of batches) bytes += batch.length;
    assert.ok(bytes > 0);
    assert.equal(window.read(first - 1, 100, next[w]!), null, 'below the window is a miss');
  }
  windows[0]!.clear();
  assert.ok(cache.bytes < 1000);
});

test('a read stops before the offset limit and returns at least one batch', () => {
  const cache = new TailCache(10_000);
  const window = cache.window();
  window.add(Buffer.alloc(100), 0, 4);
  window.add(Buffer.alloc(100), 5, 9);
  window.add(Buffer.alloc(100), 10, 14);
  assert.equal(window.read(7, 1, 100)!.length, 1, 'one batch even over bytes_max');
  assert.equal(window.read(0, 1 << 20, 10)!.length, 2, 'nothing at or past the limit');
  assert.equal(window.read(3, 150, 100)!.length, 1);
});
