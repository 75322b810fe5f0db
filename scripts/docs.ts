// Writes the generated parts of the docs from the code they describe (`npm run docs`), so the two
// cannot drift: the Kafka API table, the topic configs and the broker configs of
// docs/kafka-compatibility.md from the handler table and the topic and broker config tables, and
// the settings of docs/settings.md from the settings table (src/core/settings.ts). Each part sits
// between `<!-- generated: NAME -->` and `<!-- end generated -->`; test/docs.test.ts fails when a
// part is not what this would write.
import fs from 'node:fs';
import path from 'node:path';
import { handler_table } from '../src/server/kafka/handlers/index.ts';
import { parse_range } from '../src/protocol/kafka/schema.ts';
import {
  type Setting,
  type SettingGroup,
  type Surface,
  SETTING_GROUPS,
  file_group_name,
  settings_of,
} from '../src/core/settings.ts';
import { text_of, type_text } from '../src/core/setting_values.ts';
import { topic_config_entries } from '../src/broker/topic_config.ts';
import { BROKER_CONFIG_SPECS } from '../src/broker/broker_configs.ts';

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
    .map((h) => {
      const flexible = flexible_from(h.api.request.flexible_versions, h.min_version, h.max_version);
      const notes = h.notes ? ` ${h.notes} ` : '';
      const versions = range_text(h.min_version, h.max_version);
      return `| ${h.api.api_key} | ${h.api.name} | ${versions} | ${flexible} |${notes}|`;
    });
  return ['| key | API | versions served | flexible from | notes |', '|---:|---|---|---|---|', ...rows].join('\n');
}

/** Every topic config: its type, default and what it does (or why it has no effect). */
export function topic_config_table(): string {
  const rows = topic_config_entries({}).map((entry) => {
    const meaning = cell(entry.documentation ?? '', true);
    return `| ${cell(entry.name)} | ${entry.type} | ${cell(entry.default ?? '')} | ${meaning} |`;
  });
  return ['| config | type | default | meaning |', '|---|---|---|---|', ...rows].join('\n');
}

/** Every broker config: its type, default, whether it changes while the broker runs, and what it is. */
export function broker_config_table(): string {
  const changes = { cluster: 'cluster-wide', broker: 'per broker or cluster-wide' } as const;
  const rows = BROKER_CONFIG_SPECS.map((spec) => {
    const setting = spec.setting ? ` (setting ${cell(spec.setting.name)})` : '';
    const dynamic = spec.dynamic ? changes[spec.dynamic] : 'read-only';
    const meaning = `${cell(spec.doc, true)}${setting}`;
    return `| ${cell(spec.name)} | ${spec.type} | ${cell(spec.default)} | ${dynamic} | ${meaning} |`;
  });
  return ['| config | type | default | changes | meaning |', '|---|---|---|---|---|', ...rows].join('\n');
}

/** Text for a table cell: pipes escaped, in a code span unless `plain` (then no HTML either). */
function cell(text: string, plain = false): string {
  const escaped = text.replace(/\|/g, '\\|');
  return plain ? escaped.replace(/</g, '&lt;').replace(/>/g, '&gt;') : `\`${escaped}\``;
}

const SURFACE_HEADINGS: ReadonlyArray<[Surface, string]> = [
  ['file', 'config file'],
  ['env', 'environment'],
  ['flag', 'flag'],
  ['http', 'HTTP API'],
  ['kafka', 'Kafka group config'],
];

function default_cell(s: Setting): string {
  if (s.default === null) return `none: ${cell(s.none ?? '', true)}`;
  const text = text_of(s.default);
  return text === '' ? '(empty)' : cell(text);
}

function embedded_cell(s: Setting): string {
  if (s.option === null) return '–';
  return cell(s.option ?? s.name);
}

/** One group's table: a column per surface any of its settings has. */
function settings_group_table(group: SettingGroup | null): string {
  const settings = settings_of(group);
  const surfaces = SURFACE_HEADINGS.filter(([surface]) => settings.some((s) => s.names[surface] !== undefined));
  const headings = [
    'setting',
    ...surfaces.map(([, heading]) => heading),
    'embedded (`startBroker`)',
    'type',
    'default',
    'description',
  ];
  const rows = settings.map((s) => {
    const names = surfaces.map(([surface]) => (s.names[surface] === undefined ? '–' : cell(s.names[surface])));
    const cells = [cell(s.name), ...names, embedded_cell(s), cell(type_text(s.type), true), default_cell(s)];
    return `| ${[...cells, cell(s.description, true)].join(' | ')} |`;
  });
  const title =
    group === null ? 'Top level (`sluice start`)' : `\`${group}\` (config file: \`"${file_group_name(group)}"\`)`;
  const head = [`| ${headings.join(' | ')} |`, `|${headings.map(() => '---').join('|')}|`];
  return [`### ${title}`, '', ...head, ...rows].join('\n');
}

/** docs/settings.md: every setting with its names, type, default and description; then the aliases. */
export function settings_tables(): string {
  const tables = [null, ...SETTING_GROUPS].map(settings_group_table);
  const aliases = [null, ...SETTING_GROUPS]
    .flatMap(settings_of)
    .flatMap((s) =>
      (s.aliases ?? []).map(
        (a) =>
          `| ${cell(a.name)} | ${a.surface === 'file' ? 'config file' : a.surface} | ` +
          `${cell(s.names[a.surface]!)} | ${cell(a.note, true)} |`,
      ),
    );
  const alias_table = [
    '### Old names still accepted',
    '',
    '| old name | surface | use instead | why |',
    '|---|---|---|---|',
    ...aliases,
  ].join('\n');
  return [...tables, alias_table].join('\n\n');
}

export const GENERATED_PARTS: readonly GeneratedPart[] = [
  { file: 'docs/kafka-compatibility.md', name: 'kafka-apis', render: kafka_api_table },
  { file: 'docs/kafka-compatibility.md', name: 'topic-configs', render: topic_config_table },
  { file: 'docs/kafka-compatibility.md', name: 'broker-configs', render: broker_config_table },
  { file: 'docs/settings.md', name: 'settings', render: settings_tables },
];

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
  for (const part of GENERATED_PARTS) {
    process.stdout.write(`${part.file} (${part.name}): ${write_part(part) ? 'written' : 'up to date'}\n`);
  }
}
