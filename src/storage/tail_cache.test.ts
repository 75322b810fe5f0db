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

test('batches that share a frame are cached as views and the frame is charged once', () => {
  const cache = new TailCache(1 << 20);
  const frame = Buffer.alloc(10_000);
  const first = cache.window();
  const second = cache.window();
  first.add(frame.subarray(0, 4000), 0, 9);
  second.add(frame.subarray(4000, 9000), 0, 9);
  assert.equal(cache.bytes, 10_000, 'one charge for the shared frame');
  assert.equal(first.read(0, 1 << 20, 100)![0]!.buffer, frame.buffer, 'no copy');
  first.clear();
  assert.equal(cache.bytes, 10_000, 'still pinned by the other batch');
  second.clear();
  assert.equal(cache.bytes, 0);
});

test('a small batch in a frame that is large against the budget is copied', () => {
  const cache = new TailCache(40_000);
  const frame = Buffer.alloc(20_000);
  const window = cache.window();
  window.add(frame.subarray(0, 100), 0, 0);
  assert.notEqual(window.read(0, 1 << 20, 100)![0]!.buffer, frame.buffer);
  assert.ok(cache.bytes < 20_000);
});
