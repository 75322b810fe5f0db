// Restart time over a large data directory: fills a broker with --gib of 1 KiB messages, then
// measures the time from spawning `sluice start` to its ready line after a clean stop (SIGTERM)
// and after a crash (SIGKILL while appends are still arriving).
//   npm run bench:restart -- [--gib 10] [--partitions 8]
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { Connection, create_topic, publish } from './harness/sluice/lean_client.ts';
import { new_data_dir, start_broker_process } from '../test/support/broker_process.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const { values } = parseArgs({
  options: { gib: { type: 'string', default: '10' }, partitions: { type: 'string', default: '8' } },
});
const GIB = Number(values.gib);
const PARTITIONS = Number(values.partitions);
const PAYLOAD_BYTES = 1024;
const MESSAGES = Math.round((GIB * 2 ** 30) / PAYLOAD_BYTES);
const say = (line: string) => process.stdout.write(`${line}\n`);

/** Spawn to ready line, in milliseconds; the broker is stopped again afterwards. */
async function time_to_ready(data_dir: string): Promise<number> {
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [
      path.join(ROOT, 'bin', 'sluice.js'),
      'start',
      '--data',
      data_dir,
      '--kafka',
      '127.0.0.1:0',
      '--amqp',
      'off',
      '--http',
      'off',
      '--log-level',
      'warn',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const ready = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('not ready within 600 s')), 600_000);
    let text = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (text.includes('ready')) {
        clearTimeout(timer);
        resolve(performance.now() - started);
      }
    });
  });
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
  return ready;
}

function du_bytes(dir: string): number {
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    total += entry.isDirectory() ? du_bytes(full) : fs.statSync(full).size;
  }
  return total;
}

const data_dir = new_data_dir('restart');
try {
  const messages = MESSAGES.toLocaleString('en-US');
  say(`filling ${data_dir} with ${messages} messages of ${PAYLOAD_BYTES} B over ${PARTITIONS} partitions ...`);
  const broker = await start_broker_process({ data_dir });
  const [host, port] = [broker.bootstrap.split(':')[0]!, broker.port];
  const admin = await Connection.connect(host, port, { max_in_flight: 1 });
  await create_topic(admin, 'fill', PARTITIONS);
  admin.close();
  const fill_started = performance.now();
  const outcome = await publish({
    host,
    port,
    topic: 'fill',
    partitions: PARTITIONS,
    producers: 2,
    messages: MESSAGES,
    payload_bytes: PAYLOAD_BYTES,
    time_limit_ms: 3_600_000,
  });
  const fill_s = (performance.now() - fill_started) / 1000;
  say(`filled in ${fill_s.toFixed(1)} s (${outcome.acknowledged.toLocaleString('en-US')} acknowledged)`);
  await broker.stop();
  say(`data directory: ${(du_bytes(data_dir) / 2 ** 30).toFixed(2)} GiB`);

  const clean = await time_to_ready(data_dir);
  say(`restart after a clean stop: ${clean.toFixed(0)} ms to ready`);

  // A crash: appends in flight, then SIGKILL; recovery checks what was written after the last checkpoint.
  const again = await start_broker_process({ data_dir });
  const crashing = publish({
    host,
    port: again.port,
    topic: 'fill',
    partitions: PARTITIONS,
    producers: 1,
    messages: 2_000_000,
    payload_bytes: PAYLOAD_BYTES,
    time_limit_ms: 3_000,
  }).catch(() => undefined);
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  await again.kill();
  await crashing;
  const crashed = await time_to_ready(data_dir);
  say(`restart after a crash (SIGKILL under load): ${crashed.toFixed(0)} ms to ready`);
  const settled = await time_to_ready(data_dir);
  say(`restart after that (clean stop): ${settled.toFixed(0)} ms to ready`);
} finally {
  fs.rmSync(data_dir, { recursive: true, force: true });
}
