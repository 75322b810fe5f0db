// Storage append and read benchmark. Prints figures; it is not a test.
//
//   npm run bench:storage                          # 256 MiB per run, 64 appends in flight
//   npm run bench:storage -- --bytes 67108864      # 64 MiB per run
//   npm run -s bench:storage -- --json > out.json  # table on stderr, one JSON object on stdout
//
// What it measures, in one process and one temporary directory under os.tmpdir():
//   1. the disk's own fsync'd sequential write bandwidth: 16 KiB writeSync + fdatasyncSync after
//      each write, and 64 x 16 KiB (1 MiB) per fdatasyncSync;
//   2. Storage.append of ~16 KiB record batches (16 records x 1 KiB values) under durability
//      'fsync' with 1, 8 and 64 partitions (round-robin), a bounded number of appends in flight;
//   3. the same workload under 'interval' (100 ms) and 'none';
//   4. PartitionLog.read in 1 MiB steps from the tail cache and from segment files.
// MB is 10^6 bytes throughout.
//
// The runs are in bench/storage/ (baseline.ts, appends.ts, reads.ts); this file reads the options,
// runs them in order and prints the tables.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bench_args, positive_int as positive_int_or_exit } from './cli_args.ts';
import type { DurabilityPolicy } from '../src/storage/index.ts';
import { append_run, type AppendRun } from './storage/appends.ts';
import { disk_baseline, machine_facts, WRITES_PER_SYNC, type BaselineResult } from './storage/baseline.ts';
import { batch_plan, RECORDS_PER_BATCH, VALUE_BYTES, type StorageBenchConfig } from './storage/batches.ts';
import { f0, f1, pct, say, say_on_stderr, table } from './storage/output.ts';
import { READ_PASS_MS_MIN, READ_PASSES_MAX, read_runs } from './storage/reads.ts';

// ---------------------------------------------------------------- options

const USAGE = `usage: npm run bench:storage -- [--bytes N] [--inflight N] [--partitions 1,8,64] [--time-limit S] \
[--json]
  --bytes N        bytes written per run (default 268435456 = 256 MiB)
  --inflight N     appends in flight at once (default 64)
  --partitions L   partition counts for the fsync runs (default 1,8,64)
  --time-limit S   seconds a measured phase may take before it stops early (default 120)
  --json           print the table on stderr and one JSON object of all figures on stdout`;

const OPTIONS = {
  bytes: { type: 'string', default: String(256 * 1024 * 1024) },
  inflight: { type: 'string', default: '64' },
  partitions: { type: 'string', default: '1,8,64' },
  'time-limit': { type: 'string', default: '120' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

const args = bench_args(OPTIONS, USAGE);
const positive_int = (name: string, text: string, max: number) => positive_int_or_exit(name, text, max, USAGE);

const TOTAL_BYTES = positive_int('bytes', args.bytes, 16 * 1024 * 1024 * 1024);
const INFLIGHT = positive_int('inflight', args.inflight, 100_000);
const PARTITION_COUNTS = args.partitions.split(',').map((part) => positive_int('partitions', part.trim(), 1024));
const TIME_LIMIT_MS = positive_int('time-limit', args['time-limit'], 3600) * 1000;
const JSON_OUT = args.json;

if (TOTAL_BYTES * 2 > os.freemem()) {
  console.error(
    `--bytes ${TOTAL_BYTES} needs about twice that in free memory (batches are built before timing); ` +
      `${os.freemem()} bytes free`,
  );
  process.exit(2);
}

// ---------------------------------------------------------------- main

function print_setup(config: StorageBenchConfig, machine: ReturnType<typeof machine_facts>): void {
  say('Sluice storage benchmark');
  say();
  table(
    ['machine', ''],
    [
      ['cpu', machine.cpu_model],
      ['cores', machine.cores],
      ['memory', `${machine.memory_gib} GiB`],
      ['node', machine.node],
      ['os', machine.os],
      ['tmpdir', machine.tmpdir],
      ['tmpdir filesystem', machine.tmpdir_filesystem],
    ],
    true,
  );
  say();
  table(
    ['parameters', ''],
    [
      ['bytes per run', `${TOTAL_BYTES} (${f1(TOTAL_BYTES / 1024 / 1024)} MiB)`],
      ['batch', `${config.batch.bytes} bytes: ${RECORDS_PER_BATCH} records x ${VALUE_BYTES} B values`],
      ['batches per run', config.batch.count],
      ['appends in flight', INFLIGHT],
      ['time limit per phase', `${TIME_LIMIT_MS / 1000} s`],
    ],
    true,
  );
  say();
}

function run_baselines(config: StorageBenchConfig, root: string): { each: BaselineResult; per_mib: BaselineResult } {
  say('Disk baseline: fresh file, writeSync of 16 KiB buffers, fdatasyncSync (MB = 10^6 bytes)');
  const each = disk_baseline(config, root, 'fsync-each-16KiB', 1);
  const per_mib = disk_baseline(config, root, 'fsync-per-1MiB', WRITES_PER_SYNC);
  table(
    ['baseline', 'MB', 'seconds', 'MB/s', 'fdatasyncs/s'],
    [each, per_mib].map((b) => [
      `${b.name}${b.stopped_early ? ' (time limit)' : ''}`,
      f1(b.bytes / 1e6),
      (b.ms / 1000).toFixed(2),
      f1(b.mb_per_s),
      f0(b.fdatasyncs_per_s),
    ]),
  );
  say();
  return { each, per_mib };
}

async function run_appends(
  config: StorageBenchConfig,
  root: string,
  baselines: { each: BaselineResult; per_mib: BaselineResult },
): Promise<AppendRun[]> {
  const appends: AppendRun[] = [];
  const plans: Array<{ policy: DurabilityPolicy; partitions: number }> = [
    ...PARTITION_COUNTS.map((partitions): { policy: DurabilityPolicy; partitions: number } => ({
      policy: { kind: 'fsync' },
      partitions,
    })),
    { policy: { kind: 'interval', interval_ms: 100 }, partitions: 1 },
    { policy: { kind: 'none' }, partitions: 1 },
  ];
  for (const plan of plans) {
    appends.push(await append_run(config, root, plan.policy, plan.partitions, baselines));
  }
  print_appends(config, appends);
  return appends;
}

function print_appends(config: StorageBenchConfig, appends: AppendRun[]): void {
  say(
    `Append: Storage.append of ${config.batch.bytes}-byte batches, ${INFLIGHT} in flight, ` +
      'round-robin over the partitions',
  );
  table(
    [
      'policy',
      'parts',
      'MB/s',
      'msgs/s',
      'batches/s',
      'vs each-16KiB',
      'vs per-1MiB',
      'fsync rounds',
      'appends/round',
      'round ms',
      'p50 ms',
      'p99 ms',
    ],
    appends.map((a) => [
      `${a.policy}${a.stopped_early ? ' (time limit)' : ''}`,
      a.partitions,
      f1(a.mb_per_s),
      f0(a.messages_per_s),
      f0(a.batches_per_s),
      pct(a.ratio_to_fsync_each_write),
      pct(a.ratio_to_fsync_per_mib),
      a.flush_rounds,
      f1(a.appends_per_round),
      a.round_ms_mean.toFixed(2),
      a.latency_ms_p50.toFixed(2),
      a.latency_ms_p99.toFixed(2),
    ]),
  );
  say('  vs each-16KiB: append MB/s / MB/s of 16 KiB write + fdatasync per write (the target baseline)');
  say('  vs per-1MiB:   append MB/s / MB/s of 64 x 16 KiB writes per fdatasync');
  say('  fsync rounds:  storage.flusher.rounds during the timed appends; round ms: their mean duration');
  say('  p50/p99 ms:    time from append() to its promise resolving');
  for (const a of appends.filter((run) => run.policy === 'fsync')) {
    const met = a.ratio_to_fsync_each_write >= 0.7;
    say(
      `  target (fsync >= 70% of fsync-each-16KiB MB/s), ${a.partitions} partition(s): ` +
        `${pct(a.ratio_to_fsync_each_write)}, ${met ? 'met' : 'NOT met'}`,
    );
  }
  const unsynced = appends.filter((a) => !a.policy.startsWith('fsync'));
  if (unsynced.length > 0) {
    say('  interval/none acknowledge before data is synced; flush_all after the last ack:');
    for (const a of unsynced)
      say(
        `    ${a.policy}: final flush ${a.final_flush_ms.toFixed(0)} ms, ` +
          `${f1(a.mb_per_s_incl_final_flush)} MB/s including it`,
      );
  }
  say();
}

async function run_reads(config: StorageBenchConfig, root: string) {
  const reads = await read_runs(config, root);
  say(
    `Read: PartitionLog.read(offset, 1 MiB) from offset 0 to the end, ` +
      `repeated until >= ${READ_PASS_MS_MIN} ms (at most ${READ_PASSES_MAX} passes)`,
  );
  table(
    ['source', 'passes', 'MB read', 'MB/s', 'msgs/s', 'complete'],
    reads.map((r) => [
      `${r.source}${r.stopped_early ? ' (time limit)' : ''}`,
      r.passes,
      f1(r.bytes / 1e6),
      f1(r.mb_per_s),
      f0(r.messages_per_s),
      r.complete ? 'yes' : 'NO',
    ]),
  );
  say('  tail cache: read() returns references to cached Buffers, no bytes are copied or checked.');
  say('  files: a fresh Storage on the same directory with tail_cache_bytes_max 0; the OS page cache is warm');
  say('  (the data was just written), so these are page-cache reads, not disk reads.');
  return reads;
}

async function main(): Promise<void> {
  if (JSON_OUT) say_on_stderr();
  const config: StorageBenchConfig = {
    total_bytes: TOTAL_BYTES,
    inflight: INFLIGHT,
    time_limit_ms: TIME_LIMIT_MS,
    batch: batch_plan(TOTAL_BYTES),
  };
  const machine = machine_facts();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-'));
  const cleanup = () => fs.rmSync(root, { recursive: true, force: true });
  const on_signal = () => {
    cleanup();
    process.exit(130);
  };
  process.once('SIGINT', on_signal);
  process.once('SIGTERM', on_signal);
  try {
    print_setup(config, machine);
    const baselines = run_baselines(config, root);
    const appends = await run_appends(config, root, baselines);
    const reads = await run_reads(config, root);
    if (JSON_OUT) {
      const params = {
        bytes: TOTAL_BYTES,
        inflight: INFLIGHT,
        partitions: PARTITION_COUNTS,
        time_limit_ms: TIME_LIMIT_MS,
        batch_bytes: config.batch.bytes,
        batches: config.batch.count,
        records_per_batch: RECORDS_PER_BATCH,
        value_bytes: VALUE_BYTES,
      };
      process.stdout.write(
        `${JSON.stringify({ machine, params, baselines: [baselines.each, baselines.per_mib], appends, reads })}\n`,
      );
    }
  } finally {
    process.off('SIGINT', on_signal);
    process.off('SIGTERM', on_signal);
    cleanup();
  }
}

await main();
