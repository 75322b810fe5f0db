import { test } from 'node:test';
import assert from 'node:assert/strict';
import v8 from 'node:v8';
import { growing_percent_for, start_heap_growth } from './heap_growth.ts';

const MB = 1024 * 1024;

test('the growing percent puts the next old-generation limit at the floor while the heap is small', () => {
  assert.equal(growing_percent_for(20 * MB, 256 * MB), 1180);
  assert.equal(growing_percent_for(100 * MB, 256 * MB), 156);
  assert.equal(growing_percent_for(128 * MB, 256 * MB), 0, 'past half the floor V8 chooses');
  assert.equal(growing_percent_for(1024 * MB, 256 * MB), 0);
  assert.equal(growing_percent_for(0, 256 * MB), 0);
});

test('heap growth sets the percent from the live heap and hands it back to V8 when stopped', () => {
  const used = v8.getHeapStatistics().used_heap_size;
  const growth = start_heap_growth(used * 10, 60_000);
  try {
    assert.ok(growth.percent >= 800 && growth.percent <= 1100, `percent ${growth.percent} for a floor 10x the heap`);
  } finally {
    growth.stop();
  }
  assert.equal(growth.percent, 0);
  const small = start_heap_growth(used, 60_000);
  assert.equal(small.percent, 0, 'a heap past half the floor is left to V8');
  small.stop();
});
