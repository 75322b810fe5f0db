// The compacted topic's property (docs/guarantees.md, What readers see): read from its start after
// the faults, each key's records are a subsequence of what was written to it, in the order written,
// none twice and none made up, and they reach its latest acknowledged write (or a later one, which
// superseded it). The cleaner may have removed anything older, on each replica in its own time.
import type { CompactReadOp, CompactWriteOp, Failure } from './history.ts';

export function compaction_keeps_latest(writes: readonly CompactWriteOp[], reads: readonly CompactReadOp[]): Failure[] {
  const failures: Failure[] = [];
  const index = new Map<string, { key: string; at: number; op: CompactWriteOp }>();
  const by_key = new Map<string, CompactWriteOp[]>();
  for (const write of writes) {
    const list = by_key.get(write.key) ?? [];
    index.set(write.id, { key: write.key, at: list.length, op: write });
    list.push(write);
    by_key.set(write.key, list);
  }
  const reached = new Map<string, { at: number; read: CompactReadOp }>();
  const ordered = [...reads].sort((a, b) => a.partition - b.partition || a.offset - b.offset);
  for (const read of ordered) {
    const written = index.get(read.id);
    if (!written || written.key !== read.key) {
      failures.push({ property: 'compacted record never written', detail: `${read.key}: ${read.id}`, ops: [read] });
      continue;
    }
    const before = reached.get(read.key);
    if (before && written.at <= before.at) {
      const detail = `${read.key}: ${read.id} after ${before.read.id}`;
      failures.push({ property: 'compacted records out of order or twice', detail, ops: [before.read, read] });
    }
    reached.set(read.key, { at: written.at, read });
  }
  for (const [key, list] of by_key) {
    let acknowledged = list.length - 1;
    while (acknowledged >= 0 && list[acknowledged]!.outcome !== 'ok') acknowledged--;
    if (acknowledged < 0 || (reached.get(key)?.at ?? -1) >= acknowledged) continue;
    const detail = `${key}: the latest acknowledged write ${list[acknowledged]!.id} and nothing after it was read`;
    failures.push({ property: 'compaction lost the latest write of a key', detail, ops: [list[acknowledged]!] });
  }
  return failures;
}
