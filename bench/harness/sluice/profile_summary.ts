// Summarizes a V8 .cpuprofile (from node --cpu-prof): self time per function and total time per
// function (inclusive, each function counted once per sample), top N of each.
//
//   node --import tsx bench/harness/sluice/profile_summary.ts FILE.cpuprofile [--top 25]
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export function summarize(file: string, top = 25): string {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
  const by_id = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const name_of = (node: ProfileNode) => {
    const frame = node.callFrame;
    const where = frame.url ? `${path.basename(frame.url.replace(/^file:\/\//, ''))}:${frame.lineNumber + 1}` : '';
    return `${frame.functionName || '(anonymous)'}${where ? ` ${where}` : ''}`;
  };
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  let all = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    all += dt;
    const node = by_id.get(id)!;
    const leaf = name_of(node);
    self.set(leaf, (self.get(leaf) ?? 0) + dt);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const name = name_of(by_id.get(at)!);
      if (seen.has(name)) continue;
      seen.add(name);
      total.set(name, (total.get(name) ?? 0) + dt);
    }
  });
  const idle = self.get('(idle)') ?? 0;
  const busy = all - idle;
  const lines = [`${path.basename(file)}: ${(all / 1e6).toFixed(2)} s sampled, ${(busy / 1e6).toFixed(2)} s not idle`];
  const table = (title: string, map: Map<string, number>) => {
    lines.push(`  ${title} (ms, % of non-idle):`);
    const sorted = [...map].filter(([name]) => name !== '(idle)' && name !== '(root)').sort((a, b) => b[1] - a[1]);
    for (const [name, us] of sorted.slice(0, top))
      lines.push(`    ${(us / 1000).toFixed(0).padStart(7)}  ${((100 * us) / busy).toFixed(1).padStart(5)}%  ${name}`);
  };
  table('self time', self);
  table('total time', total);
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values, positionals } = parseArgs({
    options: { top: { type: 'string', default: '25' } },
    allowPositionals: true,
  });
  for (const file of positionals) console.log(summarize(file, Number(values.top)));
}
