// The checker: every property over one run's history, and the report a failed run prints (the
// properties broken, the operations that show it, and the seed that reproduces the run).
import {
  DEFAULT_BOUNDS,
  type AcceptOp,
  type CheckBounds,
  type ClockFaultOp,
  type CommitOp,
  type DelayedReadOp,
  type DelayedWriteOp,
  type Failure,
  type HistoryOp,
  type ReadOp,
  type ReplicaEndOp,
  type WriteOp,
} from './history.ts';
import {
  OffsetMap,
  type Resent,
  duplicates,
  key_order,
  lost_writes,
  offset_conflicts,
  replicas_diverge,
} from './log_properties.ts';
import { amqp_delivery, commits_backwards, delayed_delivery, queue_delivery } from './delivery_properties.ts';
import { compaction_keeps_latest } from './compaction_properties.ts';
import { exactly_once } from './txn_properties.ts';
import { half_messages } from './half_properties.ts';
import { acl_leaks, broker_configs_diverge, quota_exceeded, users_diverge } from './security_properties.ts';

export interface CheckResult {
  valid: boolean;
  failures: Failure[];
  /** What the run did, for the report: operations by kind and writes by outcome. */
  counts: Record<string, number>;
}

function of_kind<K extends HistoryOp['kind']>(ops: readonly HistoryOp[], kind: K): Extract<HistoryOp, { kind: K }>[] {
  return ops.filter((op): op is Extract<HistoryOp, { kind: K }> => op.kind === kind);
}

export function check_history(ops: readonly HistoryOp[], bounds: CheckBounds = DEFAULT_BOUNDS): CheckResult {
  const writes: WriteOp[] = of_kind(ops, 'write');
  const reads: ReadOp[] = of_kind(ops, 'read');
  const offsets = new OffsetMap(reads);
  const accepts: AcceptOp[] = of_kind(ops, 'accept');
  const commits: CommitOp[] = of_kind(ops, 'commit');
  const delayed_writes: DelayedWriteOp[] = of_kind(ops, 'delayed_write');
  const delayed_reads: DelayedReadOp[] = of_kind(ops, 'delayed_read');
  const ends: ReplicaEndOp[] = of_kind(ops, 'replica_end');
  const clock_faults: ClockFaultOp[] = of_kind(ops, 'clock_fault');
  const resent: Resent = { after_unknown: new Set(), under_new_epoch: new Set() };
  const half = half_messages(
    of_kind(ops, 'half_send'),
    of_kind(ops, 'half_end'),
    of_kind(ops, 'half_check'),
    of_kind(ops, 'half_read'),
  );
  const failures = [
    ...lost_writes(writes, offsets),
    ...offset_conflicts(offsets),
    ...duplicates(offsets, writes, bounds, resent),
    ...key_order(writes),
    ...replicas_diverge(ends, offsets),
    ...commits_backwards(commits),
    ...queue_delivery(writes, accepts, bounds),
    ...delayed_delivery(delayed_writes, delayed_reads, clock_faults, bounds),
    ...amqp_delivery(of_kind(ops, 'amqp_publish'), of_kind(ops, 'amqp_ack'), bounds),
    ...exactly_once(of_kind(ops, 'txn_input'), of_kind(ops, 'txn_output')),
    ...half.failures,
    ...acl_leaks(of_kind(ops, 'acl_probe')),
    ...users_diverge(of_kind(ops, 'user_login')),
    ...broker_configs_diverge(of_kind(ops, 'broker_config')),
    ...quota_exceeded(of_kind(ops, 'quota_use')),
    ...compaction_keeps_latest(of_kind(ops, 'compact_write'), of_kind(ops, 'compact_read')),
  ];
  const counts: Record<string, number> = { ...half.counts };
  for (const op of ops) counts[op.kind] = (counts[op.kind] ?? 0) + 1;
  for (const write of writes) counts[`write_${write.outcome}`] = (counts[`write_${write.outcome}`] ?? 0) + 1;
  for (const input of of_kind(ops, 'txn_input'))
    counts[`txn_input_${input.outcome}`] = (counts[`txn_input_${input.outcome}`] ?? 0) + 1;
  for (const publish of of_kind(ops, 'amqp_publish'))
    counts[`amqp_publish_${publish.outcome}`] = (counts[`amqp_publish_${publish.outcome}`] ?? 0) + 1;
  // Records a client sent again as new ones (log_properties.ts): not the broker's doing, but shown.
  if (resent.after_unknown.size > 0) counts.stored_twice_after_unknown_write = resent.after_unknown.size;
  if (resent.under_new_epoch.size > 0) counts.stored_twice_resent_under_new_epoch = resent.under_new_epoch.size;
  return { valid: failures.length === 0, failures, counts };
}

/** FAILURES_SHOWN failures, each with its operations, and the command that runs the same schedule. */
const FAILURES_SHOWN = 20;

export function describe_failures(result: CheckResult, seed: number, command: string): string {
  if (result.valid) return `checker: valid (${JSON.stringify(result.counts)})`;
  const lines = [`checker: ${result.failures.length} failures; rerun with: ${command} --seed ${seed}`];
  for (const failure of result.failures.slice(0, FAILURES_SHOWN)) {
    lines.push(`- ${failure.property}: ${failure.detail}`);
    for (const op of failure.ops) lines.push(`    ${JSON.stringify(op)}`);
  }
  if (result.failures.length > FAILURES_SHOWN) lines.push(`  … and ${result.failures.length - FAILURES_SHOWN} more`);
  return lines.join('\n');
}
