// Hash routing: `#/topics/orders?partition=1` picks a page by its path pattern. The broker serves
// the same index.html for every path, so deep links work with or without the hash.
import { error_box, h, loading, replace } from './dom.ts';

export interface View {
  /** The element the page renders into; emptied on every navigation. */
  root: HTMLElement;
  params: Record<string, string>;
  query: URLSearchParams;
  /** Aborted when the user leaves the page: stops polls and requests in flight. */
  signal: AbortSignal;
}

export type PageRender = (view: View) => Promise<void> | void;

interface Route {
  pattern: RegExp;
  names: string[];
  render: PageRender;
  section: string;
  title: string;
}

const routes: Route[] = [];

/**
 * Registers a page for a path such as `/topics/:name`; `section` highlights its nav entry and
 * `title` heads the page while it loads or when it fails.
 */
export function route(path: string, section: string, title: string, render: PageRender): void {
  const names: string[] = [];
  const source = path.replace(/:([a-z_]+)/g, (_, name: string) => {
    names.push(name);
    return '([^/]+)';
  });
  routes.push({ pattern: new RegExp(`^${source}$`), names, render, section, title });
}

/** A URL inside the console, with its query (undefined values are left out). */
export function href(path: string, query: Record<string, string | number | undefined> = {}): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) search.set(name, String(value));
  const text = search.toString();
  return `#${path}${text === '' ? '' : `?${text}`}`;
}

export const path_segment = encodeURIComponent;

function current(): { path: string; query: URLSearchParams } {
  const hash = location.hash.replace(/^#/, '');
  const [path = '', search = ''] = hash.split('?', 2);
  // Without a hash, a deep link's own path names the page (`/topics/orders`).
  const effective = path === '' ? location.pathname : path;
  return { path: effective === '' ? '/' : effective, query: new URLSearchParams(search) };
}

/** A path segment as the user meant it; a malformed escape is taken literally. */
function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

let active: AbortController | null = null;

export async function render_current(outlet: HTMLElement, on_section: (section: string) => void): Promise<void> {
  active?.abort();
  const controller = new AbortController();
  active = controller;
  const { path, query } = current();
  const match = routes.map((r) => ({ r, m: r.pattern.exec(path) })).find((x) => x.m !== null);
  // data-state tells tests (and anyone scripting the console) when the page has settled.
  const root = h('section', { class: 'page', testid: 'page', 'data-path': path, 'data-state': 'loading' });
  replace(outlet, root);
  if (!match) {
    on_section('');
    replace(
      root,
      h('header', { class: 'page-header' }, h('h1', {}, 'Page not found')),
      h(
        'div',
        { class: 'error', testid: 'error', role: 'alert' },
        h('strong', {}, 'No such page'),
        `: nothing lives at ${path}. `,
        h('a', { href: '#/' }, 'Back to the overview'),
      ),
    );
    root.dataset.state = 'error';
    return;
  }
  on_section(match.r.section);
  const params: Record<string, string> = {};
  match.r.names.forEach((name, i) => {
    params[name] = decode(match.m![i + 1]!);
  });
  const header = () => h('header', { class: 'page-header' }, h('h1', {}, match.r.title));
  replace(root, header(), loading());
  try {
    await match.r.render({ root, params, query, signal: controller.signal });
    root.dataset.state = 'ready';
  } catch (error) {
    if (controller.signal.aborted) return;
    replace(root, header(), error_box(error, 'This page could not be loaded'));
    root.dataset.state = 'error';
  }
}
