// A few DOM helpers instead of a framework: the console renders small tables and lists, and
// building elements directly keeps the bundle tiny and every text node escaped.
import { ApiError, type Headers, type Payload } from './api.ts';

/** Anything a page can put in an element; nested lists are flattened. */
export type Child = Node | string | number | null | undefined | false | Child[];
type Attrs = Record<string, string | number | boolean | EventListener | null | undefined>;

/** Creates an element; `on*` attributes become listeners, `testid` becomes data-testid. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') element.addEventListener(name.slice(2), value);
    else if (name === 'testid') element.dataset.testid = String(value);
    else if (name === 'class') element.className = String(value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    if (Array.isArray(child)) append(parent, child);
    else parent.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren();
  append(parent, children);
}

export const link = (href: string, text: Child, attrs: Attrs = {}) => h('a', { href, ...attrs }, text);

export function loading(what = 'Loading'): HTMLElement {
  return h('div', { class: 'loading', testid: 'loading', role: 'status' }, `${what}…`);
}

/** An error as the page shows it: what failed, the API's code and message. */
export function error_box(error: unknown, context?: string): HTMLElement {
  const detail =
    error instanceof ApiError
      ? [
          h('strong', {}, context ?? 'The request failed'),
          ': ',
          error.message,
          h(
            'span',
            { class: 'muted' },
            ` (${error.status === 0 ? error.code : `${error.status} ${error.code}`}, ${error.path})`,
          ),
        ]
      : [
          h('strong', {}, context ?? 'Something went wrong'),
          ': ',
          error instanceof Error ? error.message : String(error),
        ];
  return h('div', { class: 'error', testid: 'error', role: 'alert' }, ...detail);
}

export interface Column<T> {
  title: string;
  cell: (row: T) => Child;
  numeric?: boolean;
  testid?: string;
}

/** A table; `row_attrs` gives each row its test id and data attributes. */
export function table<T>(
  columns: Column<T>[],
  rows: T[],
  options: { testid: string; empty: string; row_attrs?: (row: T) => Attrs },
): HTMLElement {
  if (rows.length === 0) return h('p', { class: 'empty', testid: `${options.testid}-empty` }, options.empty);
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { testid: options.testid },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          columns.map((c) => h('th', { class: c.numeric ? 'num' : null }, c.title)),
        ),
      ),
      h(
        'tbody',
        {},
        rows.map((row) =>
          h(
            'tr',
            options.row_attrs?.(row) ?? {},
            columns.map((c) => h('td', { class: c.numeric ? 'num' : null, testid: c.testid }, c.cell(row))),
          ),
        ),
      ),
    ),
  );
}

/** A row of labelled figures (the cards at the top of a page). */
export function stats(items: Array<{ label: string; value: Child; testid?: string }>): HTMLElement {
  return h(
    'div',
    { class: 'stats' },
    items.map((item) =>
      h(
        'div',
        { class: 'stat' },
        h('div', { class: 'stat-value', testid: item.testid }, item.value),
        h('div', { class: 'stat-label' }, item.label),
      ),
    ),
  );
}

export function page_header(title: string, ...extra: Child[]): HTMLElement {
  return h('header', { class: 'page-header' }, h('h1', { testid: 'page-title' }, title), ...extra);
}

const integer = new Intl.NumberFormat('en-US');
const decimal = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });

export const fmt = {
  int: (n: number | null | undefined) =>
    n === null || n === undefined || !Number.isFinite(n) ? '–' : integer.format(n),
  rate: (n: number) => decimal.format(n),
  bytes(n: number | null | undefined): string {
    if (n === null || n === undefined || !Number.isFinite(n)) return '–';
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let value = n;
    let unit = 0;
    while (value >= 1024 && unit < units.length - 1) {
      value /= 1024;
      unit++;
    }
    return `${unit === 0 ? value : decimal.format(value)} ${units[unit]}`;
  },
  time: (ms: number) =>
    Number.isFinite(ms) && ms >= 0 ? new Date(ms).toISOString().replace('T', ' ').replace('Z', '') : '–',
};

/** A key, value or header as text: strings as they are, binary as a marked base64 string. */
export function payload(value: Payload | undefined, kind: 'key' | 'value' = 'value'): HTMLElement {
  if (value === null || value === undefined) return h('span', { class: 'muted' }, 'null');
  const text = typeof value === 'string' ? value : value.base64;
  const title = kind === 'key' ? text : null;
  if (typeof value === 'string') return h('span', { class: `payload ${kind}`, title }, value);
  return h(
    'span',
    { class: `payload ${kind} binary`, title: title ?? 'binary, shown as base64' },
    h('span', { class: 'tag' }, 'base64'),
    ' ',
    text,
  );
}

/** Headers in either shape the API may use (object or list of pairs), as name and value pairs. */
export function header_pairs(headers: Headers | null | undefined): Array<[string, Payload]> {
  if (!headers) return [];
  if (Array.isArray(headers)) return headers.map((pair) => [pair.key, pair.value]);
  return Object.entries(headers);
}

/** Headers one per line, `name: value`; `skip` leaves out names the page shows elsewhere. */
export function headers_cell(
  headers: Headers | null | undefined,
  skip: (name: string) => boolean = () => false,
): HTMLElement[] {
  return header_pairs(headers)
    .filter(([name]) => !skip(name))
    .map(([name, value]) =>
      h('div', { class: 'header' }, h('span', { class: 'header-name' }, name), ': ', payload(value)),
    );
}

/** Rows per page of the group, queue and dead-letter lists. */
export const LIST_PAGE_SIZE = 100;

/** "1–50 of 120" with previous and next links for a paged list. */
export function list_pager(
  page: { total: number; offset: number; items: unknown[] },
  page_size: number,
  to: (offset: number) => string,
  noun: string,
): HTMLElement {
  const last = Math.min(page.total, page.offset + page.items.length);
  return h(
    'nav',
    { class: 'pager' },
    h(
      'span',
      { class: 'muted', testid: 'list-range' },
      page.total === 0
        ? `No ${noun}`
        : `${fmt.int(page.offset + 1)}–${fmt.int(last)} of ${fmt.int(page.total)} ${noun}`,
    ),
    page.offset > 0
      ? link(to(Math.max(0, page.offset - page_size)), '← Previous', { class: 'button', testid: 'page-prev' })
      : null,
    last < page.total ? link(to(page.offset + page_size), 'Next →', { class: 'button', testid: 'page-next' }) : null,
  );
}

/** The `offset` query parameter of a paged list (0 when absent or not a number). */
export const list_offset = (query: URLSearchParams) => Math.max(0, Math.floor(Number(query.get('offset'))) || 0);
