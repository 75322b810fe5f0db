// Reading the sources for the tidy check (scripts/tidy.ts): listing the files of the checked trees,
// parsing each with the TypeScript compiler (no type checking), and collecting what the rules look
// at: its lines, its imports, its functions with their lengths, and uses of the real clock or disk.
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import type * as TS from 'typescript';

// The compiler is loaded with require: importing its 9 MB CommonJS file as an ES module takes longer
// than the whole check. Types are written TS.Node, values ts.isIdentifier.
const ts: typeof TS = createRequire(import.meta.url)('typescript');

/** Files checked; directories named in SKIPPED_DIRS or starting with a dot are not entered. */
export const SOURCE_EXTENSIONS: readonly string[] = ['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs'];
const SKIPPED_DIRS: ReadonlySet<string> = new Set(['node_modules', 'dist']);

export interface Import {
  specifier: string;
  line: number;
  /** The relative specifier resolved against the root (undefined for packages and node: modules). */
  target?: string;
}

export interface Measured {
  name: string;
  line: number;
  lines: number;
}

export interface Source {
  path: string;
  /** Each line's text without its line break. */
  lines: string[];
  imports: Import[];
  functions: Measured[];
  /** Uses of the real clock or the real file I/O. */
  banned: { rule: 'clock' | 'file-io'; line: number; message: string }[];
}

export function to_posix(file: string): string {
  return file.split(path.sep).join('/');
}

export function list_files(root: string, trees: readonly string[]): string[] {
  const found = new Set<string>();
  const visit = (dir: string): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(path.join(root, dir), { withFileTypes: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    for (const entry of entries) {
      const child = `${dir}/${entry.name}`;
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name) && !entry.name.startsWith('.')) visit(child);
      } else if (entry.isFile() && SOURCE_EXTENSIONS.includes(path.extname(entry.name))) {
        found.add(child);
      }
    }
  };
  for (const tree of trees) visit(tree);
  return [...found].sort();
}

/** The lines as the compiler counts them (so they agree with the line numbers of the syntax tree). */
function split_lines(source: TS.SourceFile): string[] {
  const text = source.text;
  const starts = source.getLineStarts();
  const end = (i: number): number => starts[i + 1] ?? text.length;
  const lines = starts.map((start, i) => text.slice(start, end(i)).replace(/[\r\n\u2028\u2029]+$/, ''));
  if (lines.length > 0 && starts[starts.length - 1] === text.length) lines.pop(); // after the final line break
  return lines;
}

/** The module named by an import, export, `import type`, `import('…')`, `import x = require('…')`. */
function module_specifier(node: TS.Node): TS.StringLiteralLike | undefined {
  if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) {
    const specifier = node.moduleSpecifier;
    return specifier && ts.isStringLiteralLike(specifier) ? specifier : undefined;
  }
  if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
    const expression = node.moduleReference.expression;
    return ts.isStringLiteralLike(expression) ? expression : undefined;
  }
  if (ts.isCallExpression(node)) {
    const callee = node.expression;
    const dynamic = callee.kind === ts.SyntaxKind.ImportKeyword;
    const required = ts.isIdentifier(callee) && callee.text === 'require' && node.arguments.length === 1;
    const first = node.arguments[0];
    return (dynamic || required) && first && ts.isStringLiteralLike(first) ? first : undefined;
  }
  if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
    const literal = node.argument.literal;
    return ts.isStringLiteral(literal) ? literal : undefined;
  }
  return undefined;
}

type MeasuredFunction =
  | TS.FunctionDeclaration
  | TS.MethodDeclaration
  | TS.ConstructorDeclaration
  | TS.AccessorDeclaration
  | TS.FunctionExpression
  | TS.ArrowFunction;

/** Functions with a body of statements: declarations, methods, constructors, accessors, expressions. */
function is_measured(node: TS.Node): node is MeasuredFunction {
  if (ts.isArrowFunction(node)) return ts.isBlock(node.body);
  const kinds =
    ts.isFunctionDeclaration(node) ||
    ts.isMethodDeclaration(node) ||
    ts.isConstructorDeclaration(node) ||
    ts.isGetAccessorDeclaration(node) ||
    ts.isSetAccessorDeclaration(node) ||
    ts.isFunctionExpression(node);
  return kinds && node.body !== undefined;
}

function name_text(name: TS.PropertyName | TS.BindingName, source: TS.SourceFile): string {
  const plain = ts.isIdentifier(name) || ts.isPrivateIdentifier(name) || ts.isStringLiteral(name);
  return plain || ts.isNumericLiteral(name) ? name.text : name.getText(source);
}

function class_name(node: TS.ClassLikeDeclaration, source: TS.SourceFile): string {
  if (node.name) return node.name.text;
  const parent = node.parent;
  return ts.isVariableDeclaration(parent) ? name_text(parent.name, source) : '(anonymous class)';
}

function shorten(text: string, limit: number): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length <= limit ? flat : `${flat.slice(0, limit - 1)}…`;
}

/** A readable name: `Class.method`, `get Class.size`, the variable or property it is assigned to. */
function function_name(node: MeasuredFunction, source: TS.SourceFile): string {
  const parent = node.parent;
  const owner = ts.isClassLike(parent) ? `${class_name(parent, source)}.` : '';
  if (ts.isConstructorDeclaration(node)) return `${owner}constructor`;
  const own = node.name ? name_text(node.name, source) : undefined;
  if (ts.isGetAccessorDeclaration(node)) return `get ${owner}${own}`;
  if (ts.isSetAccessorDeclaration(node)) return `set ${owner}${own}`;
  if (ts.isMethodDeclaration(node)) return `${owner}${own}`;
  if (own) return own;
  if (ts.isFunctionDeclaration(node)) return 'default export function';
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) return name_text(parent.name, source);
  if (ts.isPropertyDeclaration(parent)) {
    const holder = ts.isClassLike(parent.parent) ? `${class_name(parent.parent, source)}.` : '';
    return `${holder}${name_text(parent.name, source)}`;
  }
  if (ts.isCallExpression(parent) || ts.isNewExpression(parent)) {
    const first = parent.arguments?.[0];
    const label = first && first !== node && ts.isStringLiteralLike(first) ? `'${first.text}'` : '…';
    return `callback of ${shorten(parent.expression.getText(source), 40)}(${shorten(label, 50)})`;
  }
  return ts.isArrowFunction(node) ? 'arrow function' : 'function expression';
}

function banned_use(node: TS.Node): { rule: 'clock' | 'file-io'; message: string } | undefined {
  if (
    ts.isPropertyAccessExpression(node) &&
    ts.isIdentifier(node.expression) &&
    node.expression.text === 'Date' &&
    node.name.text === 'now'
  ) {
    const called = ts.isCallExpression(node.parent) && node.parent.expression === node;
    const use = called ? 'Date.now()' : 'Date.now as a clock';
    return { rule: 'clock', message: `${use} outside the composition root: take the time from an injected clock` };
  }
  if (ts.isNewExpression(node)) {
    const callee = node.expression;
    const name = ts.isPropertyAccessExpression(callee) ? callee.name : callee;
    if (ts.isIdentifier(name) && name.text === 'NodeFileIO') {
      return { rule: 'file-io', message: 'new NodeFileIO() outside the composition root: use an injected FileIO' };
    }
  }
  return undefined;
}

export function read_source(root: string, file: string): Source {
  const text = fs.readFileSync(path.join(root, file), 'utf8');
  const kind = /\.[cm]?js$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const tree = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const source: Source = { path: file, lines: split_lines(tree), imports: [], functions: [], banned: [] };
  const line_of = (position: number): number => tree.getLineAndCharacterOfPosition(position).line + 1;
  const visit = (node: TS.Node): void => {
    const specifier = module_specifier(node);
    if (specifier) source.imports.push({ specifier: specifier.text, line: line_of(specifier.getStart(tree)) });
    if (is_measured(node)) {
      const first = line_of(node.getStart(tree));
      const last = line_of(node.getEnd());
      source.functions.push({ name: function_name(node, tree), line: first, lines: last - first + 1 });
    }
    const banned = banned_use(node);
    if (banned) source.banned.push({ ...banned, line: line_of(node.getStart(tree)) });
    ts.forEachChild(node, visit);
  };
  visit(tree);
  return source;
}

/** Where a relative specifier points: a listed file if one matches, else the path it names. */
export function resolve(importer: string, specifier: string, files: ReadonlySet<string>): string | undefined {
  if (!/^\.\.?(\/|$)/.test(specifier)) return undefined; // a package or a node: module
  const named = path.posix.normalize(path.posix.join(path.posix.dirname(importer), specifier));
  const candidates = [
    named,
    named
      .replace(/\.js$/, '.ts')
      .replace(/\.mjs$/, '.mts')
      .replace(/\.cjs$/, '.cts'),
    ...SOURCE_EXTENSIONS.map((extension) => `${named}${extension}`),
    ...SOURCE_EXTENSIONS.map((extension) => `${named}/index${extension}`),
  ];
  return candidates.find((candidate) => files.has(candidate)) ?? named;
}

export function in_tree(file: string, trees: readonly string[]): boolean {
  return trees.some((tree) => file.startsWith(`${tree}/`));
}

/** The line of each element of the array literal in `text`: a JSON file, or this script's EXCEPTIONS. */
export function element_lines(file: string, text: string): number[] {
  const json = file.endsWith('.json');
  const tree = json ? ts.parseJsonText(file, text) : ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  let array: TS.ArrayLiteralExpression | undefined;
  const visit = (node: TS.Node): void => {
    if (array) return;
    const declared = ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.name.text === 'EXCEPTIONS';
    const value = json && ts.isExpressionStatement(node) ? node.expression : declared ? node.initializer : undefined;
    if (value && ts.isArrayLiteralExpression(value)) array = value;
    else ts.forEachChild(node, visit);
  };
  visit(tree);
  const line_of = (element: TS.Node): number => tree.getLineAndCharacterOfPosition(element.getStart(tree)).line + 1;
  return array ? array.elements.map(line_of) : [];
}
