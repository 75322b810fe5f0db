// A TCP connect attempt made from inside one of the network lab's hosts: what the fault suite's
// tests use to see that a cut really drops packets (the attempt times out) and a heal restores it.
import type { NetworkLab } from '../../faults/net.ts';

/** Connects from host `from` to `address`:`port` with a time limit; 'ok', 'timeout' or the error code. */
export function connect_from(
  lab: NetworkLab,
  from: string,
  address: string,
  port: number,
  timeout_ms: number,
): Promise<{ result: string; ms: number }> {
  const script =
    `const s = require('net').connect(${port}, '${address}');` +
    `const t = Date.now(); s.setTimeout(${timeout_ms});` +
    `s.on('connect', () => { console.log('ok ' + (Date.now() - t)); process.exit(0); });` +
    `s.on('timeout', () => { console.log('timeout ' + (Date.now() - t)); process.exit(0); });` +
    `s.on('error', (e) => { console.log(e.code + ' ' + (Date.now() - t)); process.exit(0); });`;
  return new Promise((resolve, reject) => {
    const child = lab.spawn(from, process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('exit', () => {
      const [result, ms] = out.trim().split(' ');
      resolve({ result: result ?? 'no output', ms: Number(ms) });
    });
  });
}
