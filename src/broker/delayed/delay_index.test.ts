import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DelayIndex, pack, unpack } from './delay_index.ts';

test('pack and unpack record references', () => {
  assert.deepEqual(unpack(pack(123_456_789, 65_535)), { batch_offset: 123_456_789, index: 65_535 });
  assert.deepEqual(unpack(pack(0, 0)), { batch_offset: 0, index: 0 });
});

test('records come out only after their due time, all of them, at most one fine bucket late', () => {
  const index = new DelayIndex();
  const start = 1_000_000_000;
  const due = new Map<number, number>();
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let i = 0; i < 20_000; i++) {
    // spread over two hours, with clusters in the first 10 s and exact duplicates
    const at = start + (i % 3 === 0 ? Math.floor(random() * 10_000) : Math.floor(random() * 7_200_000));
    due.set(pack(i, 0), at);
    index.add(at, pack(i, 0), start);
  }
  assert.equal(index.size, 20_000);
  let now = start;
  let lateness_max = 0;
  while (index.size > 0) {
    now += 1 + Math.floor(random() * 2_000);
    for (const ref of index.take_due(now, 1_000_000)) {
      const at = due.get(ref)!;
      assert.ok(at <= now, `ref delivered ${at - now} ms early`);
      due.delete(ref);
    }
    // what is left is not due yet (up to the fine bucket granularity)
    assert.ok(index.next_due_ms(now) > now);
    for (const at of due.values()) if (at < now - 10) lateness_max = Math.max(lateness_max, now - at);
  }
  assert.equal(due.size, 0);
  assert.equal(lateness_max, 0, 'nothing left behind past its bucket');
});

test('a record due in the past is due at once; take_due respects its maximum', () => {
  const index = new DelayIndex();
  for (let i = 0; i < 10; i++) index.add(500, pack(i, i), 1_000);
  assert.equal(index.take_due(1_000, 4).length, 4);
  assert.equal(index.take_due(1_000, 100).length, 6);
  assert.equal(index.size, 0);
  assert.equal(index.next_due_ms(1_000), Infinity);
});
