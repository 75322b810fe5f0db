// The ordered runner on its own (no broker): random keys and random handler delays; per-key order,
// the concurrency bound, and a commit watermark that never passes an unfinished offset.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OrderedRunner, type OrderedMessage } from './ordered_runner.ts';

/** A small seeded PRNG (mulberry32), so a failure can be replayed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Msg extends OrderedMessage {
  delay: number;
}

/** Random messages over `partitions` partitions and `keys` keys (about 1 in 10 with a null key). */
function messages(random: () => number, count: number, partitions: number, keys: number): Msg[] {
  const next = new Map<string, number>();
  const out: Msg[] = [];
  for (let i = 0; i < count; i++) {
    const partition = `p${Math.floor(random() * partitions)}`;
    // Gaps, as compaction or control batches leave.
    const offset = (next.get(partition) ?? 0) + (random() < 0.1 ? 2 : 1);
    next.set(partition, offset);
    out.push({
      partition,
      offset,
      key: random() < 0.1 ? null : `k${Math.floor(random() * keys)}`,
      delay: Math.floor(random() * 4),
    });
  }
  return out;
}

/** The watermark never passes an unfinished offset, and every offset below it is finished. */
function check_watermarks(
  seed: number,
  runner: OrderedRunner<Msg>,
  submitted: Map<string, number[]>,
  finished: Map<string, Set<number>>,
): void {
  for (const [partition, offsets] of submitted) {
    const watermark = runner.watermark(partition);
    const done = finished.get(partition) ?? new Set();
    const lowest_unfinished = offsets.find((o) => !done.has(o)) ?? offsets.at(-1)! + 1;
    assert.ok(
      watermark !== null && watermark <= lowest_unfinished,
      `seed ${seed}: ${partition} watermark ${watermark} passes unfinished ${lowest_unfinished}`,
    );
    for (const offset of offsets)
      if (offset < watermark!)
        assert.ok(done.has(offset), `seed ${seed}: ${partition}/${offset} below the watermark but not finished`);
  }
}

/** Once idle: no check failed in a handler, every message was handled once, every watermark is at the end. */
function check_all_done(
  seed: number,
  runner: OrderedRunner<Msg>,
  submitted: Map<string, number[]>,
  handled: Map<string, number>,
  count: number,
): void {
  for (const partition of submitted.keys())
    assert.equal(runner.failure(partition)?.error, undefined, `seed ${seed}: a check failed in a handler`);
  assert.equal(runner.in_flight, 0);
  assert.equal(handled.size, count, `seed ${seed}: every message handled`);
  assert.ok(
    [...handled.values()].every((n) => n === 1),
    `seed ${seed}: each once`,
  );
  for (const [partition, offsets] of submitted) {
    assert.equal(runner.watermark(partition), offsets.at(-1)! + 1, 'all done: the watermark is past the last offset');
    assert.deepEqual(runner.done_above_watermark(partition), []);
  }
}

/** Runs `list` through a runner, checking the invariants at every start and finish. */
async function check_run(
  seed: number,
  orderBy: 'key' | 'partition',
  concurrency: number,
  list: Msg[],
): Promise<{ max_running: number }> {
  const queue_of = (m: Msg) =>
    orderBy === 'partition' || m.key === null ? `${m.partition}/null` : `${m.partition}/${m.key}`;
  const running_queues = new Set<string>();
  const last_started = new Map<string, number>();
  const finished = new Map<string, Set<number>>();
  const submitted = new Map<string, number[]>();
  const handled = new Map<string, number>();
  let running = 0;
  let max_running = 0;
  let runner!: OrderedRunner<Msg>;
  const check_watermarks_now = () => check_watermarks(seed, runner, submitted, finished);
  runner = new OrderedRunner<Msg>({
    concurrency,
    orderBy,
    handle: async (m) => {
      const q = queue_of(m);
      assert.ok(!running_queues.has(q), `seed ${seed}: two messages of ${q} at once`);
      assert.ok(
        (last_started.get(q) ?? -1) < m.offset,
        `seed ${seed}: ${q} out of order: ${m.offset} after ${last_started.get(q)}`,
      );
      running_queues.add(q);
      last_started.set(q, m.offset);
      running++;
      max_running = Math.max(max_running, running);
      assert.ok(running <= concurrency, `seed ${seed}: ${running} in flight, bound ${concurrency}`);
      assert.ok(
        runner.in_flight <= concurrency && running <= runner.in_flight,
        `seed ${seed}: the runner counts ${runner.in_flight} in flight`,
      );
      check_watermarks_now();
      if (m.delay > 0) await sleep(m.delay);
      else await Promise.resolve();
      running--;
      running_queues.delete(q);
      const id = `${m.partition}/${m.offset}`;
      handled.set(id, (handled.get(id) ?? 0) + 1);
      if (!finished.has(m.partition)) finished.set(m.partition, new Set());
      finished.get(m.partition)!.add(m.offset);
    },
    on_done: (m, watermark) => {
      assert.equal(watermark, runner.watermark(m.partition));
      check_watermarks_now();
    },
  });
  // Submit in a few bursts, as fetch rounds would.
  for (let i = 0; i < list.length; i += 300) {
    for (const m of list.slice(i, i + 300)) {
      if (!submitted.has(m.partition)) submitted.set(m.partition, []);
      submitted.get(m.partition)!.push(m.offset);
      runner.submit(m);
    }
    await sleep(2);
  }
  await runner.idle();
  check_all_done(seed, runner, submitted, handled, list.length);
  return { max_running };
}

test('orderBy key: random keys and delays keep per-key order, the concurrency bound and a safe watermark', async () => {
  for (const seed of [1, 2, 3, 42, 1234]) {
    const random = prng(seed);
    const concurrency = 1 + Math.floor(random() * 16);
    const list = messages(random, 1500, 3, 25);
    const { max_running } = await check_run(seed, 'key', concurrency, list);
    assert.equal(max_running, concurrency, `seed ${seed}: the bound is reached (${max_running} of ${concurrency})`);
  }
});

test('orderBy partition: one message per partition at a time, in offset order', async () => {
  const random = prng(7);
  const list = messages(random, 600, 4, 10);
  const { max_running } = await check_run(7, 'partition', 8, list);
  assert.equal(max_running, 4, 'at most one per partition, all four partitions at once');
});

test('concurrency 1: one partition in offset order; several partitions take turns', async () => {
  const order: string[] = [];
  const runner = new OrderedRunner<Msg>({
    concurrency: 1,
    orderBy: 'key',
    handle: async (m) => void order.push(`${m.partition}/${m.offset}`),
  });
  const list = messages(prng(9), 100, 1, 5);
  for (const m of list) runner.submit(m);
  await runner.idle();
  assert.deepEqual(
    order,
    list.map((m) => `${m.partition}/${m.offset}`),
  );

  // p0's messages are all submitted before p1's, yet p1 does not wait for p0 to drain.
  const turns: string[] = [];
  const fair = new OrderedRunner<Msg>({
    concurrency: 1,
    orderBy: 'key',
    handle: async (m) => void turns.push(m.partition),
  });
  for (let i = 0; i < 5; i++) fair.submit({ partition: 'p0', key: `k${i}`, offset: i, delay: 0 });
  for (let i = 0; i < 5; i++) fair.submit({ partition: 'p1', key: `k${i}`, offset: i, delay: 0 });
  await fair.idle();
  assert.deepEqual(turns, ['p0', 'p1', 'p0', 'p1', 'p0', 'p1', 'p0', 'p1', 'p0', 'p1']);
});

test('a failing handler halts its partition at the failed offset; other partitions go on', async () => {
  const started: string[] = [];
  let open_gate!: () => void;
  const gate = new Promise<void>((resolve) => (open_gate = resolve));
  const runner = new OrderedRunner<Msg>({
    concurrency: 4,
    orderBy: 'key',
    handle: async (m) => {
      started.push(`${m.partition}/${m.key}/${m.offset}`);
      if (m.partition === 'p0' && m.offset === 2) throw new Error('boom');
      if (m.partition === 'p0' && m.offset === 1) await gate; // still running when offset 2 fails
      await sleep(1);
    },
  });
  const list: Msg[] = [
    { partition: 'p0', key: 'a', offset: 0, delay: 0 },
    { partition: 'p0', key: 'b', offset: 1, delay: 0 },
    { partition: 'p0', key: 'c', offset: 2, delay: 0 },
    { partition: 'p0', key: 'a', offset: 3, delay: 0 },
    { partition: 'p0', key: 'c', offset: 4, delay: 0 },
    { partition: 'p0', key: 'd', offset: 5, delay: 0 },
    ...Array.from({ length: 20 }, (_, i): Msg => ({ partition: 'p1', key: `k${i % 3}`, offset: i, delay: 0 })),
  ];
  for (const m of list) runner.submit(m);
  await sleep(20);
  assert.ok(runner.halted('p0'));
  assert.equal(runner.failure('p0')?.offset, 2);
  assert.match(String((runner.failure('p0')?.error as Error).message), /boom/);
  assert.equal(runner.watermark('p0'), 1, 'offset 1 still running');
  open_gate();
  await runner.idle();
  assert.equal(runner.watermark('p0'), 2, 'stops at the failed offset');
  assert.ok(!started.includes('p0/c/4'), 'nothing after the failure for its key');
  assert.ok(
    runner.done_above_watermark('p0').every((o) => o === 3 || o === 5),
    'only other keys ran past it',
  );
  assert.equal(runner.watermark('p1'), 20, 'the other partition finished');
  assert.equal(runner.failure('p1'), null);
  // Submitting to a halted partition runs nothing and keeps the watermark.
  runner.submit({ partition: 'p0', key: 'z', offset: 9, delay: 0 });
  await runner.idle();
  assert.equal(runner.watermark('p0'), 2);
});

test('may_start false halts the partition (queued messages dropped, the running ones finish)', async () => {
  let allow = true;
  const done: number[] = [];
  const runner = new OrderedRunner<Msg>({
    concurrency: 2,
    orderBy: 'key',
    may_start: () => allow,
    handle: async (m) => {
      await sleep(5);
      done.push(m.offset);
    },
  });
  for (let i = 0; i < 10; i++) runner.submit({ partition: 'p', key: `k${i % 2}`, offset: i, delay: 0 });
  await sleep(1);
  allow = false;
  await runner.idle();
  assert.deepEqual(
    done.sort((a, b) => a - b),
    [0, 1],
  );
  assert.ok(runner.halted('p'));
  assert.equal(runner.watermark('p'), 2);
  assert.throws(
    () => runner.submit({ partition: 'p', key: 'x', offset: 5, delay: 0 }),
    RangeError,
    'offsets must increase',
  );
});
