// Delayed delivery benchmark. Prints figures; it is not a test.
//
//   npm run bench:delayed                                     # the full run (about 2.5 minutes on 2 cores)
//   npm run bench:delayed -- --pending 5000000                # fewer pending messages in part 3
//   npm run bench:delayed -- --skip pending                   # parts 1 and 2 only
//   node --import tsx bench/delayed.ts --spread-messages 10000 --spread-s 10 --rate-s 5 --pending 200000
//                                                             # a quick check
//
// Each part runs against its own broker process (`sluice start --durability fsync`, started by
// test/support/broker_process.ts on a fresh temporary data directory, removed at the end):
//   1. spread: --spread-messages (100,000) messages of 100 B with deliverAt spread evenly over
//      1 s .. --spread-s (60) s from the start, produced as fast as possible with the SDK producer
//      (earliest due first), consumed by one consumer group (SDK consumer, maxWaitTimeInMs 20,
//      from the beginning, joined before the first send). Per message: receipt time (in eachMessage)
//      minus its deliverAt, so lateness includes the consumer's fetch path, as a user sees it.
//   2. rate: --rate (10,000) delayed messages per second for --rate-s (30) s, each with delayMs
//      1000..5000 (random, seeded), sent by the SDK producer in small batches on a 10 ms timer
//      (each tick sends what the schedule owes); deliverAt is taken as the send time plus the delay
//      (the broker counts from its receive time, so the produce path is in the lateness too);
//      consumed as in part 1. Target: lateness p99 <= 100 ms and max <= 1 s.
//   3. pending: --pending (10,000,000) messages of 100 B, each with `sluice-delay-ms: 3600000`
//      (none falls due during the run), produced with the lean client's Produce requests
//      (bench/harness/sluice/lean_client.ts; one prepared request of --pending-batch records,
//      sent again and again over 2 connections with 16 requests in flight each). The broker's RSS
//      (VmRSS in /proc/<pid>/status) before producing (after a 5 s settle), once all are
//      acknowledged and 5 s later; growth and bytes per pending message; the produce rate. Then a
//      clean stop (SIGTERM) and a restart on the same data directory, timed from spawn to the
//      ready line (the index is rebuilt by scanning the delay log), with the RSS after it. The
//      restart is spawned by delayed/pending.ts, not start_broker_process, whose ready timeout is a
//      fixed 30 s. Target: RSS growth <= 300 MB for 10 million pending.
// Every part has a time limit (spread-s + 60 s, rate-s + 60 s, 15 minutes to produce the pending
// messages and 10 minutes for the restart) and fails with a message saying how far it got.
// MB is 10^6 bytes. Exit code 1 when a part failed or a message arrived early or twice.
//
// This file reads the options, runs the parts and judges the targets; the parts are in
// bench/delayed/ (spread.ts, rate.ts, pending.ts, with lateness.ts and support.ts).
import fs from 'node:fs';
import { bench_args, positive_int as positive_int_or_exit } from './cli_args.ts';
import { had_early_or_duplicates } from './delayed/lateness.ts';
import { part_pending, type PendingFigures } from './delayed/pending.ts';
import { part_rate, type RateFigures } from './delayed/rate.ts';
import { part_spread } from './delayed/spread.ts';
import { data_dirs, f0, f1, live_brokers, mb, PartFailed, say, table, type DelayedOptions } from './delayed/support.ts';

// ---------------------------------------------------------------- options

const USAGE = `usage: npm run bench:delayed -- [options]
  --spread-messages N   part 1: messages spread over 1 s .. spread-s (default 100000)
  --spread-s S          part 1: the spread, in seconds (default 60)
  --rate N              part 2: delayed messages per second (default 10000)
  --rate-s S            part 2: seconds of sending (default 30)
  --pending N           part 3: pending messages, all due in 1 hour (default 10000000)
  --pending-batch N     part 3: records per produced batch (default 1000)
  --skip LIST           parts to leave out: spread,rate,pending`;

const OPTIONS = {
  'spread-messages': { type: 'string', default: '100000' },
  'spread-s': { type: 'string', default: '60' },
  rate: { type: 'string', default: '10000' },
  'rate-s': { type: 'string', default: '30' },
  pending: { type: 'string', default: '10000000' },
  'pending-batch': { type: 'string', default: '1000' },
  skip: { type: 'string', default: '' },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

const args = bench_args(OPTIONS, USAGE);
const positive_int = (name: string, text: string, max: number) => positive_int_or_exit(name, text, max, USAGE);

const SPREAD_MESSAGES = positive_int('spread-messages', args['spread-messages'], 10_000_000);
const SPREAD_S = positive_int('spread-s', args['spread-s'], 3600);
const RATE = positive_int('rate', args.rate, 1_000_000);
const RATE_S = positive_int('rate-s', args['rate-s'], 3600);
const PENDING = positive_int('pending', args.pending, 100_000_000);
const PENDING_BATCH = positive_int('pending-batch', args['pending-batch'], 65_536);
const PARTS = ['spread', 'rate', 'pending'] as const;
const PART_NAMES: readonly string[] = PARTS;
const SKIP = new Set(
  args.skip
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== ''),
);
for (const part of SKIP) {
  if (!PART_NAMES.includes(part)) {
    console.error(`--skip: unknown part ${JSON.stringify(part)} (parts: ${PARTS.join(', ')})\n${USAGE}`);
    process.exit(2);
  }
}
if (SPREAD_S < 2) {
  console.error('--spread-s must be at least 2 (messages are due from 1 s on)');
  process.exit(2);
}
const OPTIONS_READ: DelayedOptions = {
  spread_messages: SPREAD_MESSAGES,
  spread_s: SPREAD_S,
  rate: RATE,
  rate_s: RATE_S,
  pending: PENDING,
  pending_batch: PENDING_BATCH,
};

/** Targets from the issue. */
const TARGET_P99_MS = 100;
const TARGET_MAX_MS = 1_000;
const TARGET_RSS_BYTES = 300e6;
const TARGET_PENDING = 10_000_000;

/** The targets table's rows for the parts that ran. */
function target_rows(rate: RateFigures | null, pending: PendingFigures | null): string[][] {
  const rows: string[][] = [];
  if (rate) {
    const p99_ok = rate.p99 <= TARGET_P99_MS;
    const max_ok = rate.max <= TARGET_MAX_MS;
    rows.push([
      `lateness p99 <= ${TARGET_P99_MS} ms at ${f0(RATE)} delayed msg/s`,
      `${f0(rate.p99)} ms`,
      p99_ok ? `met (${f0(TARGET_P99_MS - rate.p99)} ms to spare)` : `missed by ${f0(rate.p99 - TARGET_P99_MS)} ms`,
    ]);
    rows.push([
      `lateness max <= ${f0(TARGET_MAX_MS)} ms at ${f0(RATE)} delayed msg/s`,
      `${f0(rate.max)} ms`,
      max_ok ? `met (${f0(TARGET_MAX_MS - rate.max)} ms to spare)` : `missed by ${f0(rate.max - TARGET_MAX_MS)} ms`,
    ]);
  }
  if (pending) {
    // Below a million pending, fixed costs (caches, heap) dominate the growth: no verdict then.
    const at_target = pending.per_message * TARGET_PENDING;
    const scaled = PENDING !== TARGET_PENDING;
    const ok = at_target <= TARGET_RSS_BYTES;
    rows.push([
      `RSS growth <= ${mb(TARGET_RSS_BYTES)} MB for ${f0(TARGET_PENDING)} pending`,
      scaled
        ? `${mb(pending.growth)} MB for ${f0(PENDING)} (${f1(pending.per_message)} B each; ` +
          `${mb(at_target)} MB scaled linearly to ${f0(TARGET_PENDING)})`
        : `${mb(pending.growth)} MB (${f1(pending.per_message)} B each)`,
      PENDING < 1_000_000
        ? 'not judged: too few pending (fixed costs dominate); run with --pending 10000000'
        : ok
          ? `met (${mb(TARGET_RSS_BYTES - at_target)} MB to spare${scaled ? ', scaled' : ''})`
          : `missed by ${mb(at_target - TARGET_RSS_BYTES)} MB${scaled ? ' (scaled)' : ''}`,
    ]);
  }
  return rows;
}

// ---------------------------------------------------------------- main

let failed = false;
let rate: RateFigures | null = null;
let pending: PendingFigures | null = null;
say(`# Delayed delivery benchmark (${new Date().toISOString()}, node ${process.version}, broker --durability fsync)`);
try {
  for (const part of PARTS) {
    if (SKIP.has(part)) continue;
    try {
      if (part === 'spread') await part_spread(OPTIONS_READ);
      if (part === 'rate') rate = await part_rate(OPTIONS_READ);
      if (part === 'pending') await part_pending(OPTIONS_READ, (figures) => (pending = figures));
    } catch (error) {
      failed = true;
      say(`**part ${part} FAILED: ${error instanceof Error ? error.message : String(error)}**`);
      if (!(error instanceof PartFailed) && error instanceof Error && error.stack) say(error.stack);
      for (const broker of live_brokers) {
        await broker.kill().catch(() => undefined);
        live_brokers.delete(broker);
      }
    }
  }

  say('\n## Targets');
  const rows = target_rows(rate, pending);
  if (rows.length > 0) table(['target', 'measured', 'verdict'], rows);
  else say('(no part with a target ran)');
} finally {
  for (const broker of live_brokers) await broker.kill().catch(() => undefined);
  for (const dir of data_dirs) fs.rmSync(dir, { recursive: true, force: true });
}
process.exit(failed || had_early_or_duplicates() ? 1 : 0);
