// The tidy check (scripts/tidy.ts) run on small trees built for each case: a tidy tree passes, and
// cycles, layer breaches, sizes over the limits, the real clock in the broker and stale exceptions
// each fail with their rule.
import { describe, test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const SCRIPT = path.resolve(import.meta.dirname, '..', 'scripts', 'tidy.ts');
const made: string[] = [];
after(() => {
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true });
});

/** A tree with the given files (path relative to the root → text). */
function fixture(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-tidy-'));
  made.push(root);
  for (const [file, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  }
  return root;
}

/** The text of a file with these lines. */
function lines(...text: string[]): string {
  return `${text.join('\n')}\n`;
}

/** A function declaration spanning `count` lines. */
function function_of(name: string, count: number): string {
  const body = Array(count - 4).fill('  n++;');
  return lines(`export function ${name}(): number {`, '  let n = 0;', ...body, '  return n;', '}');
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
  /** The violation lines of stdout. */
  violations: string[];
}

/** Runs the check on a fixture tree; without `--exceptions`, with none (the project's list names project files). */
function tidy(root: string, ...args: string[]): Promise<Run> {
  if (!args.includes('--exceptions')) {
    const none = path.join(root, '.no-exceptions.json');
    fs.writeFileSync(none, '[]');
    args = [...args, '--exceptions', none];
  }
  return new Promise((resolve) => {
    const argv = ['--import', 'tsx', SCRIPT, '--root', root, ...args];
    execFile(process.execPath, argv, { timeout: 30_000 }, (error, stdout, stderr) => {
      const code = error ? Number((error as { code?: number }).code ?? 1) : 0;
      const violations = stdout.split('\n').filter((line) => /^[^:\s]+:\d+: [a-z-]+: /.test(line));
      resolve({ code, stdout, stderr, violations });
    });
  });
}

/** `path:line: rule` of each violation. */
function located(run: Run): string[] {
  return run.violations.map((line) => line.split(': ').slice(0, 2).join(': '));
}

async function tidy_tree_passes(): Promise<void> {
  const wide = `export const WIDE = '${'é'.repeat(97)}';`; // 120 characters, more bytes
  const root = fixture({
    'src/format/layout.ts': lines("import fs from 'node:fs';", 'export const HEADER = 61;', 'fs.readFileSync;'),
    'src/storage/log.ts': lines("import { HEADER } from '../format/layout.ts';", 'export class Log { size = HEADER; }'),
    'src/protocol/types.ts': lines('export interface Request { api: number }'),
    'src/core/index.ts': lines("export { Engine } from './engine.ts';"),
    'src/core/engine.ts': lines("import { Log } from '../storage/log.ts';", 'export class Engine { log = new Log(); }'),
    'src/server/front.ts': lines(
      "import { Engine } from '../core/index.ts';",
      "import type { Request } from '../protocol/types.ts';",
      "import ts from 'typescript';",
      'export const handle = (engine: Engine, request: Request) => [engine, request, ts.version];',
    ),
    'src/broker/limits.ts': `${function_of('eighty', 80)}${wide}\n`,
    'src/broker/long_file.ts': lines(...Array(599).fill('// filler'), 'export const last = 1;'),
    'src/broker/clock.test.ts': lines('export const now = Date.now();'),
    'src/compose/wire.ts': lines(
      "import { Engine } from '../core/engine.ts';",
      "import { NodeFileIO } from '../storage/log.ts';",
      'export const wired = { engine: new Engine(), io: new NodeFileIO(), at: Date.now() };',
    ),
    'src/index.ts': lines("export * from './server/front.ts';", "export * from './storage/log.ts';"),
    'bench/append.ts': lines("import { Log } from '../src/storage/log.ts';", 'new Log();'),
    'test/front.test.ts': lines("import { handle } from '../src/server/front.ts';", 'handle;'),
  });
  const run = await tidy(root);
  assert.equal(run.code, 0, run.stdout + run.stderr);
  assert.match(run.stdout, /^tidy: 13 files, no violations \([\d.]+ s\)\n$/);
}

async function cycles_fail(): Promise<void> {
  const root = fixture({
    'src/storage/a.ts': lines("import { b } from './b.ts';", 'export const a = () => b;'),
    'src/storage/b.ts': lines("import { a } from './a.ts';", 'export const b = () => a;'),
    'src/protocol/c.ts': lines("import type { D } from './d.ts';", 'export interface C { d?: D }'),
    'src/protocol/d.ts': lines("import type { C } from './c.ts';", 'export interface D { c?: C }'),
    'scripts/x.ts': lines("export * from './y.ts';"),
    'scripts/y.ts': lines("export const y = () => import('./z.ts');"),
    'scripts/z.ts': lines("import './x.ts';"),
    'test/p.ts': lines("import './q.ts';"), // tests are not checked for cycles
    'test/q.ts': lines("import './p.ts';"),
  });
  const run = await tidy(root);
  assert.equal(run.code, 1);
  assert.deepEqual(run.violations, [
    'scripts/x.ts:1: cycle: import cycle: scripts/x.ts → scripts/y.ts → scripts/z.ts → scripts/x.ts',
    'src/protocol/c.ts:1: cycle: import cycle: src/protocol/c.ts → src/protocol/d.ts → src/protocol/c.ts',
    'src/storage/a.ts:1: cycle: import cycle: src/storage/a.ts → src/storage/b.ts → src/storage/a.ts',
  ]);
  assert.match(run.stderr, /^tidy: 3 violations in 9 files: cycle 3 /);
}

async function layer_breaches_fail(): Promise<void> {
  const root = fixture({
    'src/storage/y.ts': lines('export const y = 1;'),
    'src/core/index.ts': lines("export * from './engine.ts';"),
    'src/core/engine.ts': lines("import { y } from '../storage/y.ts';", 'export const engine = y;'),
    'src/server/x.ts': lines("import { y } from '../storage/y.ts';", 'export const x = y;'),
    'src/server/kafka/z.ts': lines("export type { engine } from '../../core/engine.ts';"),
    'src/format/f.ts': lines("export const f = () => import('../storage/y.ts');"),
    'src/amqp/q.ts': lines('export const q = 1;'),
    'test/server.test.ts': lines("import '../src/storage/y.ts';", "import '../src/server/x.ts';"),
    // A test beside the code may build what it tests from any part.
    'src/server/x.test.ts': lines("import '../storage/y.ts';"),
  });
  const run = await tidy(root);
  assert.equal(run.code, 1);
  assert.deepEqual(located(run), [
    'src/amqp/q.ts:1: layer',
    'src/format/f.ts:1: layer',
    'src/server/kafka/z.ts:1: layer',
    'src/server/x.ts:1: layer',
  ]);
  const [unknown, , past_index, storage] = run.violations;
  assert.match(storage!, /: src\/server\/ may not import src\/storage\/ \(\.\.\/storage\/y\.ts\); it may import core,/);
  assert.match(past_index!, /: src\/server\/ may import src\/core\/ only through src\/core\/index\.ts, not /);
  assert.match(unknown!, /: src\/amqp\/ is not in the layer table/);
}

async function sizes_fail(): Promise<void> {
  const root = fixture({
    'src/storage/big.ts': lines(...Array(601).fill('// filler')),
    'src/storage/slow.ts':
      function_of('eighty_one', 81) +
      lines('export class K {', '  method(): void {', ...Array(81).fill('    // body'), '  }', '}'),
    'bench/nested.ts': lines(
      'export function outer(): () => number {',
      ...Array(5).fill('  // outer'),
      '  const inner = () => {',
      ...Array(82).fill('    // inner'),
      '    return 1;',
      '  };',
      '  return inner;',
      '}',
    ),
    'test/wide.test.ts': lines(`export const WIDE = '${'x'.repeat(101)}';`),
  });
  const run = await tidy(root);
  assert.equal(run.code, 1);
  assert.deepEqual(run.violations, [
    'bench/nested.ts:1: function-lines: outer is 93 lines (limit 80)',
    'bench/nested.ts:7: function-lines: inner is 85 lines (limit 80)',
    'src/storage/big.ts:1: file-lines: file is 601 lines (limit 600)',
    'src/storage/slow.ts:1: function-lines: eighty_one is 81 lines (limit 80)',
    'src/storage/slow.ts:83: function-lines: K.method is 83 lines (limit 80)',
    'test/wide.test.ts:1: line-length: line is 124 characters (limit 120)',
  ]);
}

async function real_clock_fails(): Promise<void> {
  const uses = lines("import { NodeFileIO } from '../storage/io.ts';", 'Date.now();', 'new NodeFileIO();');
  const root = fixture({
    'src/broker/x.ts': uses,
    'src/broker/x.test.ts': uses,
    'src/cluster/clock.ts': lines('export const clock = { now: Date.now };'),
    'src/storage/io.ts': lines('export class NodeFileIO {}', 'export const at = Date.now();', 'new NodeFileIO();'),
  });
  const run = await tidy(root);
  assert.equal(run.code, 1);
  assert.deepEqual(located(run), [
    'src/broker/x.ts:2: clock',
    'src/broker/x.ts:3: file-io',
    'src/cluster/clock.ts:1: clock',
  ]);
}

async function exceptions_checked(): Promise<void> {
  const root = fixture({
    'src/storage/wide.ts': lines(`export const WIDE = '${'x'.repeat(101)}';`),
    'exceptions.json': JSON.stringify(
      [
        { path: 'src/storage/wide.ts', rule: 'line-length', reason: 'a generated table' },
        { path: 'src/storage/gone.ts', rule: 'file-lines', reason: 'split up since' },
      ],
      null,
      2,
    ),
    'bad.json': JSON.stringify([{ path: 'src/storage/wide.ts', rule: 'line-length' }]),
  });
  const [run, bad] = await Promise.all([
    tidy(root, '--exceptions', path.join(root, 'exceptions.json')),
    tidy(root, '--exceptions', path.join(root, 'bad.json')),
  ]);
  assert.equal(run.code, 1);
  assert.deepEqual(run.violations, [
    'exceptions.json:7: stale-exception: no file-lines violation in src/storage/gone.ts any more: ' +
      'remove this exception ("split up since")',
  ]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /bad\.json:1: needs a reason/);
}

// Each case starts its own process; they run side by side.
describe('tidy', { concurrency: true }, () => {
  test('a tidy tree passes: allowed imports, sizes at their limits, the real clock in tests', tidy_tree_passes);
  test('import cycles fail once each, naming their files in order, also through import type and import()', cycles_fail);
  test('a front end importing storage, or the core past its index, fails the layer rule', layer_breaches_fail);
  test('an over-long file, function (nested ones too) and line each fail, in tests as well', sizes_fail);
  test('Date.now() and new NodeFileIO() fail in the broker, not in its tests nor in storage', real_clock_fails);
  test('exceptions excuse what they name; a stale one is reported, a malformed one refused', exceptions_checked);
});
