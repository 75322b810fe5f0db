// Serves the web console (console/dist, built by `npm run build:console`) on the HTTP listener for
// every GET outside /api. Files are read from disk on each request: the build can be redone while
// the broker runs. Paths that name no file get index.html, so deep links reach the console's router.
import type { IncomingMessage, ServerResponse } from 'node:http';
import fs from 'node:fs/promises';
import path from 'node:path';

const DEFAULT_DIST_DIR = path.resolve(import.meta.dirname, '..', '..', '..', 'console', 'dist');

/** Hashed file names change with their content, so browsers may keep them for good. */
const HASHED_ASSET_CACHE = 'public, max-age=31536000, immutable';
/** index.html names the current hashed assets: always revalidated. */
const ENTRY_CACHE = 'no-cache';
const ASSETS_PREFIX = '/assets/';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff': 'font/woff',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  // The console loads only its own scripts and talks only to this listener; uPlot sizes its
  // elements through inline styles.
  'content-security-policy':
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'; base-uri " +
    "'none'; form-action 'self'",
};

const NOT_BUILT_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sluice console not built</title>
<style>
body{font-family:system-ui,sans-serif;max-width:40rem;margin:4rem auto;padding:0 1rem;color:#1d2433}
code{background:#f2f4f7;padding:2px 5px;border-radius:4px}
</style></head>
<body><h1>The Sluice console is not built</h1>
<p>The broker is running and its admin API answers under <code>/api/v1/</code>, but the web console's files
(<code>console/dist</code>) are missing.</p>
<p>Build them from the project's checkout with <code>npm run build:console</code> (or <code>npm install</code>, which
builds the console too), then reload this page. The broker does not need a restart.</p>
</body></html>
`;

export type ConsoleHandler = (request: IncomingMessage, response: ServerResponse) => Promise<void>;

function send(
  response: ServerResponse,
  request: IncomingMessage,
  status: number,
  body: Buffer | string,
  headers: Record<string, string | number>,
): void {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  response.writeHead(status, { ...SECURITY_HEADERS, ...headers, 'content-length': bytes.length });
  response.end(request.method === 'HEAD' ? undefined : bytes);
}

function text(response: ServerResponse, request: IncomingMessage, status: number, message: string): void {
  send(response, request, status, `${message}\n`, {
    'content-type': 'text/plain; charset=utf-8',
    'cache-control': 'no-store',
  });
}

async function read_file(file: string): Promise<Buffer | null> {
  try {
    const stat = await fs.stat(file);
    return stat.isFile() ? await fs.readFile(file) : null;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return null;
    throw error;
  }
}

/** A handler serving the files of `dist_dir` (the built console by default). */
export function create_console_handler(dist_dir = DEFAULT_DIST_DIR): ConsoleHandler {
  const root = path.resolve(dist_dir);
  return async (request, response) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.setHeader('allow', 'GET, HEAD');
      text(response, request, 405, 'method not allowed');
      return;
    }
    let pathname: string;
    try {
      pathname = decodeURIComponent(new URL(request.url ?? '/', 'http://console.invalid').pathname);
    } catch {
      text(response, request, 400, 'bad path');
      return;
    }
    if (pathname.includes('\0')) {
      text(response, request, 400, 'bad path');
      return;
    }
    // Resolved against the root and checked to stay inside it: `..` and encoded slashes cannot
    // reach other files.
    const file = path.resolve(root, `.${path.posix.normalize(pathname)}`);
    if (file !== root && !file.startsWith(root + path.sep)) {
      text(response, request, 404, 'not found');
      return;
    }
    const body = file === root ? null : await read_file(file);
    if (body) {
      const hashed = pathname.startsWith(ASSETS_PREFIX);
      send(response, request, 200, body, {
        'content-type': CONTENT_TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream',
        'cache-control': hashed ? HASHED_ASSET_CACHE : ENTRY_CACHE,
      });
      return;
    }
    // A missing asset is a 404: answering it with index.html would hand a script tag HTML. Other
    // dotted names (a topic called orders.v1) are client routes.
    if (pathname.startsWith(ASSETS_PREFIX) || path.extname(pathname).toLowerCase() in CONTENT_TYPES) {
      text(response, request, 404, 'not found');
      return;
    }
    const index = await read_file(path.join(root, 'index.html'));
    if (!index) {
      send(response, request, 503, NOT_BUILT_PAGE, {
        'content-type': 'text/html; charset=utf-8',
        'cache-control': 'no-store',
      });
      return;
    }
    send(response, request, 200, index, { 'content-type': 'text/html; charset=utf-8', 'cache-control': ENTRY_CACHE });
  };
}

/** The console as the HTTP listener serves it. */
export const console_handler: ConsoleHandler = create_console_handler();
