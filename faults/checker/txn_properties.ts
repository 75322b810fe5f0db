// The consume-transform-produce workload's properties (docs/guarantees.md, Transactions): the
// output, read read_committed, holds each input exactly once once the loop has drained its input
// (none lost, none twice, none made up), and a read_committed reader never saw a record that is not
// committed: what the live reader saw at an offset is what the final reader finds there.
import type { Failure, TxnInputOp, TxnOutputOp } from './history.ts';

export function exactly_once(inputs: readonly TxnInputOp[], outputs: readonly TxnOutputOp[]): Failure[] {
  if (inputs.length === 0) return [];
  const failures: Failure[] = [];
  const written = new Set(inputs.map((op) => op.value));
  const final = outputs.filter((op) => op.reader === 'final');
  const by_value = new Map<string, TxnOutputOp[]>();
  for (const op of final) {
    const seen = by_value.get(op.value);
    if (seen) seen.push(op);
    else by_value.set(op.value, [op]);
  }
  for (const [value, ops] of by_value) {
    if (ops.length > 1)
      failures.push({ property: 'transaction output twice', detail: `${value} committed ${ops.length} times`, ops });
    if (!written.has(value))
      failures.push({ property: 'transaction output without input', detail: `${value} was never written`, ops });
  }
  for (const input of inputs) {
    if (input.outcome === 'ok' && !by_value.has(input.value)) {
      const detail = `${input.value} acknowledged, never in the committed output`;
      failures.push({ property: 'transaction input lost', detail, ops: [input] });
    }
  }
  return [...failures, ...uncommitted_seen(outputs, final)];
}

/** Live reads whose offset holds something else, or nothing, in the final read: not committed data. */
function uncommitted_seen(outputs: readonly TxnOutputOp[], final: readonly TxnOutputOp[]): Failure[] {
  const at = new Map(final.map((op) => [`${op.partition}:${op.offset}`, op]));
  const failures: Failure[] = [];
  for (const op of outputs) {
    if (op.reader !== 'live') continue;
    const committed = at.get(`${op.partition}:${op.offset}`);
    if (committed?.value === op.value) continue;
    failures.push({
      property: 'read_committed reader saw uncommitted data',
      detail: `${op.value} at ${op.partition}:${op.offset}; committed there: ${committed?.value ?? 'nothing'}`,
      ops: committed ? [op, committed] : [op],
    });
  }
  return failures;
}
