// Self-check of the Sluice systems under test: runs each workload once per system and prints
// throughput, the broker's CPU per message (from /proc/<pid>/stat) and the driver's own CPU per
// message (this process and the kcat children it has reaped), and latency percentiles.
//
//   node --import tsx bench/harness/sluice/selfcheck.ts [--only ID,ID] [--scale F] [--profile DIR]
//
//   --only     system ids (default: all five Sluice systems)
//   --scale    multiplies every message count (default 1)
//   --profile  run brokers with --cpu-prof into DIR and print a summary of each profile
//   --time-limit S   per workload (default 120)
// MB is 10^6 bytes of payload.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { PublishParams, SystemUnderTest, ThroughputResult } from '../types.ts';
import { summarize } from './profile_summary.ts';
import { sluice_systems, sluice_unavailable } from './index.ts';

const { values: args } = parseArgs({
  options: {
    only: { type: 'string' },
    scale: { type: 'string', default: '1' },
    profile: { type: 'string' },
    'time-limit': { type: 'string', default: '120' },
  },
  strict: true,
});

const SCALE = Number(args.scale);
const TIME_LIMIT_MS = Number(args['time-limit']) * 1000;
if (!(SCALE > 0) || !(TIME_LIMIT_MS > 0)) throw new Error('--scale and --time-limit must be positive numbers');
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

const count = (n: number) => Math.max(1, Math.round(n * SCALE));

/** utime+stime (and optionally the reaped children's) of a process, in seconds. */
function cpu_seconds(pid: number | 'self', with_children = false): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may contain spaces) start at field 3 (state).
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]) + (with_children ? Number(fields[13]) + Number(fields[14]) : 0);
  return ticks / CLK_TCK;
}

function broker_cpu(system: SystemUnderTest): number {
  return system.server_pids().reduce((sum, pid) => sum + cpu_seconds(pid), 0);
}

const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

function throughput_line(name: string, r: ThroughputResult, broker_s: number, client_s: number): string {
  const rate = (r.messages / r.elapsed_ms) * 1000;
  const mb = r.bytes / r.elapsed_ms / 1000;
  const per = (s: number) => (r.messages > 0 ? fmt((s * 1e6) / r.messages, 2) : 'n/a');
  return (
    `  ${name.padEnd(34)} ${fmt(r.messages).padStart(9)} msgs ${fmt(r.elapsed_ms).padStart(7)} ms ` +
    `${fmt(rate).padStart(10)} msg/s ${fmt(mb, 1).padStart(7)} MB/s` +
    `   broker ${fmt(broker_s, 2).padStart(5)} s CPU = ${per(broker_s).padStart(5)} µs/msg` +
    `   client ${per(client_s).padStart(5)} µs/msg${r.truncated ? '   TRUNCATED' : ''}`
  );
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function throughput(
  system: SystemUnderTest,
  name: string,
  run: (progress: (n: number) => void) => Promise<ThroughputResult>,
): Promise<void> {
  const broker_before = broker_cpu(system);
  const client_before = cpu_seconds('self', true);
  try {
    const r = await run(() => undefined);
    console.log(
      throughput_line(name, r, broker_cpu(system) - broker_before, cpu_seconds('self', true) - client_before),
    );
  } catch (error) {
    console.log(`  ${name.padEnd(34)} FAILED: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function params(messages: number, payload_bytes: number): PublishParams {
  return { messages: count(messages), payload_bytes, partitions: 1, producers: 1, time_limit_ms: TIME_LIMIT_MS };
}

async function check(system: SystemUnderTest, workdir: string): Promise<void> {
  console.log(
    `\n${system.id} — ${system.label}\n  client: ${system.client}\n` +
      `  durability: ${system.durability} (${system.durability_detail})`,
  );
  await system.start(workdir);
  try {
    console.log(`  broker pid ${system.server_pids().join(',')}`);
    await throughput(system, 'publish 100 B', () => system.publish(params(1_000_000, 100), () => undefined));
    await throughput(system, 'publish 1 KiB', () => system.publish(params(200_000, 1024), () => undefined));
    await throughput(system, 'publish_consume 100 B', () =>
      system.publish_consume(params(200_000, 100), () => undefined),
    );
    try {
      const rate = 5_000;
      const r = await system.latency({
        rate_per_s: rate,
        duration_ms: Math.max(1000, Math.round(5_000 * SCALE)),
        payload_bytes: 100,
      });
      const sorted = Float64Array.from(r.samples_ms).sort();
      const p = (q: number) => fmt(percentile(sorted, q), 2);
      console.log(
        `  ${'latency 5,000 msg/s, 100 B'.padEnd(34)} sent ${fmt(r.sent)} received ${fmt(r.received)}` +
          `   p50 ${p(50)} ms  p99 ${p(99)} ms  p99.9 ${p(99.9)} ms` +
          `  max ${fmt(sorted[sorted.length - 1] ?? NaN, 2)} ms`,
      );
    } catch (error) {
      console.log(
        `  ${'latency 5,000 msg/s, 100 B'.padEnd(34)} n/a: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    await throughput(system, 'drain 100 B (consume timed)', () =>
      system.drain(params(1_000_000, 100), () => undefined),
    );
  } finally {
    await system.stop();
  }
}

async function main(): Promise<void> {
  const profile_dir = args.profile ? path.resolve(args.profile) : null;
  if (profile_dir) fs.mkdirSync(profile_dir, { recursive: true });
  const options = profile_dir ? { broker_node_args: ['--cpu-prof', `--cpu-prof-dir=${profile_dir}`] } : {};
  const only = args.only ? new Set(args.only.split(',')) : null;
  const systems = sluice_systems(options).filter((s) => !only || only.has(s.id));
  const unavailable = new Map(sluice_unavailable(options).map((u) => [u.id, u.reason]));
  const workdir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-selfcheck-'));
  let current: SystemUnderTest | null = null;
  const interrupted = () => {
    console.error('interrupted: stopping the broker');
    void (current?.stop() ?? Promise.resolve()).finally(() => {
      fs.rmSync(workdir, { recursive: true, force: true });
      process.exit(130);
    });
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  console.log(
    `Sluice self-check: node ${process.version}, ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}), ` +
      `scale ${SCALE}, workdir ${workdir}`,
  );
  try {
    for (const system of systems) {
      const reason = unavailable.get(system.id);
      if (reason) {
        console.log(`\n${system.id}: unavailable: ${reason}`);
        continue;
      }
      current = system;
      const profiles_before = profile_dir ? new Set(fs.readdirSync(profile_dir)) : new Set<string>();
      try {
        await check(system, workdir);
      } catch (error) {
        console.log(
          `  ${system.id} FAILED: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
        );
      }
      current = null;
      if (profile_dir) {
        // The broker's main thread writes the first profile of the process (…​.0.001.cpuprofile).
        for (const file of fs
          .readdirSync(profile_dir)
          .filter((f) => !profiles_before.has(f) && /\.0\.001\.cpuprofile$/.test(f))) {
          fs.renameSync(path.join(profile_dir, file), path.join(profile_dir, `${system.id}.${file}`));
          console.log(summarize(path.join(profile_dir, `${system.id}.${file}`), 15).replace(/^/gm, '    '));
        }
      }
    }
  } finally {
    fs.rmSync(workdir, { recursive: true, force: true });
  }
}

await main();
