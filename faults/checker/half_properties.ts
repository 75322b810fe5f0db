// The check-back workload's properties (transactional messages, protocol/half_messages.ts). Each
// half message's outcome was decided from its value before it was sent, so its fate can be judged
// whether or not the calls about it were acknowledged:
//   1. one committed (commit() acknowledged, or a check answered 'commit') is in the topic exactly once;
//   2. one rolled back (rollback() acknowledged, or answered 'rollback') is never in the topic, and,
//      once the rollback is known to have taken, not in the unresolved topic either;
//   3. one answered 'unknown' every time ends in the unresolved topic, and never in the topic;
//   4. no read_committed reader sees one before its commit was decided, or one never committed;
//   5. none acknowledged is lost: it ends visible, unresolved or rolled back as decided, never two.
// An answer's EndTxn is not seen by the workload: a check after the answer, or an answer to the
// last check (the coordinator may give up before that EndTxn lands), shows it may not have taken,
// and only then may the half message still end unresolved.
import type { Failure, HalfCheckOp, HalfDecision, HalfEndOp, HalfReadOp, HalfSendOp } from './history.ts';

interface Fate {
  send: HalfSendOp;
  ends: HalfEndOp[];
  answers: HalfCheckOp[];
  /** Distinct offsets of the final read of the topic, and of the unresolved topic. */
  visible: HalfReadOp[];
  unresolved: HalfReadOp[];
  live: HalfReadOp[];
  /**
   * Answers to checks of other half messages carried by the same transactional id, given after
   * this one was sent: an answer's EndTxn names the transactional id, not the half message.
   */
  stray: HalfCheckOp[];
}

export interface HalfResult {
  failures: Failure[];
  counts: Record<string, number>;
}

const COMMITS: ReadonlySet<HalfDecision> = new Set(['commit', 'open_commit']);
const ROLLBACKS: ReadonlySet<HalfDecision> = new Set(['rollback', 'open_rollback']);

export function half_messages(
  sends: readonly HalfSendOp[],
  ends: readonly HalfEndOp[],
  checks: readonly HalfCheckOp[],
  reads: readonly HalfReadOp[],
): HalfResult {
  if (sends.length === 0) return { failures: [], counts: {} };
  const fates = new Map<string, Fate>();
  for (const send of sends)
    fates.set(send.value, { send, ends: [], answers: [], visible: [], unresolved: [], live: [], stray: [] });
  for (const end of ends) fates.get(end.value)?.ends.push(end);
  for (const check of checks) fates.get(check.value)?.answers.push(check);
  find_stray_answers(fates, checks);
  const failures = place_reads(fates, reads);
  for (const fate of fates.values()) {
    const own = [
      ...visibility(fate),
      ...committed(fate),
      ...rolled_back(fate),
      ...unanswered(fate),
      ...seen_early(fate),
    ];
    failures.push(...own.map((failure) => with_stray_answers(failure, fate)));
  }
  failures.push(...uncommitted_seen(reads));
  return { failures, counts: half_counts(fates) };
}

function find_stray_answers(fates: Map<string, Fate>, checks: readonly HalfCheckOp[]): void {
  const by_id = new Map<string, HalfCheckOp[]>();
  for (const check of checks) {
    if (check.answer === 'unknown') continue;
    const list = by_id.get(check.transactional_id);
    if (list) list.push(check);
    else by_id.set(check.transactional_id, [check]);
  }
  for (const fate of fates.values()) {
    const { transactional_id, value, invoked_ms } = fate.send;
    if (transactional_id === undefined) continue;
    for (const check of by_id.get(transactional_id) ?? [])
      if (check.value !== value && check.at_ms >= invoked_ms) fate.stray.push(check);
  }
}

/** A failure of a half message that answers meant for others may have settled: said, with them. */
function with_stray_answers(failure: Failure, fate: Fate): Failure {
  if (fate.stray.length === 0) return failure;
  const answers = fate.stray.map((a) => `${a.value} '${a.answer}' at ${a.at_ms} ms`).join(', ');
  const note = `answers to checks of other half messages of its transactional id came meanwhile: ${answers}`;
  return { ...failure, detail: `${failure.detail}; ${note}`, ops: [...failure.ops, ...fate.stray] };
}

/** Each read to its half message's fate (an offset read twice counted once); reads of values never sent fail. */
function place_reads(fates: Map<string, Fate>, reads: readonly HalfReadOp[]): Failure[] {
  const failures: Failure[] = [];
  const placed = new Set<string>();
  for (const read of reads) {
    const key = `${read.reader}:${read.partition}:${read.offset}`;
    if (placed.has(key)) continue;
    placed.add(key);
    const fate = fates.get(read.value);
    if (!fate) {
      const where = read.reader === 'unresolved' ? 'the unresolved topic' : 'the topic';
      failures.push({ property: 'half message never sent', detail: `${read.value} in ${where}`, ops: [read] });
      continue;
    }
    const into = read.reader === 'final' ? fate.visible : read.reader === 'unresolved' ? fate.unresolved : fate.live;
    into.push(read);
  }
  return failures;
}

const acked = (fate: Fate, commit: boolean) => fate.ends.some((e) => e.commit === commit && e.outcome === 'ok');
const answered = (fate: Fate, answer: HalfCheckOp['answer']) => fate.answers.filter((a) => a.answer === answer);
const ops_of = (fate: Fate) => [fate.send, ...fate.ends, ...fate.answers, ...fate.visible, ...fate.unresolved];

/**
 * Whether every answer given may have gone without its EndTxn taking: a later check came, or it
 * answered the last check (the coordinator gives up at the next one).
 */
function answers_may_have_failed(fate: Fate, answers: readonly HalfCheckOp[]): boolean {
  const last_check = Math.max(0, ...fate.answers.map((a) => a.check));
  return answers.every((a) => a.check < last_check || a.check >= a.checks_max);
}

/** Visible at most once, only if decided commit, and never both visible and unresolved. */
function visibility(fate: Fate): Failure[] {
  const { send, visible, unresolved } = fate;
  const failures: Failure[] = [];
  const where = visible.map((r) => `${r.partition}:${r.offset}`).join(', ');
  if (visible.length > 1)
    failures.push({
      property: 'half message visible twice',
      detail: `${send.value} in the topic ${visible.length} times (${where})`,
      ops: ops_of(fate),
    });
  if (visible.length > 0 && !COMMITS.has(send.decision)) {
    const property =
      send.decision === 'open_unknown' ? 'unanswered half message visible' : 'rolled-back half message visible';
    failures.push({ property, detail: `${send.value} (${send.decision}) in the topic at ${where}`, ops: ops_of(fate) });
  }
  if (visible.length > 0 && unresolved.length > 0)
    failures.push({
      property: 'half message both visible and unresolved',
      detail: `${send.value} in the topic at ${where} and ${unresolved.length} times in the unresolved topic`,
      ops: ops_of(fate),
    });
  return failures;
}

/** Decided commit: in the topic once committed, and not lost once acknowledged. */
function committed(fate: Fate): Failure[] {
  const { send, visible, unresolved } = fate;
  if (!COMMITS.has(send.decision) || visible.length > 0) return [];
  const commits = answered(fate, 'commit');
  const fail = (property: string, detail: string) => [
    { property, detail: `${send.value} ${detail}`, ops: ops_of(fate) },
  ];
  if (acked(fate, true))
    return unresolved.length > 0
      ? fail('committed half message unresolved', 'commit() acknowledged, yet copied to the unresolved topic')
      : fail('committed half message not visible', 'commit() acknowledged, never in the topic');
  if (unresolved.length > 0) {
    if (answers_may_have_failed(fate, commits)) return [];
    const check = commits.map((a) => a.check).join(', ');
    return fail('answered half message unresolved', `answered 'commit' at check ${check} and no check came after`);
  }
  if (commits.length > 0)
    return fail('committed half message not visible', "answered 'commit', neither in the topic nor unresolved");
  if (send.outcome === 'ok')
    return fail(
      'acknowledged half message lost',
      `(${send.decision}) neither in the topic nor in the unresolved topic`,
    );
  return [];
}

/** Decided rollback: once rolled back (acknowledged, or an answer that took), never unresolved. */
function rolled_back(fate: Fate): Failure[] {
  const { send, unresolved } = fate;
  if (!ROLLBACKS.has(send.decision) || unresolved.length === 0) return [];
  const detail = (why: string) => `${send.value} ${why}, yet ${unresolved.length} times in the unresolved topic`;
  if (acked(fate, false))
    return [
      { property: 'rolled-back half message unresolved', detail: detail('rollback() acknowledged'), ops: ops_of(fate) },
    ];
  const rollbacks = answered(fate, 'rollback');
  if (answers_may_have_failed(fate, rollbacks)) return [];
  const checks = rollbacks.map((a) => a.check).join(', ');
  const why = `answered 'rollback' at check ${checks} and no check came after`;
  return [{ property: 'answered half message unresolved', detail: detail(why), ops: ops_of(fate) }];
}

/** Answered 'unknown' every time: it must end in the unresolved topic once acknowledged. */
function unanswered(fate: Fate): Failure[] {
  const { send, unresolved } = fate;
  if (send.decision !== 'open_unknown' || send.outcome !== 'ok' || unresolved.length > 0) return [];
  const asked = `answered 'unknown' ${fate.answers.length} times`;
  const detail = `${send.value} acknowledged, ${asked}, never in the unresolved topic`;
  return [{ property: 'unanswered half message not unresolved', detail, ops: ops_of(fate) }];
}

/**
 * A live read_committed reader's first sight of the half message came before anyone decided to
 * commit it (commit() called, or a check answered 'commit'): it was visible while still open.
 */
function seen_early(fate: Fate): Failure[] {
  if (fate.live.length === 0) return [];
  const decided_ms = Math.min(
    ...fate.ends.filter((e) => e.commit).map((e) => e.invoked_ms),
    ...answered(fate, 'commit').map((a) => a.at_ms),
  );
  const first = fate.live.reduce((a, b) => (b.at_ms < a.at_ms ? b : a));
  if (first.at_ms >= decided_ms) return [];
  const when = Number.isFinite(decided_ms)
    ? `its commit was decided at ${decided_ms} ms`
    : 'no commit was ever decided';
  const detail = `${fate.send.value} (${fate.send.decision}) read at ${first.at_ms} ms; ${when}`;
  return [{ property: 'half message visible before its commit', detail, ops: [first, ...ops_of(fate)] }];
}

/** Live reads whose offset holds something else, or nothing, in the final read: not committed data. */
function uncommitted_seen(reads: readonly HalfReadOp[]): Failure[] {
  const at = new Map<string, HalfReadOp>();
  for (const read of reads) if (read.reader === 'final') at.set(`${read.partition}:${read.offset}`, read);
  const failures: Failure[] = [];
  for (const read of reads) {
    if (read.reader !== 'live') continue;
    const final = at.get(`${read.partition}:${read.offset}`);
    if (final?.value === read.value) continue;
    failures.push({
      property: 'read_committed reader saw an uncommitted half message',
      detail: `${read.value} at ${read.partition}:${read.offset}; committed there: ${final?.value ?? 'nothing'}`,
      ops: final ? [read, final] : [read],
    });
  }
  return failures;
}

/** What the half messages became, for the run's summary. */
function half_counts(fates: ReadonlyMap<string, Fate>): Record<string, number> {
  const counts: Record<string, number> = {};
  const add = (name: string, n = 1) => void (counts[name] = (counts[name] ?? 0) + n);
  for (const fate of fates.values()) {
    add(`half_send_${fate.send.outcome}`);
    if (fate.visible.length > 0) add('half_visible');
    if (fate.unresolved.length > 0) add('half_unresolved');
    if (fate.unresolved.length > 1) add('half_unresolved_extra_copies', fate.unresolved.length - 1);
    if (fate.visible.length === 0 && fate.unresolved.length === 0 && fate.send.outcome === 'ok')
      add(ROLLBACKS.has(fate.send.decision) ? 'half_rolled_back' : 'half_unsettled');
    const answers = fate.answers.filter((a) => a.answer !== 'unknown');
    if (answers.length > 0 && fate.unresolved.length > 0) add('half_unresolved_after_answer');
  }
  return counts;
}
