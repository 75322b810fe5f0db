// The fault suite's checker on hand-made histories: a clean one passes, and each planted fault
// fails it with the property it breaks — a lost write, a duplicate, an offset with two values, a
// reordering, a committed offset going back, a queue message lost or accepted too often, a
// delayed message early or lost, a confirmed AMQP message lost or acknowledged too often, replicas
// that differ below the high watermark, a transaction's output twice, lost or made up, and data a
// read_committed reader saw that was never committed, and a compacted topic that lost a key's
// latest write, kept records out of order or read back one never written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { check_history, describe_failures } from '../../faults/checker/check.ts';
import {
  DEFAULT_BOUNDS,
  type CompactReadOp,
  type CompactWriteOp,
  type HistoryOp,
  type ReadOp,
  type WriteOp,
} from '../../faults/checker/history.ts';

function write(value: string, offset: number, extra: Partial<WriteOp> = {}): WriteOp {
  return {
    kind: 'write',
    process: 'p1',
    topic: 't',
    partition: 0,
    key: 'k',
    value,
    outcome: 'ok',
    offset,
    invoked_ms: offset * 10,
    completed_ms: offset * 10 + 5,
    ...extra,
  };
}

function read(value: string, offset: number, reader = 'c1', key: string | null = 'k'): ReadOp {
  return { kind: 'read', reader, topic: 't', partition: 0, offset, key, value, at_ms: 1000 + offset };
}

/** Three writes, read back by a consumer and found on two replicas. */
function clean(): HistoryOp[] {
  const values = ['a', 'b', 'c'];
  return [
    ...values.map((v, i) => write(v, i)),
    ...values.map((v, i) => read(v, i)),
    ...values.flatMap((v, i) => [read(v, i, 'replica-1'), read(v, i, 'replica-2')]),
    { kind: 'replica_end', node_id: 1, topic: 't', partition: 0, high_watermark: 3 },
    { kind: 'replica_end', node_id: 2, topic: 't', partition: 0, high_watermark: 3 },
    { kind: 'commit', group: 'g', topic: 't', partition: 0, offset: 2, at_ms: 500 },
    { kind: 'commit', group: 'g', topic: 't', partition: 0, offset: 3, at_ms: 600 },
  ];
}

/** The properties a history breaks. */
const broken = (ops: HistoryOp[]) => [...new Set(check_history(ops).failures.map((f) => f.property))];

test('a clean history passes; an unknown or failed write need not be read back', () => {
  const ops = [...clean(), write('lost-but-unknown', 9, { outcome: 'unknown', offset: undefined })];
  ops.push(write('refused', 10, { outcome: 'fail', offset: undefined }));
  const result = check_history(ops);
  assert.deepEqual(result.failures, []);
  assert.equal(result.valid, true);
  assert.equal(result.counts.write_ok, 3);
  assert.match(describe_failures(result, 7, 'npm run faults --'), /^checker: valid/);
});

test('planted faults: a lost write, a duplicate, an offset with two values, a reordering', () => {
  const lost = clean().filter((op) => !(op.kind === 'read' && op.value === 'b'));
  assert.ok(broken(lost).includes('acknowledged write lost'));

  const duplicate = [...clean(), read('a', 3), read('a', 3, 'replica-1'), read('a', 3, 'replica-2')];
  assert.deepEqual(broken(duplicate), ['record stored twice']);
  assert.deepEqual(check_history(duplicate, { ...DEFAULT_BOUNDS, idempotent_writes: false }).failures, []);

  // A write that ended unknown may come back as a new one (a client resend): counted, not failed.
  const resent = [...clean(), write('d', 3, { outcome: 'unknown', offset: undefined }), read('d', 3), read('d', 4)];
  const resent_result = check_history(resent);
  assert.deepEqual(resent_result.failures, []);
  assert.equal(resent_result.counts.stored_twice_after_unknown_write, 1);

  const two_values = [...clean(), read('x', 1, 'c2')];
  assert.ok(broken(two_values).includes('one offset, two records'));

  // b was written after a was acknowledged, yet stored before it.
  const reordered: HistoryOp[] = [
    write('a', 1),
    write('b', 0, { invoked_ms: 20, completed_ms: 25 }),
    read('b', 0),
    read('a', 1),
  ];
  assert.deepEqual(broken(reordered), ['per-key order']);
  // Concurrent writes (the second made before the first was acknowledged) may land either way.
  const concurrent: HistoryOp[] = [
    write('a', 1),
    write('b', 0, { invoked_ms: 12, completed_ms: 25 }),
    read('b', 0),
    read('a', 1),
  ];
  assert.deepEqual(broken(concurrent), []);
});

/** A replica's read of `value` at `offset`, stored in the batch at `base` by producer 7 in `epoch`. */
function stored(value: string, offset: number, base: number, epoch: number): ReadOp {
  const batch = { base_offset: base, producer_id: 7, producer_epoch: epoch };
  return { ...read(value, offset, 'replica-1'), batch };
}

test('a resend under a new epoch after a message timeout is counted; any other second copy fails', () => {
  // librdkafka: e timed out in flight (unknown) with f in its request; the broker had stored both,
  // and f went again under epoch 1.
  const history = (epoch: number, e_outcome: WriteOp['outcome']): HistoryOp[] => [
    ...clean(),
    write('e', 3, { outcome: e_outcome, offset: e_outcome === 'ok' ? 3 : undefined }),
    write('f', 5),
    stored('e', 3, 3, 0),
    stored('f', 4, 3, 0),
    stored('f', 5, 5, epoch),
  ];
  const resend = check_history(history(1, 'unknown'));
  assert.deepEqual(resend.failures, []);
  assert.equal(resend.counts.stored_twice_resent_under_new_epoch, 1);
  assert.deepEqual(
    broken(history(0, 'unknown')),
    ['record stored twice'],
    'the same epoch: the broker stored it twice',
  );
  assert.deepEqual(broken(history(1, 'ok')), ['record stored twice'], 'nothing in its request timed out');
});

test('planted faults: replicas differ, a committed offset goes back', () => {
  const diverged = clean().filter((op) => !(op.kind === 'read' && op.reader === 'replica-2' && op.offset === 2));
  assert.deepEqual(broken(diverged), ['replicas differ below the high watermark']);

  const backwards: HistoryOp[] = [
    ...clean(),
    { kind: 'commit', group: 'g', topic: 't', partition: 0, offset: 1, at_ms: 700 },
  ];
  assert.deepEqual(broken(backwards), ['committed offset went back']);
});

test('planted faults: a queue message lost or accepted too often; a delayed message early or lost', () => {
  const accept = (offset: number, value: string, at_ms = 900 + offset) =>
    ({ kind: 'accept', group: 'q', topic: 't', partition: 0, offset, value, at_ms }) as const;
  const all_accepted = [...clean(), accept(0, 'a'), accept(1, 'b'), accept(2, 'c'), accept(2, 'c', 950)];
  assert.deepEqual(broken(all_accepted), []);
  assert.deepEqual(broken([...clean(), accept(0, 'a'), accept(2, 'c')]), ['queue message lost']);
  const six_times = [...all_accepted, ...[960, 961, 962, 963, 964].map((at) => accept(1, 'b', at))];
  assert.deepEqual(broken(six_times), ['queue message accepted too often'], 'the delivery limit is 5');

  const delayed = (value: string, deliver_at_ms: number) =>
    ({ kind: 'delayed_write', topic: 'd', value, invoked_ms: 500, deliver_at_ms, outcome: 'ok' }) as const;
  const delivered = (value: string, at_ms: number) => ({ kind: 'delayed_read', topic: 'd', value, at_ms }) as const;
  assert.deepEqual(broken([delayed('x', 1000), delivered('x', 990)]), []);
  assert.deepEqual(broken([delayed('x', 1000), delivered('x', 900)]), ['delayed message early']);
  assert.deepEqual(broken([delayed('x', 1000)]), ['delayed message lost']);
});

test('planted faults: a confirmed AMQP message lost, acknowledged too often, or never published', () => {
  const publish = (value: string, outcome: 'ok' | 'fail' | 'unknown' = 'ok') =>
    ({ kind: 'amqp_publish', process: 'a0', queue: 'q', value, outcome, invoked_ms: 1, completed_ms: 2 }) as const;
  const ack = (value: string, at_ms = 10) =>
    ({ kind: 'amqp_ack', consumer: 'c', queue: 'q', value, redelivered: false, at_ms }) as const;
  const published = [publish('m1'), publish('m2'), publish('m3', 'unknown'), publish('m4', 'fail')];
  assert.deepEqual(broken([...published, ack('m1'), ack('m2'), ack('m2', 20)]), [], 'unconfirmed ones may be absent');
  assert.deepEqual(broken([...published, ack('m1')]), ['AMQP confirmed message lost']);
  const six = [1, 2, 3, 4, 5, 6].map((at) => ack('m2', at));
  assert.deepEqual(broken([...published, ack('m1'), ...six]), ['AMQP message acknowledged too often']);
  assert.deepEqual(broken([...published, ack('m1'), ack('m2'), ack('zz')]), ['AMQP message never published delivered']);
});

test('planted faults: a transaction output twice, lost, made up, or uncommitted data seen by a reader', () => {
  const input = (value: string, outcome: 'ok' | 'unknown' = 'ok') =>
    ({ kind: 'txn_input', value, outcome, invoked_ms: 1 }) as const;
  const output = (reader: 'live' | 'final', offset: number, value: string) =>
    ({ kind: 'txn_output', reader, partition: 0, offset, value, at_ms: 5 }) as const;
  const inputs = [input('i1'), input('i2'), input('i3', 'unknown')];
  const committed = [output('final', 0, 'i1'), output('final', 2, 'i2')];
  assert.deepEqual(broken([...inputs, ...committed, output('live', 0, 'i1')]), [], 'an unknown input may be absent');
  assert.deepEqual(broken([...inputs, ...committed, output('final', 4, 'i1')]), ['transaction output twice']);
  assert.deepEqual(broken([...inputs, output('final', 0, 'i1')]), ['transaction input lost']);
  assert.deepEqual(broken([...inputs, ...committed, output('final', 3, 'zz')]), ['transaction output without input']);
  // Offset 1 held i2 when the live reader saw it, then was aborted; i2 was committed again at 2.
  assert.deepEqual(broken([...inputs, ...committed, output('live', 1, 'i2')]), [
    'read_committed reader saw uncommitted data',
  ]);
});

test('planted faults: a delayed message early by more than a clock set wrong while it was pending', () => {
  const delayed = {
    kind: 'delayed_write',
    topic: 'd',
    value: 'x',
    invoked_ms: 500,
    deliver_at_ms: 5000,
    outcome: 'ok',
  } as const;
  const delivered = { kind: 'delayed_read', topic: 'd', value: 'x', at_ms: 3000 } as const;
  const clock = (from_ms: number, to_ms: number, error_ms: number) =>
    ({ kind: 'clock_fault', node_id: 1, from_ms, to_ms, error_ms }) as const;
  const ops = [delayed, delivered] as const;
  assert.deepEqual(broken([...ops, clock(1000, 2000, 2500)]), [], 'a clock 2.5 s fast while it was pending');
  assert.deepEqual(
    broken([...ops, clock(1000, 2000, 1000)]),
    ['delayed message early'],
    'early by more than the error',
  );
  assert.deepEqual(broken([...ops, clock(3500, 4000, 9000)]), ['delayed message early'], 'a fault after it arrived');
  assert.deepEqual(broken([...ops, clock(0, 400, 9000)]), ['delayed message early'], 'a fault before it was sent');
});

test('a failed check names the operations involved and the seed that reproduces the run', () => {
  const lost = clean().filter((op) => !(op.kind === 'read' && op.value === 'c'));
  const text = describe_failures(check_history(lost), 42, 'npm run faults --');
  assert.match(text, /rerun with: npm run faults -- --seed 42/);
  assert.match(text, /acknowledged write lost: c acknowledged at t\/0@2/);
  assert.match(text, /"value":"c"/);
});

test('the compacted topic: a subsequence reaching the latest acknowledged write passes; else it fails', () => {
  const put = (key: string, id: string, outcome: 'ok' | 'unknown' = 'ok'): CompactWriteOp => ({
    kind: 'compact_write',
    key,
    id,
    tombstone: false,
    outcome,
    invoked_ms: 0,
  });
  const got = (key: string, id: string, offset: number): CompactReadOp => ({
    kind: 'compact_read',
    partition: 0,
    offset,
    key,
    id,
  });
  const writes = [put('a', 'c-0'), put('b', 'c-1'), put('a', 'c-2'), put('a', 'c-3', 'unknown'), put('b', 'c-4')];
  // Compacted: only the latest of each key (a's unknown write never stored); uncompacted also passes.
  assert.equal(check_history([...writes, got('a', 'c-2', 2), got('b', 'c-4', 4)]).valid, true);
  assert.equal(check_history([...writes, ...writes.map((w, i) => got(w.key, w.id, i))]).valid, true);
  const properties = (reads: CompactReadOp[]) => check_history([...writes, ...reads]).failures.map((f) => f.property);
  assert.deepEqual(properties([got('a', 'c-0', 0), got('b', 'c-4', 4)]), ['compaction lost the latest write of a key']);
  assert.deepEqual(properties([got('a', 'c-0', 0), got('a', 'c-0', 1), got('a', 'c-2', 2), got('b', 'c-4', 4)]), [
    'compacted records out of order or twice',
  ]);
  assert.deepEqual(properties([got('a', 'c-2', 2), got('b', 'c-4', 4), got('b', 'c-9', 5)]), [
    'compacted record never written',
  ]);
});
