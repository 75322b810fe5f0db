// How the broker's HTTP listener serves the built web console: file types and cache rules,
// index.html for the console's routes, nothing from outside the build, and a hint on how to build
// the console when there is no build. Needs no browser (the console itself is in console.test.ts).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { create_console_handler } from '../src/server/http/console_static.ts';

interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** Paths that try to reach a file outside the build. */
const SNEAKY_PATHS = [
  '/../sluice-console-secret.txt',
  '/%2e%2e/sluice-console-secret.txt',
  '/assets/..%2f..%2fsluice-console-secret.txt',
  '/..%5c..%5csluice-console-secret.txt',
  '/%00',
];

describe('console files', () => {
  async function serve(dist_dir: string, work: (base: string) => Promise<void>): Promise<void> {
    const handler = create_console_handler(dist_dir);
    const server = http.createServer((request, response) => void handler(request, response));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      await work(`http://127.0.0.1:${port}`);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  }

  /** A GET with the path sent exactly as written (fetch would normalise `..`). */
  function raw_get(base: string, target: string): Promise<RawAnswer> {
    return new Promise((resolve, reject) => {
      const request = http.request(`${base}/`, { path: target }, (response) => {
        let body = '';
        response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body }));
      });
      request.on('error', reject).end();
    });
  }

  test('serves files with their types and cache rules, index.html for routes, nothing outside the build', async () => {
    const dist = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-console-dist-'));
    fs.mkdirSync(path.join(dist, 'assets'));
    fs.writeFileSync(path.join(dist, 'index.html'), '<!doctype html><title>console</title>');
    fs.writeFileSync(path.join(dist, 'assets', 'index-abc123.js'), 'console.log(1)');
    fs.writeFileSync(path.join(dist, 'assets', 'index-abc123.css'), 'body{}');
    fs.writeFileSync(path.join(os.tmpdir(), 'sluice-console-secret.txt'), 'secret');
    try {
      await serve(dist, async (base) => {
        const js = await raw_get(base, '/assets/index-abc123.js');
        assert.equal(js.status, 200);
        assert.equal(js.headers['content-type'], 'text/javascript; charset=utf-8');
        assert.match(js.headers['cache-control']!, /immutable/);
        const css = await raw_get(base, '/assets/index-abc123.css');
        assert.equal(css.headers['content-type'], 'text/css; charset=utf-8');

        for (const route of ['/', '/topics/orders', '/topics/orders.v1', '/groups?x=1']) {
          const index = await raw_get(base, route);
          assert.equal(index.status, 200, route);
          assert.equal(index.headers['content-type'], 'text/html; charset=utf-8');
          assert.equal(index.headers['cache-control'], 'no-cache');
          assert.match(index.body, /<title>console<\/title>/);
        }
        assert.equal((await raw_get(base, '/assets/missing-123.js')).status, 404);
        assert.equal((await raw_get(base, '/favicon.ico')).status, 404);

        for (const sneaky of SNEAKY_PATHS) {
          const answer = await raw_get(base, sneaky);
          assert.doesNotMatch(answer.body, /secret/, sneaky);
        }
        const post = await new Promise<number>((resolve, reject) =>
          http
            .request(`${base}/`, { method: 'POST' }, (r) => resolve(r.statusCode!))
            .on('error', reject)
            .end(),
        );
        assert.equal(post, 405);
      });
    } finally {
      fs.rmSync(dist, { recursive: true, force: true });
      fs.rmSync(path.join(os.tmpdir(), 'sluice-console-secret.txt'), { force: true });
    }
  });

  test('without a build, says how to build the console', async () => {
    await serve(path.join(os.tmpdir(), 'sluice-no-such-console-dist'), async (base) => {
      const answer = await raw_get(base, '/');
      assert.equal(answer.status, 503);
      assert.equal(answer.headers['content-type'], 'text/html; charset=utf-8');
      assert.match(answer.body, /npm run build:console/);
    });
  });
});
