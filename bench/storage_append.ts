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
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bench_args, positive_int as positive_int_or_exit } from './cli_args.ts';
import { encode_record_batch, type BatchRecord } from '../src/protocol/record_batch.ts';
import { batch_base_offset, batch_last_offset_delta } from '../src/format/batch_layout.ts';
import { Storage, storage_config_default, type DurabilityPolicy, type PartitionLog, type StorageConfig } from '../src/storage/index.ts';

// ---------------------------------------------------------------- options

const USAGE = `usage: npm run bench:storage -- [--bytes N] [--inflight N] [--partitions 1,8,64] [--time-limit S] [--json]
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

const WRITE_BYTES = 16 * 1024; // baseline write size
const WRITES_PER_SYNC = 64; // batched baseline: 64 x 16 KiB = 1 MiB per fdatasync
const RECORDS_PER_BATCH = 16;
const VALUE_BYTES = 1024;
const READ_BYTES_MAX = 1024 * 1024; // log.read(offset, 1 MiB)
const READ_PASS_MS_MIN = 1000; // read passes repeat until at least this long ...
const READ_PASSES_MAX = 50; // ... or this many passes
const SETTLE_GRACE_MS = 60_000; // extra time for in-flight work to settle after a phase's limit

if (TOTAL_BYTES * 2 > os.freemem()) {
  console.error(`--bytes ${TOTAL_BYTES} needs about twice that in free memory (batches are built before timing); ${os.freemem()} bytes free`);
  process.exit(2);
}

// ---------------------------------------------------------------- output helpers

/** Human-readable lines; on stderr when --json so stdout carries only the JSON object. */
function say(line = ''): void {
  if (JSON_OUT) process.stderr.write(`${line}\n`);
  else process.stdout.write(`${line}\n`);
}

/** Columns after the first are right-aligned (numbers) unless `left` is set (key-value tables). */
function table(headers: string[], rows: Array<Array<string | number>>, left = false): void {
  const cells = rows.map((row) => row.map((cell) => String(cell)));
  const widths = headers.map((header, i) => Math.max(header.length, ...cells.map((row) => (row[i] ?? '').length)));
  const line = (row: string[]) => row.map((cell, i) => (i === 0 || left ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ').trimEnd();
  say(line(headers));
  say(widths.map((width) => '-'.repeat(width)).join('  '));
  for (const row of cells) say(line(row));
}

const mb = (bytes: number, ms: number) => (ms > 0 ? bytes / 1e6 / (ms / 1000) : 0);
const per_s = (count: number, ms: number) => (ms > 0 ? count / (ms / 1000) : 0);
const f1 = (value: number) => value.toFixed(1);
const f0 = (value: number) => Math.round(value).toLocaleString('en-US');
const pct = (value: number) => `${(value * 100).toFixed(0)}%`;

function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

async function with_timeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

// ---------------------------------------------------------------- machine facts

function machine_facts() {
  const cpus = os.cpus();
  let tmp_fs = 'unknown';
  try {
    const out = execFileSync('df', ['-T', os.tmpdir()], { encoding: 'utf8', timeout: 5000, stdio: ['ignore', 'pipe', 'ignore'] });
    const fields = out.trim().split('\n').at(-1)?.trim().split(/\s+/) ?? [];
    if (fields.length >= 2) tmp_fs = `${fields[1]} on ${fields[0]}`;
  } catch {
    // df missing or refused: leave 'unknown'
  }
  return {
    cpu_model: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    memory_gib: Number((os.totalmem() / 1024 ** 3).toFixed(1)),
    node: process.version,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    tmpdir: os.tmpdir(),
    tmpdir_filesystem: tmp_fs,
  };
}

// ---------------------------------------------------------------- disk baselines

interface BaselineResult {
  name: string;
  write_bytes: number;
  writes_per_fdatasync: number;
  bytes: number;
  writes: number;
  fdatasyncs: number;
  ms: number;
  mb_per_s: number;
  fdatasyncs_per_s: number;
  stopped_early: boolean;
}

/** writeSync of `WRITE_BYTES` buffers to a fresh file, fdatasyncSync after every `per_sync` writes. */
function disk_baseline(root: string, name: string, per_sync: number): BaselineResult {
  const file = path.join(root, `baseline-${name}.dat`);
  const buffer = randomBytes(WRITE_BYTES);
  const writes_max = Math.ceil(TOTAL_BYTES / WRITE_BYTES);
  const fd = fs.openSync(file, 'w');
  let writes = 0;
  let syncs = 0;
  let bytes = 0;
  let stopped_early = false;
  const started = performance.now();
  try {
    while (writes < writes_max) {
      for (let i = 0; i < per_sync && writes < writes_max; i++) {
        bytes += fs.writeSync(fd, buffer, 0, buffer.length);
        writes++;
      }
      fs.fdatasyncSync(fd);
      syncs++;
      if (performance.now() - started > TIME_LIMIT_MS) {
        stopped_early = writes < writes_max;
        break;
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  const ms = performance.now() - started;
  fs.unlinkSync(file);
  return {
    name,
    write_bytes: WRITE_BYTES,
    writes_per_fdatasync: per_sync,
    bytes,
    writes,
    fdatasyncs: syncs,
    ms,
    mb_per_s: mb(bytes, ms),
    fdatasyncs_per_s: per_s(syncs, ms),
    stopped_early,
  };
}

// ---------------------------------------------------------------- batches

/** One ~16 KiB batch: 16 records with null keys and random 1 KiB values. */
function template_batch(): Buffer {
  const now = Date.now();
  const records: BatchRecord[] = [];
  for (let i = 0; i < RECORDS_PER_BATCH; i++) records.push({ key: null, value: randomBytes(VALUE_BYTES), timestamp_ms: now + i });
  return encode_record_batch(records);
}

const TEMPLATE = template_batch();
const BATCH_BYTES = TEMPLATE.length;
const BATCH_COUNT = Math.max(1, Math.floor(TOTAL_BYTES / BATCH_BYTES));

/**
 * One Buffer per append (the log stamps offsets into the buffer and keeps it in its tail cache).
 * Each copy owns its memory, so the tail cache keeps it as is instead of copying it again.
 */
function build_batches(): Buffer[] {
  const batches = new Array<Buffer>(BATCH_COUNT);
  for (let i = 0; i < BATCH_COUNT; i++) batches[i] = Buffer.from(TEMPLATE);
  return batches;
}

function records_in(batch: Buffer): number {
  return batch_last_offset_delta(batch, 0) + 1;
}

// ---------------------------------------------------------------- appends

interface AppendRun {
  policy: string;
  partitions: number;
  inflight: number;
  batch_bytes: number;
  batches: number;
  messages: number;
  bytes: number;
  ms: number;
  mb_per_s: number;
  messages_per_s: number;
  batches_per_s: number;
  ratio_to_fsync_each_write: number;
  ratio_to_fsync_per_mib: number;
  flush_rounds: number;
  appends_per_round: number;
  round_ms_mean: number;
  latency_ms_p50: number;
  latency_ms_p99: number;
  latency_ms_max: number;
  /** Time of a flush_all after the last acknowledgement (data still unsynced under interval/none). */
  final_flush_ms: number;
  mb_per_s_incl_final_flush: number;
  stopped_early: boolean;
}

function storage_config(dir: string, overrides: Partial<StorageConfig>): StorageConfig {
  // Timers that would otherwise run inside a measurement: checkpoints every 10 s, retention every 60 s.
  return { ...storage_config_default(dir), checkpoint_interval_ms: 3_600_000, retention_check_interval_ms: 0, ...overrides };
}

/**
 * Appends `batches` round-robin over `logs`, at most `inflight` at once, until all are acknowledged
 * or the phase's time is up. Returns counts, elapsed ms and per-append latencies (sorted).
 */
async function append_all(logs: PartitionLog[], batches: Buffer[], inflight: number) {
  const latencies = new Float64Array(batches.length);
  let next = 0;
  let in_flight = 0;
  let done = 0;
  let bytes = 0;
  let messages = 0;
  let stopped_early = false;
  let failure: unknown = null;
  const started = performance.now();
  await with_timeout(
    new Promise<void>((resolve, reject) => {
      const launch = () => {
        while (failure === null && in_flight < inflight && next < batches.length) {
          if (performance.now() - started > TIME_LIMIT_MS) {
            stopped_early = true;
            break;
          }
          const i = next++;
          const batch = batches[i]!;
          const log = logs[i % logs.length]!;
          const sent = performance.now();
          let pending;
          try {
            pending = log.append(batch);
          } catch (error) {
            failure = error; // validation or backpressure errors are thrown synchronously
            break;
          }
          in_flight++;
          pending.then(
            () => {
              latencies[done] = performance.now() - sent;
              in_flight--;
              done++;
              bytes += batch.length;
              messages += RECORDS_PER_BATCH;
              launch();
            },
            (error: unknown) => {
              in_flight--;
              failure ??= error;
              launch();
            },
          );
        }
        if (in_flight === 0) {
          if (failure !== null) reject(failure);
          else if (next >= batches.length || stopped_early) resolve();
        }
      };
      launch();
    }),
    TIME_LIMIT_MS + SETTLE_GRACE_MS,
    'appends',
  );
  const ms = performance.now() - started;
  const sorted = latencies.subarray(0, done).sort();
  return { batches: done, bytes, messages, ms, sorted, stopped_early };
}

async function append_run(root: string, policy: DurabilityPolicy, partitions: number, baselines: { each: BaselineResult; per_mib: BaselineResult }): Promise<AppendRun> {
  const label = policy.kind === 'interval' ? `interval ${policy.interval_ms} ms` : policy.kind;
  const dir = fs.mkdtempSync(path.join(root, `append-${policy.kind}-${partitions}p-`));
  let batches: Buffer[] | null = build_batches();
  const storage = await Storage.open(storage_config(dir, { durability: policy }));
  try {
    const logs: PartitionLog[] = [];
    for (let p = 0; p < partitions; p++) logs.push(await storage.create_partition(`bench-${p}`));
    await storage.flusher.flush_all();
    const rounds_before = storage.flusher.rounds;
    const durations_before = storage.flusher.round_durations_ms.length;
    const result = await append_all(logs, batches, INFLIGHT);
    const rounds = storage.flusher.rounds - rounds_before;
    const durations = storage.flusher.round_durations_ms.slice(durations_before);
    const flush_started = performance.now();
    await with_timeout(storage.flusher.flush_all(), TIME_LIMIT_MS + SETTLE_GRACE_MS, 'final flush');
    const final_flush_ms = performance.now() - flush_started;
    const run_mb = mb(result.bytes, result.ms);
    return {
      policy: label,
      partitions,
      inflight: INFLIGHT,
      batch_bytes: BATCH_BYTES,
      batches: result.batches,
      messages: result.messages,
      bytes: result.bytes,
      ms: result.ms,
      mb_per_s: run_mb,
      messages_per_s: per_s(result.messages, result.ms),
      batches_per_s: per_s(result.batches, result.ms),
      ratio_to_fsync_each_write: baselines.each.mb_per_s > 0 ? run_mb / baselines.each.mb_per_s : 0,
      ratio_to_fsync_per_mib: baselines.per_mib.mb_per_s > 0 ? run_mb / baselines.per_mib.mb_per_s : 0,
      flush_rounds: rounds,
      appends_per_round: rounds > 0 ? result.batches / rounds : 0,
      round_ms_mean: durations.length > 0 ? durations.reduce((sum, value) => sum + value, 0) / durations.length : 0,
      latency_ms_p50: percentile(result.sorted, 0.5),
      latency_ms_p99: percentile(result.sorted, 0.99),
      latency_ms_max: result.sorted.length > 0 ? result.sorted[result.sorted.length - 1]! : 0,
      final_flush_ms,
      mb_per_s_incl_final_flush: mb(result.bytes, result.ms + final_flush_ms),
      stopped_early: result.stopped_early,
    };
  } finally {
    batches = null;
    await with_timeout(storage.close(), SETTLE_GRACE_MS, 'storage close');
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------- reads

interface ReadRun {
  source: string;
  note: string;
  passes: number;
  bytes: number;
  messages: number;
  reads: number;
  ms: number;
  mb_per_s: number;
  messages_per_s: number;
  complete: boolean;
  stopped_early: boolean;
}

/** Reads the whole log from offset 0 with read(offset, 1 MiB), in passes, bounded in count and time. */
async function read_back(log: PartitionLog, source: string, note: string, expect: { bytes: number; messages: number }): Promise<ReadRun> {
  const end = log.high_watermark;
  const reads_per_pass_max = Math.ceil(expect.bytes / BATCH_BYTES) + 16; // every read returns >= 1 batch
  let passes = 0;
  let bytes = 0;
  let messages = 0;
  let reads = 0;
  let complete = true;
  let stopped_early = false;
  const started = performance.now();
  while (passes < READ_PASSES_MAX) {
    let offset = log.log_start_offset;
    let pass_bytes = 0;
    let pass_messages = 0;
    for (let i = 0; offset < end && i < reads_per_pass_max; i++) {
      const result = await log.read(offset, READ_BYTES_MAX);
      reads++;
      if (result.batches.length === 0) break;
      for (const batch of result.batches) {
        pass_messages += records_in(batch);
        offset = batch_base_offset(batch, 0) + records_in(batch);
      }
      pass_bytes += result.bytes;
      if (performance.now() - started > TIME_LIMIT_MS) {
        stopped_early = true;
        break;
      }
    }
    passes++;
    bytes += pass_bytes;
    messages += pass_messages;
    if (stopped_early) break;
    if (pass_bytes !== expect.bytes || pass_messages !== expect.messages) complete = false;
    if (performance.now() - started >= READ_PASS_MS_MIN) break;
  }
  const ms = performance.now() - started;
  return { source, note, passes, bytes, messages, reads, ms, mb_per_s: mb(bytes, ms), messages_per_s: per_s(messages, ms), complete, stopped_early };
}

async function read_runs(root: string): Promise<ReadRun[]> {
  const dir = fs.mkdtempSync(path.join(root, 'read-'));
  const out: ReadRun[] = [];
  try {
    // Fill one partition (not timed) with a tail cache that holds all of it.
    let batches: Buffer[] | null = build_batches();
    const tail_bytes = BATCH_COUNT * BATCH_BYTES + 1024 * 1024;
    const writer = await Storage.open(storage_config(dir, { durability: { kind: 'none' }, tail_cache_bytes_max: tail_bytes }));
    let expect = { bytes: 0, messages: 0 };
    try {
      const log = await writer.create_partition('bench-read');
      const filled = await append_all([log], batches, INFLIGHT);
      if (filled.batches !== batches.length) throw new Error(`filling the read partition stopped after ${filled.batches} of ${batches.length} batches`);
      expect = { bytes: filled.bytes, messages: filled.messages };
      batches = null;
      if (writer.tail_cache.bytes < expect.bytes) throw new Error(`tail cache holds ${writer.tail_cache.bytes} of ${expect.bytes} bytes`);
      out.push(await read_back(log, 'tail cache', `tail_cache_bytes_max ${tail_bytes}`, expect));
    } finally {
      await with_timeout(writer.close(), SETTLE_GRACE_MS, 'storage close');
    }
    for (const verify_reads of [true, false]) {
      const reader = await Storage.open(storage_config(dir, { tail_cache_bytes_max: 0, verify_reads }));
      try {
        const log = reader.require('bench-read');
        out.push(
          await read_back(log, verify_reads ? 'files' : 'files, no CRC check', `tail_cache_bytes_max 0, verify_reads ${verify_reads}, OS page cache warm`, expect),
        );
        if (reader.tail_cache.bytes !== 0) throw new Error('tail cache used although tail_cache_bytes_max is 0');
      } finally {
        await with_timeout(reader.close(), SETTLE_GRACE_MS, 'storage close');
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
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
        ['batch', `${BATCH_BYTES} bytes: ${RECORDS_PER_BATCH} records x ${VALUE_BYTES} B values`],
        ['batches per run', BATCH_COUNT],
        ['appends in flight', INFLIGHT],
        ['time limit per phase', `${TIME_LIMIT_MS / 1000} s`],
      ],
      true,
    );
    say();

    say('Disk baseline: fresh file, writeSync of 16 KiB buffers, fdatasyncSync (MB = 10^6 bytes)');
    const each = disk_baseline(root, 'fsync-each-16KiB', 1);
    const per_mib = disk_baseline(root, 'fsync-per-1MiB', WRITES_PER_SYNC);
    const baselines = [each, per_mib];
    table(
      ['baseline', 'MB', 'seconds', 'MB/s', 'fdatasyncs/s'],
      baselines.map((b) => [
        `${b.name}${b.stopped_early ? ' (time limit)' : ''}`,
        f1(b.bytes / 1e6),
        (b.ms / 1000).toFixed(2),
        f1(b.mb_per_s),
        f0(b.fdatasyncs_per_s),
      ]),
    );
    say();

    const appends: AppendRun[] = [];
    const plans: Array<{ policy: DurabilityPolicy; partitions: number }> = [
      ...PARTITION_COUNTS.map((partitions) => ({ policy: { kind: 'fsync' } as DurabilityPolicy, partitions })),
      { policy: { kind: 'interval', interval_ms: 100 }, partitions: 1 },
      { policy: { kind: 'none' }, partitions: 1 },
    ];
    for (const plan of plans) {
      appends.push(await append_run(root, plan.policy, plan.partitions, { each, per_mib }));
    }
    say(`Append: Storage.append of ${BATCH_BYTES}-byte batches, ${INFLIGHT} in flight, round-robin over the partitions`);
    table(
      ['policy', 'parts', 'MB/s', 'msgs/s', 'batches/s', 'vs each-16KiB', 'vs per-1MiB', 'fsync rounds', 'appends/round', 'round ms', 'p50 ms', 'p99 ms'],
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
      say(`  target (fsync >= 70% of fsync-each-16KiB MB/s), ${a.partitions} partition(s): ${pct(a.ratio_to_fsync_each_write)}, ${met ? 'met' : 'NOT met'}`);
    }
    const unsynced = appends.filter((a) => !a.policy.startsWith('fsync'));
    if (unsynced.length > 0) {
      say('  interval/none acknowledge before data is synced; flush_all after the last ack:');
      for (const a of unsynced) say(`    ${a.policy}: final flush ${a.final_flush_ms.toFixed(0)} ms, ${f1(a.mb_per_s_incl_final_flush)} MB/s including it`);
    }
    say();

    const reads = await read_runs(root);
    say(`Read: PartitionLog.read(offset, 1 MiB) from offset 0 to the end, repeated until >= ${READ_PASS_MS_MIN} ms (at most ${READ_PASSES_MAX} passes)`);
    table(
      ['source', 'passes', 'MB read', 'MB/s', 'msgs/s', 'complete'],
      reads.map((r) => [`${r.source}${r.stopped_early ? ' (time limit)' : ''}`, r.passes, f1(r.bytes / 1e6), f1(r.mb_per_s), f0(r.messages_per_s), r.complete ? 'yes' : 'NO']),
    );
    say('  tail cache: read() returns references to cached Buffers, no bytes are copied or checked.');
    say('  files: a fresh Storage on the same directory with tail_cache_bytes_max 0; the OS page cache is warm');
    say('  (the data was just written), so these are page-cache reads, not disk reads.');

    if (JSON_OUT) {
      const params = { bytes: TOTAL_BYTES, inflight: INFLIGHT, partitions: PARTITION_COUNTS, time_limit_ms: TIME_LIMIT_MS, batch_bytes: BATCH_BYTES, batches: BATCH_COUNT, records_per_batch: RECORDS_PER_BATCH, value_bytes: VALUE_BYTES };
      process.stdout.write(`${JSON.stringify({ machine, params, baselines, appends, reads })}\n`);
    }
  } finally {
    process.off('SIGINT', on_signal);
    process.off('SIGTERM', on_signal);
    cleanup();
  }
}

await main();
