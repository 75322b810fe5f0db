// How tests start the command line: the TypeScript sources through tsx, so that a test always runs
// the code as it is now (bin/sluice.js runs the compiled dist/, which test/package.test.ts checks).
import path from 'node:path';

const MAIN = path.resolve(import.meta.dirname, '..', '..', 'src', 'cli', 'main.ts');

/** Arguments before the command's own for `spawn(process.execPath, [...SLUICE_CLI, ...args])`. */
export const SLUICE_CLI: readonly string[] = ['--import', import.meta.resolve('tsx'), MAIN];
