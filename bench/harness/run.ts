// The side-by-side benchmark: `npm run bench` or `sluice bench`. Measures the machine's limits,
// then runs every system (Sluice under each durability policy and client, and the peer brokers)
// through the same workloads, one system at a time, sampling the broker's CPU and memory. Writes
// results.json, report.md and chart.svg, and prints the report. Not a test: it prints figures.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { spawn } from 'node:child_process';
import cliProgress from 'cli-progress';
import type { SystemUnderTest, Unavailable } from './types.ts';
import { disk_limit, loopback_mb_per_s, machine_facts } from './machine.ts';
import { profile, SLUICE_MAIN, WORKLOADS, type Profile, type Step } from './profiles.ts';
import { type Report, markdown, svg_chart } from './report.ts';
import { all_systems } from './registry.ts';
import { run_step } from './step.ts';
import { check_targets } from './targets.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');

/** Time from spawning `sluice start` on an existing empty data dir to its ready line. */
async function cold_start_ms(workdir: string): Promise<number> {
  const data = fs.mkdtempSync(path.join(workdir, 'cold-'));
  const started = performance.now();
  const child = spawn(
    process.execPath,
    [
      path.join(ROOT, 'bin', 'sluice.js'),
      'start',
      '--data',
      data,
      '--kafka',
      '127.0.0.1:0',
      '--amqp',
      'off',
      '--http',
      'off',
      '--log-level',
      'warn',
    ],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  try {
    return await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no ready line within 20 s')), 20_000);
      let output = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('ready')) {
          clearTimeout(timer);
          resolve(performance.now() - started);
        }
      });
    });
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
  }
}

interface Options {
  profile_name: string;
  plan: Profile;
  started_at: string;
  out_dir: string;
  workdir: string;
  wanted: string[] | undefined;
  broker_node_args: string[] | undefined;
}

const USAGE = `usage: npm run bench -- [options]
  --profile smoke|standard|full   run length and workloads (default standard)
  --scale F                       multiply every message count (default 1)
  --systems id,id                 only these systems (e.g. sluice-lean-fsync,rabbitmq-quorum)
  --workloads a,b                 only these of the profile's workloads:
                                  ${WORKLOADS.join(', ')}
  --out DIR                       where the report goes (default bench-results/<time>)
  --workdir DIR                   where brokers keep their data (default the system's temp folder)
  --broker-node-args "..."        extra node arguments for Sluice's broker process`;

/** A mistake on the command line: said in one line with the usage, without a stack. */
class UsageError extends Error {}

/** The command line: the profile (with --scale and --workloads applied), where to write, which systems. */
function read_options(): Options {
  const { values } = parse_command_line();
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const profile_name = values.profile!;
  if (!['smoke', 'standard', 'full'].includes(profile_name))
    throw new UsageError(`--profile: smoke, standard or full, not ${profile_name}`);
  const scale = Number(values.scale);
  if (!(scale > 0)) throw new UsageError(`--scale: a number above 0, not ${values.scale}`);
  const plan = profile(profile_name, scale);
  const workloads = values.workloads?.split(',').map((w) => w.trim());
  const unknown = workloads?.filter((w) => !(WORKLOADS as readonly string[]).includes(w));
  if (unknown && unknown.length > 0) throw new UsageError(`--workloads: no workload ${unknown.join(', ')}`);
  if (workloads) {
    const keep = (step: Step) => workloads.includes(step.workload);
    plan.common = plan.common.filter(keep);
    plan.sluice_extra = plan.sluice_extra.filter(keep);
  }
  const started_at = new Date().toISOString();
  const out_dir = path.resolve(values.out ?? path.join(ROOT, 'bench-results', started_at.replace(/[:.]/g, '-')));
  const workdir = fs.mkdtempSync(path.join(values.workdir ?? os.tmpdir(), 'sluice-bench-'));
  fs.mkdirSync(out_dir, { recursive: true });
  const wanted = values.systems?.split(',').map((s) => s.trim());
  const broker_node_args = values['broker-node-args']?.split(' ').filter((arg) => arg !== '');
  return { profile_name, plan, started_at, out_dir, workdir, wanted, broker_node_args };
}

function parse_command_line() {
  try {
    return parseArgs({
      options: {
        help: { type: 'boolean', short: 'h' },
        profile: { type: 'string', default: 'standard' },
        scale: { type: 'string', default: '1' },
        systems: { type: 'string' },
        out: { type: 'string' },
        workdir: { type: 'string' },
        workloads: { type: 'string' },
        'broker-node-args': { type: 'string' },
      },
    });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

const say = (line: string) => process.stderr.write(`${line}\n`);

/** A line under the progress bars (or on its own when stderr is not a terminal). */
function log(bars: cliProgress.MultiBar, line: string): void {
  if (process.stderr.isTTY) bars.log(`${line}\n`);
  else say(line);
}

/** The machine's limits and the systems to run, as a report with no results yet. */
async function new_report(options: Options): Promise<{ report: Report; systems: SystemUnderTest[] }> {
  const { plan, workdir, profile_name } = options;
  say("measuring the machine: fsync'd disk writes, loopback TCP ...");
  const each = disk_limit(workdir, plan.disk_probe_bytes / 4, 16 * 1024, 1);
  const per_mib = disk_limit(workdir, plan.disk_probe_bytes, 16 * 1024, 64);
  const loopback = await loopback_mb_per_s(profile_name === 'smoke' ? 300 : 1500);
  const cold = await cold_start_ms(workdir).catch(() => null);
  const candidates = await all_systems({ broker_node_args: options.broker_node_args });
  const unavailable: Unavailable[] = [];
  const systems: SystemUnderTest[] = [];
  for (const candidate of candidates) {
    if (options.wanted && !options.wanted.includes(candidate.id)) continue;
    if ('reason' in candidate) unavailable.push(candidate);
    else systems.push(candidate);
  }
  const report: Report = {
    started_at: options.started_at,
    command: `npm run bench -- ${process.argv.slice(2).join(' ')}`.trim(),
    profile: profile_name,
    machine: { ...machine_facts(workdir) },
    limits: {
      disk_16k_each_mb_s: each.mb_per_s,
      disk_1m_per_fsync_mb_s: per_mib.mb_per_s,
      fsyncs_per_s: each.fsyncs_per_s,
      loopback_mb_s: loopback,
    },
    cold_start_ms: cold,
    unavailable,
    results: [],
    targets: [],
  };
  return { report, systems };
}

/** Workloads only some systems drive (their SystemUnderTest method is optional), and what is missing. */
const OPTIONAL_WORKLOADS: Partial<
  Record<Step['workload'], { method: 'queue' | 'publish_single' | 'drain_each'; driver: string }>
> = {
  queue: { method: 'queue', driver: 'queue' },
  publish_single: { method: 'publish_single', driver: 'one-message-per-send' },
  drain_each: { method: 'drain_each', driver: 'per-message consumer' },
};

/** Starts a system, runs its steps (results.json rewritten after each), stops it. */
async function run_system(system: SystemUnderTest, options: Options, report: Report, bars: cliProgress.MultiBar) {
  const { plan } = options;
  const steps = system.id === SLUICE_MAIN ? [...plan.common, ...plan.sluice_extra] : plan.common;
  const dir = fs.mkdtempSync(path.join(options.workdir, `${system.id}-`));
  try {
    await system.start(dir);
  } catch (error) {
    report.unavailable.push({
      id: system.id,
      label: system.label,
      reason: `did not start: ${error instanceof Error ? error.message : String(error)}`,
    });
    return;
  }
  try {
    for (const step of steps) {
      const optional = OPTIONAL_WORKLOADS[step.workload];
      if (optional && !system[optional.method]) {
        log(bars, `${system.id} ${step.workload}: – (no ${optional.driver} driver for this system)`);
        continue;
      }
      const result = await run_step(system, step, plan.time_limit_ms, bars);
      report.results.push(result);
      const consumers = step.consumers !== undefined ? ` x${step.consumers}c` : '';
      const figures = result.error
        ? `n/a (${result.error})`
        : result.latency
          ? `p50 ${result.latency.p50_ms.toFixed(2)} ms p99 ${result.latency.p99_ms.toFixed(2)} ms`
          : `${Math.round(result.msgs_per_s).toLocaleString('en-US')} msg/s, ` +
            `client ${result.client_cpu_us_per_msg.toFixed(2)} µs/msg`;
      const shape = `${step.payload_bytes} B x${step.partitions}p x${step.producers}${consumers}`;
      log(bars, `${system.id} ${step.workload} ${shape}: ${figures}`);
      fs.writeFileSync(path.join(options.out_dir, 'results.json'), JSON.stringify(report, null, 1));
    }
  } finally {
    await system.stop().catch(() => undefined);
  }
}

async function main(): Promise<void> {
  const options = read_options();
  const { out_dir } = options;
  try {
    say(`sluice bench: profile ${options.profile_name}, results in ${out_dir}`);
    const { report, systems } = await new_report(options);
    const bars = new cliProgress.MultiBar(
      {
        format: '{title} {bar} {percentage}% {value}/{total}',
        hideCursor: true,
        clearOnComplete: true,
        stream: process.stderr,
      },
      cliProgress.Presets.shades_classic,
    );
    for (const system of systems) await run_system(system, options, report, bars);
    bars.stop();
    report.targets = check_targets(report);
    const text = markdown(report);
    fs.writeFileSync(path.join(out_dir, 'results.json'), JSON.stringify(report, null, 1));
    fs.writeFileSync(path.join(out_dir, 'report.md'), text);
    fs.writeFileSync(path.join(out_dir, 'chart.svg'), svg_chart(report));
    process.stdout.write(`${text}\nWritten: ${path.join(out_dir, 'report.md')}, results.json, chart.svg\n`);
  } finally {
    fs.rmSync(options.workdir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  if (error instanceof UsageError) {
    process.stderr.write(`sluice bench: ${error.message}\n${USAGE}\n`);
    process.exit(2);
  }
  process.stderr.write(`sluice bench: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
