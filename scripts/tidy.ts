// The project's tidy check (`npm run tidy`): no import cycles, each part of src/ imports only the
// parts below it, files, functions and lines stay under their limits, and the broker's parts take
// time and files from what they are given instead of the real clock and disk. Prints each
// violation as `path:line: rule: message` and exits 1 if there is any, 0 with a one-line summary
// otherwise (2 for bad options or a malformed exception). Sources are only parsed (with the
// TypeScript compiler API), never type-checked, so a run over the repository takes a second or two.
//
//   npm run tidy                        check the repository
//   npm run tidy -- --root DIR          check another tree laid out the same way (the tests' fixtures)
//   npm run tidy -- --exceptions FILE   use a JSON list of exceptions instead of EXCEPTIONS below
//   npm run tidy -- --top N             also list the N longest files and functions
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { element_lines, in_tree, list_files, read_source, resolve, to_posix, type Source } from './tidy_sources.ts';

// ---- Rule data ----------------------------------------------------------------------------------

/** The layer name of files directly in src/ (src/index.ts), which are not in any folder. */
const ROOT_PART = '(root)';

/**
 * Which top-level folders of src/ each folder may import, besides itself ('*': any of them).
 * Folders not built yet (core, single_node, compose) are listed so their files start out bound.
 */
const LAYERS: Readonly<Record<string, readonly string[] | '*'>> = {
  format: [], // the record-batch layout: imports nothing of ours
  storage: ['format'],
  protocol: ['format'],
  core: ['format', 'storage', 'protocol'],
  broker: ['core', 'storage', 'protocol', 'format'],
  cluster: ['core', 'storage', 'protocol', 'format'],
  single_node: ['core', 'storage', 'protocol', 'format'],
  server: ['core', 'protocol', 'format'], // front ends (Kafka, HTTP, AMQP) see the core, never storage
  sdk: ['protocol', 'format'],
  compose: '*', // the composition root wires every part together
  cli: '*',
  [ROOT_PART]: '*',
};

/** A folder that may reach another one only through a single file, the other's public face. */
const ENTRY_FILES: readonly { from: string; to: string; entry: string }[] = [
  { from: 'server', to: 'core', entry: 'src/core/index.ts' },
];

const LIMITS = { file_lines: 600, function_lines: 80, line_chars: 120 } as const;

/** Trees whose files must not import each other in a cycle. */
const CYCLE_TREES: readonly string[] = ['src', 'bench', 'faults', 'fuzz', 'scripts', 'console/src'];
/** Trees whose files, functions and lines have size limits (tests included). */
const SIZE_TREES: readonly string[] = ['src', 'bench', 'faults', 'fuzz', 'scripts', 'console/src', 'test'];
/** Folders that must take time from an injected clock and files from an injected FileIO. */
const INJECTED_ONLY: readonly string[] = ['src/broker', 'src/cluster', 'src/core', 'src/single_node', 'src/server'];
/** Test files and their support modules, which may use the real clock and disk and build from any part. */
const TEST_FILE = /(\.test|_test_support)\.[cm]?[jt]s$/;

const RULES = ['cycle', 'layer', 'file-lines', 'function-lines', 'line-length', 'clock', 'file-io'] as const;
type CheckedRule = (typeof RULES)[number];
type Rule = CheckedRule | 'stale-exception';

interface Exception {
  /** The file, relative to the root; for `cycle`, any file of the cycle. */
  path: string;
  rule: CheckedRule;
  reason: string;
}

/**
 * Violations allowed for now, each with the reason. An exception matching no violation is itself
 * reported, so the list shrinks as the tree is brought into line.
 */
const EXCEPTIONS: Exception[] = [
  {
    path: 'src/cluster/etcd_store.ts',
    rule: 'clock',
    reason: 'gRPC call deadlines are wall-clock times by definition; a simulated clock has no say over etcd',
  },
];

interface Violation {
  path: string;
  line: number;
  rule: Rule;
  message: string;
  /** Every file of an import cycle (an exception for any one of them covers the cycle). */
  files?: readonly string[];
}

// ---- Rule 1: import cycles ----------------------------------------------------------------------

/** Each import edge between two files, with the line of the first import. */
type Graph = Map<string, Map<string, number>>;

function import_graph(sources: readonly Source[]): Graph {
  const nodes = new Set(sources.map((source) => source.path));
  const graph: Graph = new Map();
  for (const source of sources) {
    const edges = new Map<string, number>();
    for (const { target, line } of source.imports) {
      if (target !== undefined && nodes.has(target) && !edges.has(target)) edges.set(target, line);
    }
    graph.set(source.path, edges);
  }
  return graph;
}

/** The shortest path from `from` to `to` along imports (both ends included), empty if there is none. */
function shortest_path(graph: Graph, from: string, to: string): string[] {
  const previous = new Map<string, string | null>([[from, null]]);
  const queue = [from];
  for (let i = 0; i < queue.length && !previous.has(to); i++) {
    for (const next of graph.get(queue[i]!)!.keys()) {
      if (!previous.has(next)) {
        previous.set(next, queue[i]!);
        queue.push(next);
      }
    }
  }
  const route: string[] = [];
  if (previous.has(to)) {
    for (let at: string | null = to; at !== null; at = previous.get(at)!) route.unshift(at);
  }
  return route;
}

/**
 * For each import not yet on a reported cycle, the shortest cycle through it, if there is one: every
 * import that closes a cycle appears in a report, and each cycle is reported once, from its first
 * file in sorted order.
 */
function cycles(graph: Graph): string[][] {
  const covered = new Set<string>();
  const found = new Map<string, string[]>();
  for (const from of [...graph.keys()].sort()) {
    for (const to of [...graph.get(from)!.keys()].sort()) {
      const back = covered.has(`${from}\n${to}`) ? [] : shortest_path(graph, to, from);
      if (back.length === 0) continue;
      const loop = [from, ...back.slice(0, -1)];
      const start = loop.indexOf([...loop].sort()[0]!);
      const cycle = [...loop.slice(start), ...loop.slice(0, start)];
      cycle.forEach((file, i) => covered.add(`${file}\n${cycle[(i + 1) % cycle.length]}`));
      found.set(cycle.join('\n'), cycle);
    }
  }
  return [...found.values()];
}

function check_cycles(sources: readonly Source[]): Violation[] {
  const graph = import_graph(sources.filter((source) => in_tree(source.path, CYCLE_TREES)));
  return cycles(graph).map((cycle) => {
    const line = graph.get(cycle[0]!)!.get(cycle[1 % cycle.length]!)!;
    const message = `import cycle: ${[...cycle, cycle[0]].join(' → ')}`;
    return { path: cycle[0]!, line, rule: 'cycle', message, files: cycle };
  });
}

// ---- Rule 2: layers -----------------------------------------------------------------------------

/** The top-level folder of src/ a file belongs to (ROOT_PART directly in src/), undefined outside. */
function part_of(file: string): string | undefined {
  if (!file.startsWith('src/')) return undefined;
  const rest = file.slice('src/'.length);
  return rest.includes('/') ? rest.slice(0, rest.indexOf('/')) : ROOT_PART;
}

function part_label(part: string): string {
  return part === ROOT_PART ? 'files directly in src/' : `src/${part}/`;
}

function check_layers(sources: readonly Source[]): Violation[] {
  const violations: Violation[] = [];
  const unknown = new Set<string>();
  for (const source of sources) {
    const from = part_of(source.path);
    // Tests beside the code may build what they test with anything (a broker from the composition root).
    if (from === undefined || TEST_FILE.test(source.path)) continue;
    const allowed = Object.hasOwn(LAYERS, from) ? LAYERS[from]! : undefined;
    if (allowed === undefined) {
      const message = `${part_label(from)} is not in the layer table: add it with the parts it may import`;
      if (!unknown.has(from)) violations.push({ path: source.path, line: 1, rule: 'layer', message });
      unknown.add(from);
      continue;
    }
    for (const { target, specifier, line } of source.imports) {
      const to = target === undefined ? undefined : part_of(target);
      if (to === undefined || to === from) continue;
      if (allowed !== '*' && !allowed.includes(to)) {
        const may = allowed.length > 0 ? `it may import ${allowed.join(', ')}` : 'it may import nothing else in src/';
        const message = `${part_label(from)} may not import ${part_label(to)} (${specifier}); ${may}`;
        violations.push({ path: source.path, line, rule: 'layer', message });
      }
      for (const { entry } of ENTRY_FILES.filter((rule) => rule.from === from && rule.to === to)) {
        if (target === entry) continue;
        const message = `${part_label(from)} may import ${part_label(to)} only through ${entry}, not ${specifier}`;
        violations.push({ path: source.path, line, rule: 'layer', message });
      }
    }
  }
  return violations;
}

// ---- Rule 3: sizes ------------------------------------------------------------------------------

function check_sizes(sources: readonly Source[]): Violation[] {
  const violations: Violation[] = [];
  for (const source of sources.filter((candidate) => in_tree(candidate.path, SIZE_TREES))) {
    const file = source.path;
    if (source.lines.length > LIMITS.file_lines) {
      const message = `file is ${source.lines.length} lines (limit ${LIMITS.file_lines})`;
      violations.push({ path: file, line: 1, rule: 'file-lines', message });
    }
    for (const { name, line, lines } of source.functions) {
      if (lines <= LIMITS.function_lines) continue;
      const message = `${name} is ${lines} lines (limit ${LIMITS.function_lines})`;
      violations.push({ path: file, line, rule: 'function-lines', message });
    }
    source.lines.forEach((text, i) => {
      if (text.length <= LIMITS.line_chars) return; // UTF-16 units never undercount characters
      const chars = [...text].length;
      if (chars <= LIMITS.line_chars) return;
      const message = `line is ${chars} characters (limit ${LIMITS.line_chars})`;
      violations.push({ path: file, line: i + 1, rule: 'line-length', message });
    });
  }
  return violations;
}

// ---- Rule 4: the composition root ---------------------------------------------------------------

function check_injected(sources: readonly Source[]): Violation[] {
  return sources
    .filter((source) => in_tree(source.path, INJECTED_ONLY) && !TEST_FILE.test(source.path))
    .flatMap((source) => source.banned.map((use) => ({ path: source.path, ...use })));
}

// ---- Exceptions ---------------------------------------------------------------------------------

class UsageError extends Error {}

/** An exception and where it is written, so a stale one can be pointed at. */
interface Listed extends Exception {
  written_in: string;
  line: number;
}

function validate(value: unknown, where: string): Exception {
  const entry = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  const fail = (problem: string): never => {
    throw new UsageError(`tidy: exception at ${where}: ${problem}`);
  };
  if (typeof entry.path !== 'string' || entry.path === '') fail('needs a path');
  if (!RULES.includes(entry.rule as CheckedRule)) fail(`rule must be one of ${RULES.join(', ')}`);
  if (typeof entry.reason !== 'string' || entry.reason.trim() === '') fail('needs a reason');
  return { path: entry.path as string, rule: entry.rule as CheckedRule, reason: entry.reason as string };
}

function load_exceptions(file: string | undefined, display: (absolute: string) => string): Listed[] {
  const absolute = file === undefined ? import.meta.filename : path.resolve(file);
  const text = fs.readFileSync(absolute, 'utf8');
  let list: unknown = EXCEPTIONS;
  if (file !== undefined) {
    try {
      list = JSON.parse(text);
    } catch (error) {
      throw new UsageError(`tidy: ${file}: ${(error as Error).message}`);
    }
    if (!Array.isArray(list)) throw new UsageError(`tidy: ${file}: expected a JSON array of exceptions`);
  }
  const lines = (list as unknown[]).length > 0 ? element_lines(absolute, text) : [];
  return (list as unknown[]).map((value, i) => {
    const written_in = display(absolute);
    const line = lines[i] ?? 1;
    return { ...validate(value, `${written_in}:${line}`), written_in, line };
  });
}

function apply_exceptions(violations: readonly Violation[], exceptions: readonly Listed[]): Violation[] {
  const used = new Set<Listed>();
  const kept = violations.filter((violation) => {
    const files = violation.files ?? [violation.path];
    const matching = exceptions.filter((entry) => entry.rule === violation.rule && files.includes(entry.path));
    matching.forEach((entry) => used.add(entry));
    return matching.length === 0;
  });
  for (const entry of exceptions.filter((candidate) => !used.has(candidate))) {
    const message = `no ${entry.rule} violation in ${entry.path} any more: remove this exception ("${entry.reason}")`;
    kept.push({ path: entry.written_in, line: entry.line, rule: 'stale-exception', message });
  }
  return kept;
}

// ---- Running ------------------------------------------------------------------------------------

interface Options {
  root: string;
  exceptions: string | undefined;
  top: number;
}

function parse_options(args: string[]): Options {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: { root: { type: 'string' }, exceptions: { type: 'string' }, top: { type: 'string' } },
    }));
  } catch (error) {
    throw new UsageError(`tidy: ${(error as Error).message}`);
  }
  const top = Number(values.top ?? 0);
  if (!Number.isInteger(top) || top < 0) throw new UsageError('tidy: --top takes a whole number');
  const root = path.resolve(values.root ?? path.join(import.meta.dirname, '..'));
  if (!fs.statSync(root, { throwIfNoEntry: false })?.isDirectory()) {
    throw new UsageError(`tidy: --root ${values.root}: not a directory`);
  }
  return { root, exceptions: values.exceptions, top };
}

function compare(a: Violation, b: Violation): number {
  if (a.path !== b.path) return a.path < b.path ? -1 : 1;
  if (a.line !== b.line) return a.line - b.line;
  if (a.rule !== b.rule) return a.rule < b.rule ? -1 : 1;
  return a.message < b.message ? -1 : a.message > b.message ? 1 : 0;
}

function longest(sources: readonly Source[], count: number): string[] {
  const sized = sources.filter((source) => in_tree(source.path, SIZE_TREES));
  const files = sized.map((source) => ({ lines: source.lines.length, label: source.path }));
  const functions = sized.flatMap((source) =>
    source.functions.map((fn) => ({ lines: fn.lines, label: `${source.path}:${fn.line}  ${fn.name}` })),
  );
  const table = (title: string, rows: { lines: number; label: string }[]): string[] => [
    title,
    ...rows
      .sort((a, b) => b.lines - a.lines)
      .slice(0, count)
      .map((row) => `${String(row.lines).padStart(6)}  ${row.label}`),
  ];
  return [...table('longest files (lines):', files), ...table('longest functions (lines):', functions)];
}

function main(args: string[]): number {
  const started = performance.now();
  const options = parse_options(args);
  const display = (absolute: string): string => {
    const relative = path.relative(options.root, absolute);
    return to_posix(relative.startsWith('..') || path.isAbsolute(relative) ? path.relative('.', absolute) : relative);
  };
  const exceptions = load_exceptions(options.exceptions, display);
  const files = list_files(options.root, [...new Set([...CYCLE_TREES, ...SIZE_TREES])]);
  const sources = files.map((file) => read_source(options.root, file));
  const listed = new Set(files);
  for (const source of sources) {
    for (const entry of source.imports) entry.target = resolve(source.path, entry.specifier, listed);
  }
  const found = [check_cycles, check_layers, check_sizes, check_injected].flatMap((check) => check(sources));
  const violations = apply_exceptions(found, exceptions).sort(compare);
  const output = violations.map(({ path: file, line, rule, message }) => `${file}:${line}: ${rule}: ${message}`);
  if (options.top > 0) output.push(...longest(sources, options.top));
  if (output.length > 0) process.stdout.write(`${output.join('\n')}\n`);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (violations.length === 0) {
    console.log(`tidy: ${files.length} files, no violations (${seconds} s)`);
    return 0;
  }
  const by_rule = [...RULES, 'stale-exception']
    .map((rule) => [rule, violations.filter((violation) => violation.rule === rule).length] as const)
    .filter(([, count]) => count > 0)
    .map(([rule, count]) => `${rule} ${count}`)
    .join(', ');
  console.error(`tidy: ${violations.length} violations in ${files.length} files: ${by_rule} (${seconds} s)`);
  return 1;
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  console.error(error.message);
  process.exitCode = 2;
}
