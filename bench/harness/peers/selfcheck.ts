// Self-check of the peer drivers: for each peer system, start it, run every workload once at a
// small size, print the figures, stop it. Not a benchmark (sizes are tiny); it shows that each
// driver works end to end and that the server processes are found and cleaned up.
//
//   node --import tsx bench/harness/peers/selfcheck.ts [--only id,id] [--workdir DIR]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { LatencyResult, SystemUnderTest, ThroughputResult } from '../types.ts';
import { pid_alive } from './server.ts';
import { peer_systems, split_available } from './index.ts';

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    workdir: { type: 'string' },
  },
  strict: true,
});

const MESSAGES = 20_000;
const PAYLOAD = 100;
const TIME_LIMIT_MS = 120_000;
const LATENCY_RATE = 1000;
const LATENCY_DURATION_MS = 2000;

function throughput_line(name: string, r: ThroughputResult): string {
  const rate = r.elapsed_ms > 0 ? (r.messages * 1000) / r.elapsed_ms : 0;
  const mbps = r.elapsed_ms > 0 ? r.bytes / 1000 / r.elapsed_ms : 0;
  return (
    `  ${name.padEnd(16)} ${String(r.messages).padStart(7)} msgs  ${r.elapsed_ms.toFixed(0).padStart(7)} ms  ` +
    `${rate.toFixed(0).padStart(8)} msg/s  ${mbps.toFixed(2).padStart(6)} MB/s${r.truncated ? '  (truncated)' : ''}`
  );
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index]!;
}

function latency_line(r: LatencyResult): string {
  const sorted = Float64Array.from(r.samples_ms).sort();
  const f = (v: number) => v.toFixed(2);
  return (
    `  ${'latency'.padEnd(16)} sent ${r.sent}, received ${r.received}; ` +
    `ms p50 ${f(percentile(sorted, 50))}  p90 ${f(percentile(sorted, 90))}  p99 ${f(percentile(sorted, 99))}  ` +
    `max ${f(sorted[sorted.length - 1] ?? NaN)}`
  );
}

function pid_line(system: SystemUnderTest): string {
  const pids = system.server_pids();
  const names = pids.map((pid) => {
    let comm = '?';
    try {
      comm = fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
    } catch {
      /* gone */
    }
    return `${pid} (${comm})`;
  });
  return `  server pids: ${names.join(', ') || 'none'}`;
}

async function check(system: SystemUnderTest, workdir: string): Promise<boolean> {
  console.log(`\n== ${system.id}: ${system.label}`);
  console.log(`  client: ${system.client}`);
  console.log(`  durability: ${system.durability} — ${system.durability_detail}`);
  const params = {
    messages: MESSAGES,
    payload_bytes: PAYLOAD,
    partitions: 1,
    producers: 1,
    time_limit_ms: TIME_LIMIT_MS,
  };
  const none = () => undefined;
  let ok = true;
  const t0 = performance.now();
  try {
    await system.start(workdir);
    console.log(`  started in ${(performance.now() - t0).toFixed(0)} ms`);
    console.log(pid_line(system));
    console.log(throughput_line('publish', await system.publish(params, none)));
    console.log(throughput_line('publish_consume', await system.publish_consume(params, none)));
    console.log(
      latency_line(
        await system.latency({ rate_per_s: LATENCY_RATE, duration_ms: LATENCY_DURATION_MS, payload_bytes: PAYLOAD }),
      ),
    );
    console.log(throughput_line('drain', await system.drain(params, none)));
  } catch (error) {
    ok = false;
    console.log(`  FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  } finally {
    const pids = system.server_pids();
    await system.stop();
    const left = pids.filter(pid_alive);
    console.log(`  stopped; ${left.length === 0 ? 'no server process left' : `still running: ${left.join(', ')}`}`);
    if (left.length > 0) ok = false;
  }
  return ok;
}

async function main(): Promise<number> {
  const only = values.only
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const workdir = values.workdir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-peers-'));
  const systems = await peer_systems(only);
  const { available, unavailable } = split_available(systems);
  for (const u of unavailable) console.log(`\n== ${u.id}: unavailable — ${u.reason}`);
  let failures = 0;
  for (const system of available) if (!(await check(system, workdir))) failures++;
  if (!values.workdir) fs.rmSync(workdir, { recursive: true, force: true });
  console.log(`\n${available.length - failures} passed, ${failures + unavailable.length} failed`);
  return failures + unavailable.length === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
