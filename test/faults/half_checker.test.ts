// The check-back workload's properties (faults/checker/half_properties.ts) on hand-made histories:
// a clean one passes, and each planted fault fails it with the property it breaks — a committed
// half message missing or visible twice, a rolled-back one visible or unresolved, one answered
// 'unknown' missing from the unresolved topic, one seen before its commit, one acknowledged and
// lost, and what no one sent.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { check_history } from '../../faults/checker/check.ts';
import type {
  HalfCheckOp,
  HalfDecision,
  HalfEndOp,
  HalfReadOp,
  HalfSendOp,
  HistoryOp,
  Outcome,
} from '../../faults/checker/history.ts';

const send = (value: string, decision: HalfDecision, outcome: Outcome = 'ok'): HalfSendOp => ({
  kind: 'half_send',
  process: 'w0',
  value,
  decision,
  outcome,
  invoked_ms: 100,
  completed_ms: 110,
});

const end = (value: string, commit: boolean, outcome: Outcome = 'ok', invoked_ms = 120): HalfEndOp => ({
  kind: 'half_end',
  value,
  commit,
  outcome,
  invoked_ms,
  completed_ms: invoked_ms + 10,
});

const answer = (value: string, check: number, answer: HalfCheckOp['answer'], at_ms = 2200): HalfCheckOp => ({
  kind: 'half_check',
  value,
  transactional_id: `__sluice_half/g/${value}`,
  check,
  checks_max: 3,
  answer,
  at_ms,
});

const read = (reader: HalfReadOp['reader'], offset: number, value: string, at_ms = 3000): HalfReadOp => ({
  kind: 'half_read',
  reader,
  partition: 0,
  offset,
  value,
  at_ms,
});

/**
 * One half message of each kind, each ending as decided: c committed by its producer, r rolled
 * back, oc and or left open and settled by the checkers' answers, ou answered 'unknown' three
 * times and copied to the unresolved topic; x's sendHalf ended unknown and left no trace.
 */
function clean(): HistoryOp[] {
  return [
    send('c', 'commit'),
    end('c', true),
    send('r', 'rollback'),
    end('r', false),
    send('oc', 'open_commit'),
    answer('oc', 1, 'commit'),
    send('or', 'open_rollback'),
    answer('or', 1, 'rollback'),
    send('ou', 'open_unknown'),
    answer('ou', 1, 'unknown'),
    answer('ou', 2, 'unknown', 4200),
    answer('ou', 3, 'unknown', 6200),
    send('x', 'commit', 'unknown'),
    read('live', 0, 'c', 500),
    read('live', 1, 'oc', 2500),
    read('final', 0, 'c'),
    read('final', 1, 'oc'),
    read('unresolved', 0, 'ou'),
  ];
}

/** The properties a history breaks. */
const broken = (ops: HistoryOp[]) => [...new Set(check_history(ops).failures.map((f) => f.property))];
const broken_with_details = (ops: HistoryOp[]) => check_history(ops).failures;
const without = (ops: HistoryOp[], drop: (op: HistoryOp) => boolean) => ops.filter((op) => !drop(op));
const is_read = (reader: HalfReadOp['reader'], value: string) => (op: HistoryOp) =>
  op.kind === 'half_read' && op.reader === reader && op.value === value;

test('half messages: a clean history passes, and its counts say what each became', () => {
  const result = check_history(clean());
  assert.deepEqual(result.failures, []);
  assert.equal(result.counts.half_send_ok, 5);
  assert.equal(result.counts.half_send_unknown, 1);
  assert.equal(result.counts.half_visible, 2);
  assert.equal(result.counts.half_unresolved, 1);
  assert.equal(result.counts.half_rolled_back, 2);
  // A copy made twice (the coordinator gave up again after a failover) is counted, not failed.
  const twice = check_history([...clean(), read('unresolved', 7, 'ou')]);
  assert.deepEqual(twice.failures, []);
  assert.equal(twice.counts.half_unresolved_extra_copies, 1);
});

test('planted faults (1): a committed half message missing, unresolved or visible twice', () => {
  const lost = without(clean(), is_read('final', 'c'));
  assert.deepEqual(broken(without(lost, is_read('live', 'c'))), ['committed half message not visible']);
  const unanswered = without(without(clean(), is_read('final', 'oc')), is_read('live', 'oc'));
  assert.deepEqual(broken(unanswered), ['committed half message not visible']);
  const moved = [...without(without(clean(), is_read('final', 'c')), is_read('live', 'c')), read('unresolved', 3, 'c')];
  assert.deepEqual(broken(moved), ['committed half message unresolved']);
  assert.deepEqual(broken([...clean(), read('final', 5, 'c')]), ['half message visible twice']);
});

test('planted faults (2): a rolled-back half message visible, or unresolved after its rollback took', () => {
  assert.deepEqual(broken([...clean(), read('final', 4, 'r')]), ['rolled-back half message visible']);
  assert.deepEqual(broken([...clean(), read('final', 4, 'or')]), ['rolled-back half message visible']);
  assert.deepEqual(broken([...clean(), read('unresolved', 4, 'r')]), ['rolled-back half message unresolved']);
  // Answered 'rollback' at the first check and never asked again: the rollback took.
  assert.deepEqual(broken([...clean(), read('unresolved', 4, 'or')]), ['answered half message unresolved']);
  // Asked again after each answer up to the last check: the last EndTxn may not have landed before
  // the coordinator gave up.
  const asked_again = [...clean(), answer('or', 2, 'rollback', 4200), read('unresolved', 4, 'or')];
  assert.deepEqual(broken(asked_again), ['answered half message unresolved'], 'the answer at check 2 took');
  assert.deepEqual(broken([...asked_again, answer('or', 3, 'rollback', 6200)]), []);
  // A rollback() that ended unknown may not have taken either.
  const unknown_end = clean().map((op) =>
    op.kind === 'half_end' && op.value === 'r' ? { ...op, outcome: 'unknown' } : op,
  );
  assert.deepEqual(broken([...(unknown_end as HistoryOp[]), read('unresolved', 4, 'r')]), []);
});

test("planted faults (3): a half message answered 'unknown' every time not unresolved, or visible", () => {
  assert.deepEqual(broken(without(clean(), is_read('unresolved', 'ou'))), ['unanswered half message not unresolved']);
  assert.deepEqual(broken([...clean(), read('final', 4, 'ou')]), [
    'unanswered half message visible',
    'half message both visible and unresolved',
  ]);
});

test('planted faults (4): a half message seen by a read_committed reader before its commit, or never committed', () => {
  // The live reader saw c at 110 ms, before commit() was called at 120 ms.
  const early = clean().map((op) => (is_read('live', 'c')(op) ? { ...op, at_ms: 110 } : op));
  assert.deepEqual(broken(early), ['half message visible before its commit']);
  // oc seen before the check that answered 'commit'.
  const before_answer = clean().map((op) => (is_read('live', 'oc')(op) ? { ...op, at_ms: 2100 } : op));
  assert.deepEqual(broken(before_answer), ['half message visible before its commit']);
  // r seen while open, then rolled back: the final reader finds nothing at its offset.
  assert.deepEqual(broken([...clean(), read('live', 2, 'r')]), [
    'half message visible before its commit',
    'read_committed reader saw an uncommitted half message',
  ]);
});

test('planted faults (5): an acknowledged half message lost, both visible and unresolved, or never sent', () => {
  const unknown_commit = clean()
    .map((op) => (op.kind === 'half_end' && op.value === 'c' ? { ...op, outcome: 'unknown' as const } : op))
    .filter((op) => !is_read('final', 'c')(op) && !is_read('live', 'c')(op));
  assert.deepEqual(broken(unknown_commit), ['acknowledged half message lost']);
  // ...but it may end unresolved: its commit() may not have taken, and no check was answered.
  assert.deepEqual(broken([...unknown_commit, read('unresolved', 4, 'c')]), []);
  assert.deepEqual(broken([...clean(), read('unresolved', 4, 'oc')]), ['half message both visible and unresolved']);
  assert.deepEqual(broken([...clean(), read('final', 4, 'zz'), read('live', 4, 'zz')]), ['half message never sent']);
  assert.deepEqual(broken([...clean(), read('unresolved', 4, 'zz')]), ['half message never sent']);
  // A late answer to a check of an earlier half message of the same transactional id (its EndTxn
  // names the id, not the half message) rolled back the next one: named in the failure.
  const carried = (value: string, decision: HalfDecision) => ({ ...send(value, decision), transactional_id: 'T' });
  const stale = { ...answer('e1', 1, 'rollback', 3000), transactional_id: 'T' };
  const overtaken = broken_with_details([
    ...clean(),
    carried('e1', 'rollback'),
    end('e1', false),
    carried('e2', 'open_commit'),
    stale,
  ]);
  assert.deepEqual(
    overtaken.map((f) => f.property),
    ['acknowledged half message lost'],
  );
  assert.match(
    overtaken[0]!.detail,
    /answers to checks of other half messages of its transactional id came meanwhile: e1 'rollback' at 3000 ms/,
  );
  // An unknown sendHalf may still end anywhere its decision allows.
  assert.deepEqual(broken([...clean(), read('final', 4, 'x'), answer('x', 1, 'commit', 2100)]), []);
});
