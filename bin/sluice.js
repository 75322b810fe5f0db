#!/usr/bin/env node
// The command line runs the compiled JavaScript in dist/ (built by `npm run build`, and by
// `npm install` in a checkout), never a TypeScript loader.
import fs from 'node:fs';

const main = new URL('../dist/cli/main.js', import.meta.url);
if (!fs.existsSync(main)) {
  process.stderr.write('sluice: dist/ is missing; in a checkout, run `npm install` or `npm run build` first\n');
  process.exit(1);
}
await import(main.href);
