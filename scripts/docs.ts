// Writes the generated parts of the docs from the code they describe (`npm run docs`), so the two
// cannot drift: the Kafka API table of docs/kafka-compatibility.md from the handler table. Each
// part sits between `<!-- generated: NAME -->` and `<!-- end generated -->`; test/docs.test.ts
// fails when a part is not what this would write.
import fs from 'node:fs';
import path from 'node:path';
import { handler_table } from '../src/server/kafka/handlers/index.ts';
import { parse_range } from '../src/protocol/kafka/schema.ts';

const ROOT = path.resolve(import.meta.dirname, '..');

export interface GeneratedPart {
  file: string;
  name: string;
  render(): string;
}

/** A version range as the docs write it: 3–10, or one version alone. */
function range_text(min: number, max: number): string {
  return min === max ? String(min) : `${min}–${max}`;
}

/** The first flexible version within what is served, or – when none is. */
function flexible_from(flexible_versions: string, min: number, max: number): string {
  const range = parse_range(flexible_versions);
  if (range === null || range.low > max) return '–';
  return String(Math.max(range.low, min));
}

export function kafka_api_table(): string {
  const rows = [...handler_table().values()]
    .sort((a, b) => a.api.api_key - b.api.api_key)
    .map((h) => `| ${h.api.api_key} | ${h.api.name} | ${range_text(h.min_version, h.max_version)} | ${flexible_from(h.api.request.flexible_versions, h.min_version, h.max_version)} |${h.notes ? ' ' : ''}${h.notes}${h.notes ? ' ' : ''}|`);
  return ['| key | API | versions served | flexible from | notes |', '|---:|---|---|---|---|', ...rows].join('\n');
}

export const GENERATED_PARTS: readonly GeneratedPart[] = [{ file: 'docs/kafka-compatibility.md', name: 'kafka-apis', render: kafka_api_table }];

const begin = (name: string) => `<!-- generated: ${name} (npm run docs) -->`;
const END = '<!-- end generated -->';

/** The part's text as the file holds it now; null when the file has no such part. */
export function current_part(part: GeneratedPart): string | null {
  const text = fs.readFileSync(path.join(ROOT, part.file), 'utf8');
  const start = text.indexOf(begin(part.name));
  const end = text.indexOf(END, start);
  if (start < 0 || end < 0) return null;
  return text.slice(start + begin(part.name).length, end).trim();
}

function write_part(part: GeneratedPart): boolean {
  const file = path.join(ROOT, part.file);
  const text = fs.readFileSync(file, 'utf8');
  const start = text.indexOf(begin(part.name));
  const end = text.indexOf(END, start);
  if (start < 0 || end < 0) throw new Error(`${part.file}: no "${begin(part.name)}" ... "${END}" section`);
  const next = `${text.slice(0, start)}${begin(part.name)}\n${part.render()}\n${text.slice(end)}`;
  if (next === text) return false;
  fs.writeFileSync(file, next);
  return true;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const part of GENERATED_PARTS) process.stdout.write(`${part.file} (${part.name}): ${write_part(part) ? 'written' : 'up to date'}\n`);
}
