// Delayed delivery benchmark. Prints figures; it is not a test.
//
//   npm run bench:delayed                                     # the full run (about 2.5 minutes on 2 cores)
//   npm run bench:delayed -- --pending 5000000                # fewer pending messages in part 3
//   npm run bench:delayed -- --skip pending                   # parts 1 and 2 only
//   node --import tsx bench/delayed.ts --spread-messages 10000 --spread-s 10 --rate-s 5 --pending 200000   # a quick check
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
//      restart is spawned here rather than through start_broker_process, whose ready timeout is a
//      fixed 30 s. Target: RSS growth <= 300 MB for 10 million pending.
// Every part has a time limit (spread-s + 60 s, rate-s + 60 s, 15 minutes to produce the pending
// messages and 10 minutes for the restart) and fails with a message saying how far it got.
// MB is 10^6 bytes. Exit code 1 when a part failed or a message arrived early or twice.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { bench_args, positive_int as positive_int_or_exit } from './cli_args.ts';
import { Sluice } from '../src/sdk/index.ts';
import type { Message } from '../src/sdk/producer.ts';
import { encode_record_batch, type BatchRecord } from '../src/protocol/record_batch.ts';
import { Connection, check_produce_response, create_topic, end_offsets, produce_request } from './harness/sluice/lean_client.ts';
import { new_data_dir, start_broker_process, type BrokerProcess } from '../test/support/broker_process.ts';

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
const SKIP = new Set(args.skip.split(',').map((s) => s.trim()).filter((s) => s !== ''));
for (const part of SKIP) {
  if (!(PARTS as readonly string[]).includes(part)) {
    console.error(`--skip: unknown part ${JSON.stringify(part)} (parts: ${PARTS.join(', ')})\n${USAGE}`);
    process.exit(2);
  }
}
if (SPREAD_S < 2) {
  console.error('--spread-s must be at least 2 (messages are due from 1 s on)');
  process.exit(2);
}

const ROOT = path.resolve(import.meta.dirname, '..');
const VALUE_BYTES = 100;
const BROKER_ARGS = ['--durability', 'fsync'];
const MAX_WAIT_MS = 20;
const RATE_TICK_MS = 10;
const RATE_DELAY_MIN_MS = 1_000;
const RATE_DELAY_MAX_MS = 5_000;
const PENDING_DELAY_MS = 3_600_000;
const PENDING_CONNECTIONS = 2;
const PENDING_IN_FLIGHT = 16;
const PENDING_PRODUCE_LIMIT_MS = 15 * 60_000;
const RESTART_LIMIT_MS = 10 * 60_000;
const SETTLE_MS = 5_000;
const PART_GRACE_MS = 60_000;
const JOIN_LIMIT_MS = 30_000;
const STOP_LIMIT_MS = 60_000;
const PROGRESS_EVERY_MS = 10_000;
/** Targets from the issue. */
const TARGET_P99_MS = 100;
const TARGET_MAX_MS = 1_000;
const TARGET_RSS_BYTES = 300e6;
const TARGET_PENDING = 10_000_000;

// ---------------------------------------------------------------- helpers

const say = (line = '') => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const f0 = (value: number) => Math.round(value).toLocaleString('en-US');
const f1 = (value: number) => value.toFixed(1);
const mb = (bytes: number) => (bytes / 1e6).toFixed(1);
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

function table(headers: string[], rows: Array<Array<string | number>>): void {
  say(`| ${headers.join(' | ')} |`);
  say(`| ${headers.map((_, i) => (i === 0 ? '---' : '---:')).join(' | ')} |`);
  for (const row of rows) say(`| ${row.join(' | ')} |`);
}

function percentile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

class PartFailed extends Error {}

async function with_timeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new PartFailed(`${what} did not finish within ${secs(ms)}`)), Math.max(0, ms));
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** VmRSS and VmHWM (peak) of a process, in bytes. */
function memory_of(pid: number): { rss: number; peak: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => {
    const match = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status);
    if (!match) throw new Error(`/proc/${pid}/status has no ${name}`);
    return Number(match[1]) * 1024;
  };
  return { rss: field('VmRSS'), peak: field('VmHWM') };
}

function du_bytes(dir: string): number {
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    total += entry.isDirectory() ? du_bytes(full) : fs.statSync(full).size;
  }
  return total;
}

/** A value of VALUE_BYTES: the message's number, a space, then padding. */
function value_of(i: number): Buffer {
  const value = Buffer.alloc(VALUE_BYTES, 0x2e);
  value.write(`${i} `, 0, 'latin1');
  return value;
}

function number_in(value: Buffer | null): number {
  if (!value) return -1;
  let n = 0;
  let at = 0;
  for (; at < value.length; at++) {
    const c = value[at]!;
    if (c < 0x30 || c > 0x39) break;
    n = n * 10 + (c - 0x30);
  }
  return at === 0 ? -1 : n;
}

/** A small seeded generator, so runs draw the same delays. */
function random_from(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Brokers and directories to clean up whatever happens. */
const live_brokers = new Set<{ stop(): Promise<unknown>; kill(): Promise<unknown> }>();
const data_dirs = new Set<string>();

async function stop_broker(broker: { stop(): Promise<unknown>; kill(): Promise<unknown> }, what: string): Promise<{ code: unknown; ms: number }> {
  const started = performance.now();
  try {
    const code = await with_timeout(broker.stop(), STOP_LIMIT_MS, `stopping the ${what} broker`);
    return { code, ms: performance.now() - started };
  } catch (error) {
    await broker.kill();
    throw error;
  } finally {
    live_brokers.delete(broker);
  }
}

async function start_broker(): Promise<{ broker: BrokerProcess; ready_ms: number }> {
  const started = performance.now();
  const data_dir = new_data_dir('bench-delayed');
  data_dirs.add(data_dir);
  const broker = await start_broker_process({ data_dir, args: BROKER_ARGS });
  live_brokers.add(broker);
  return { broker, ready_ms: performance.now() - started };
}

/** Lines the broker printed besides its ready line (warnings and errors at --log-level warn). */
function report_broker_output(output: string, what: string): void {
  const lines = output.split('\n').filter((line) => line.trim() !== '' && !/^sluice (ready |stopped$)/.test(line));
  if (lines.length === 0) return;
  say(`broker output (${what}), ${lines.length} line(s):`);
  for (const line of lines.slice(0, 20)) say(`    ${line.slice(0, 400)}`);
  if (lines.length > 20) say(`    ... ${lines.length - 20} more`);
}

let early_or_duplicates = false;

// ---------------------------------------------------------------- lateness

/** Due times by message number, receipts and lateness in order of receipt. */
class Lateness {
  readonly due: Float64Array;
  private readonly seen: Uint8Array;
  readonly lateness: Float64Array;
  /** Receipt time by message number (NaN until received). */
  readonly received_at: Float64Array;
  received = 0;
  early = 0;
  duplicates = 0;
  unknown = 0;
  last_receipt = 0;

  constructor(readonly expected: number) {
    this.due = new Float64Array(expected).fill(NaN);
    this.seen = new Uint8Array(expected);
    this.lateness = new Float64Array(expected);
    this.received_at = new Float64Array(expected).fill(NaN);
  }

  receive(i: number, now: number): void {
    if (i < 0 || i >= this.expected || Number.isNaN(this.due[i]!)) {
      this.unknown++;
      return;
    }
    if (this.seen[i]) {
      this.duplicates++;
      return;
    }
    this.seen[i] = 1;
    this.received_at[i] = now;
    const late = now - this.due[i]!;
    if (late < 0) this.early++;
    this.lateness[this.received++] = late;
    this.last_receipt = now;
  }

  sorted(): Float64Array {
    return this.lateness.slice(0, this.received).sort();
  }
}

/** A consumer group reading `topic` from the beginning into `tracker`; resolves once assigned. */
async function start_consumer(sluice: Sluice, topic: string, tracker: Lateness) {
  let assigned!: () => void;
  const assignment = new Promise<void>((resolve) => (assigned = resolve));
  const consumer = sluice.consumer({ groupId: `bench-delayed-${topic}`, maxWaitTimeInMs: MAX_WAIT_MS, onPartitionsAssigned: () => assigned() });
  let crashed: unknown = null;
  consumer.on('consumer.crash', (event) => (crashed = event.payload.error ?? event.payload));
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => tracker.receive(number_in(message.value), Date.now()),
  });
  await with_timeout(assignment, JOIN_LIMIT_MS, 'the consumer group join');
  return { consumer, crashed: () => crashed };
}

/** Waits until every message arrived, the deadline passed or the consumer crashed. */
async function wait_for_all(tracker: Lateness, deadline: number, crashed: () => unknown, what: string, sending_failed: () => unknown = () => null): Promise<void> {
  let next_progress = Date.now() + PROGRESS_EVERY_MS;
  while (tracker.received < tracker.expected) {
    const failure = crashed() ?? sending_failed();
    if (failure) throw new PartFailed(`${what}: ${failure instanceof Error ? failure.message : String(failure)} (${f0(tracker.received)} of ${f0(tracker.expected)} received)`);
    if (Date.now() > deadline) throw new PartFailed(`${what}: time limit passed with ${f0(tracker.received)} of ${f0(tracker.expected)} messages received`);
    if (Date.now() >= next_progress) {
      say(`  ... ${f0(tracker.received)} of ${f0(tracker.expected)} received`);
      next_progress += PROGRESS_EVERY_MS;
    }
    await sleep(20);
  }
  // A moment more, so a message delivered twice would be counted.
  await sleep(300);
}

function lateness_figures(tracker: Lateness) {
  const sorted = tracker.sorted();
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), p999: percentile(sorted, 0.999), max: sorted.length > 0 ? sorted[sorted.length - 1]! : NaN, min: sorted.length > 0 ? sorted[0]! : NaN };
}

function check_counts(tracker: Lateness, what: string): void {
  if (tracker.early > 0 || tracker.duplicates > 0 || tracker.unknown > 0) {
    early_or_duplicates = true;
    say(`**${what}: ${tracker.early} early, ${tracker.duplicates} delivered twice, ${tracker.unknown} unknown messages (all must be 0)**`);
  }
}

// ---------------------------------------------------------------- part 1: spread

async function part_spread(): Promise<void> {
  const part_deadline = Date.now() + SPREAD_S * 1000 + PART_GRACE_MS;
  say(`\n## 1. Lateness over a spread: ${f0(SPREAD_MESSAGES)} messages due over 1-${SPREAD_S} s`);
  const { broker } = await start_broker();
  const sluice = new Sluice({ brokers: [broker.bootstrap], clientId: 'bench-delayed' });
  const topic = 'spread';
  const admin = sluice.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
  await admin.disconnect();
  const tracker = new Lateness(SPREAD_MESSAGES);
  const { consumer, crashed } = await start_consumer(sluice, topic, tracker);
  const producer = sluice.producer();
  await producer.connect();

  const start = Date.now();
  const span_ms = SPREAD_S * 1000 - 1000;
  const messages: Message[] = new Array(SPREAD_MESSAGES);
  for (let i = 0; i < SPREAD_MESSAGES; i++) {
    const at = start + 1000 + (SPREAD_MESSAGES > 1 ? Math.floor((span_ms * i) / (SPREAD_MESSAGES - 1)) : 0);
    tracker.due[i] = at;
    messages[i] = { key: null, value: value_of(i), deliverAt: at };
  }
  const sends: Array<Promise<unknown>> = [];
  for (let i = 0; i < SPREAD_MESSAGES; i += 1000) sends.push(producer.send({ topic, messages: messages.slice(i, i + 1000) }));
  await with_timeout(Promise.all(sends), part_deadline - Date.now(), 'spread: producing');
  const produced_ms = Date.now() - start;
  say(`  produced and acknowledged in ${secs(produced_ms)}`);
  await wait_for_all(tracker, part_deadline, crashed, 'spread');
  const wall_ms = tracker.last_receipt - start;
  await producer.disconnect();
  await consumer.disconnect();
  const stopped = await stop_broker(broker, 'spread');

  const l = lateness_figures(tracker);
  table(
    ['figure', 'value'],
    [
      ['messages received', `${f0(tracker.received)} of ${f0(SPREAD_MESSAGES)}`],
      ['early (must be 0)', tracker.early],
      ['delivered twice', tracker.duplicates],
      ['produce time (all acknowledged)', secs(produced_ms)],
      ['lateness p50', `${f0(l.p50)} ms`],
      ['lateness p99', `${f0(l.p99)} ms`],
      ['lateness p99.9', `${f0(l.p999)} ms`],
      ['lateness max', `${f0(l.max)} ms`],
      ['wall time (first send to last receipt)', secs(wall_ms)],
    ],
  );
  say('Lateness is receipt in the consumer minus deliverAt: it includes the consumer\'s fetch path.');
  check_counts(tracker, 'spread');
  report_broker_output(broker.output(), 'spread');
  if (stopped.code !== 0) say(`broker exit code ${String(stopped.code)} after SIGTERM`);
}

// ---------------------------------------------------------------- part 2: steady rate

interface RateFigures {
  p99: number;
  max: number;
}

async function part_rate(): Promise<RateFigures> {
  const total = RATE * RATE_S;
  const part_deadline = Date.now() + RATE_S * 1000 + PART_GRACE_MS;
  say(`\n## 2. Steady rate: ${f0(RATE)} delayed msg/s for ${RATE_S} s, delayMs ${RATE_DELAY_MIN_MS}-${RATE_DELAY_MAX_MS}`);
  const { broker } = await start_broker();
  const sluice = new Sluice({ brokers: [broker.bootstrap], clientId: 'bench-delayed' });
  const topic = 'rate';
  const admin = sluice.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
  await admin.disconnect();
  const tracker = new Lateness(total);
  const { consumer, crashed } = await start_consumer(sluice, topic, tracker);
  const producer = sluice.producer();
  await producer.connect();

  const random = random_from(20261130);
  const sends: Array<Promise<unknown>> = [];
  const ack_ms: number[] = [];
  /** Acknowledgement time minus send time, by message number. */
  const ack_delay = new Float64Array(total);
  let send_failure: unknown = null;
  let sent = 0;
  let ticks = 0;
  const start = Date.now();
  const sending_done = new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      ticks++;
      const now = Date.now();
      const owed = Math.min(total, Math.floor(((now - start) * RATE) / 1000));
      if (owed > sent) {
        const messages: Message[] = [];
        for (; sent < owed; sent++) {
          const delay = RATE_DELAY_MIN_MS + Math.floor(random() * (RATE_DELAY_MAX_MS - RATE_DELAY_MIN_MS + 1));
          tracker.due[sent] = now + delay;
          messages.push({ key: null, value: value_of(sent), delayMs: delay });
        }
        const sent_at = performance.now();
        const [first, end] = [sent - messages.length, sent];
        sends.push(
          producer.send({ topic, messages }).then(
            () => {
              const took = performance.now() - sent_at;
              ack_ms.push(took);
              ack_delay.fill(took, first, end);
            },
            (error: unknown) => (send_failure ??= error),
          ),
        );
      }
      if (sent >= total || now > part_deadline || send_failure) {
        clearInterval(timer);
        resolve();
      }
    }, RATE_TICK_MS);
  });
  await sending_done;
  const send_ms = Date.now() - start;
  if (send_failure) throw new PartFailed(`rate: a send failed: ${String(send_failure)}`);
  if (sent < total) throw new PartFailed(`rate: time limit passed with ${f0(sent)} of ${f0(total)} messages sent`);
  await with_timeout(Promise.all(sends), part_deadline - Date.now(), 'rate: acknowledgements');
  await wait_for_all(tracker, part_deadline, crashed, 'rate', () => send_failure);
  await producer.disconnect();
  await consumer.disconnect();
  const stopped = await stop_broker(broker, 'rate');

  const l = lateness_figures(tracker);
  const acks = Float64Array.from(ack_ms).sort();
  // The broker's due time lies between send + delay and acknowledgement + delay: lateness from the
  // acknowledgement is a lower bound of the lateness the broker and the consumer add.
  const from_ack = new Float64Array(tracker.received);
  let n = 0;
  for (let i = 0; i < total; i++) if (!Number.isNaN(tracker.received_at[i]!)) from_ack[n++] = tracker.received_at[i]! - tracker.due[i]! - ack_delay[i]!;
  from_ack.sort();
  table(
    ['figure', 'value'],
    [
      ['messages sent', `${f0(sent)} in ${secs(send_ms)} (${f0(sent / (send_ms / 1000))} msg/s, ${f0(ticks)} ticks)`],
      ['send() to acknowledgement p50 / p99 / max', `${f1(percentile(acks, 0.5))} / ${f1(percentile(acks, 0.99))} / ${f1(acks[acks.length - 1] ?? NaN)} ms`],
      ['messages received', f0(tracker.received)],
      ['early (must be 0)', tracker.early],
      ['delivered twice', tracker.duplicates],
      ['lateness p50', `${f0(l.p50)} ms`],
      ['lateness p99', `${f0(l.p99)} ms`],
      ['lateness p99.9', `${f0(l.p999)} ms`],
      ['lateness max', `${f0(l.max)} ms`],
      ['lateness min', `${f0(l.min)} ms`],
      ['lateness from the acknowledgement (lower bound) p50 / p99 / max', `${f0(percentile(from_ack, 0.5))} / ${f0(percentile(from_ack, 0.99))} / ${f0(from_ack[from_ack.length - 1] ?? NaN)} ms`],
    ],
  );
  say('Lateness is receipt in the consumer minus (send time + delayMs): it includes the produce path (the broker counts the delay from');
  say('its receive time) and the consumer\'s fetch path.');
  check_counts(tracker, 'rate');
  report_broker_output(broker.output(), 'rate');
  if (stopped.code !== 0) say(`broker exit code ${String(stopped.code)} after SIGTERM`);
  return { p99: l.p99, max: l.max };
}

// ---------------------------------------------------------------- part 3: many pending

interface PendingFigures {
  growth: number;
  per_message: number;
}

/** Set as soon as the pending messages are measured (before the restart, which may fail). */
let pending = null as PendingFigures | null;

/** `sluice start` on an existing data directory, timed to its ready line, within `limit_ms`. */
async function restart_broker(data_dir: string, limit_ms: number): Promise<{ child: ChildProcess; port: number; ready_ms: number; output: () => string; stop(): Promise<number | null>; kill(): Promise<void> }> {
  const started = performance.now();
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'sluice.js'), 'start', '--data', data_dir, '--kafka', '127.0.0.1:0', '--http', 'off', '--log-level', 'warn', ...BROKER_ARGS], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const handle = {
    child,
    port: 0,
    ready_ms: 0,
    output: () => output,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      return exited;
    },
    kill: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
  live_brokers.add(handle);
  // VmHWM cannot be read once the process is gone: sample the RSS while it loads.
  let rss_seen = 0;
  const sampler = setInterval(() => {
    try {
      rss_seen = Math.max(rss_seen, memory_of(child.pid!).rss);
    } catch {
      // exited
    }
  }, 250);
  handle.port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new PartFailed(`pending: the restarted broker was not ready within ${secs(limit_ms)}:\n${output}`)), limit_ms);
    child.stdout!.on('data', () => {
      const match = /ready kafka=[^:\s]+:(\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new PartFailed(`pending: the restarted broker exited with ${code} (${String(child.signalCode)}) ${f0(performance.now() - started)} ms after it was spawned, before it was ready (largest RSS sampled: ${mb(rss_seen)} MB):\n${output.slice(-4000)}`));
    });
  }).finally(() => clearInterval(sampler));
  handle.ready_ms = performance.now() - started;
  return handle;
}

async function part_pending(): Promise<void> {
  say(`\n## 3. Memory with ${f0(PENDING)} pending delayed messages (due in 1 hour), batches of ${f0(PENDING_BATCH)}`);
  const { broker, ready_ms: fresh_ready_ms } = await start_broker();
  const pid = broker.child.pid!;
  const host = '127.0.0.1';
  const topic = 'pending';
  const admin = await Connection.connect(host, broker.port, { max_in_flight: 1 });
  await create_topic(admin, topic, 1);

  // One batch of PENDING_BATCH records (and one of the remainder), each with the delay header.
  const value = Buffer.alloc(VALUE_BYTES, 0x61);
  const header = [{ key: 'sluice-delay-ms', value: Buffer.from(String(PENDING_DELAY_MS)) }];
  const request_of = (count: number) => {
    const timestamp_ms = Date.now();
    const records: BatchRecord[] = Array.from({ length: count }, () => ({ key: null, value, timestamp_ms, headers: header }));
    const batch = encode_record_batch(records);
    return { request: produce_request(topic, [{ partition: 0, batch }]), bytes: batch.length };
  };
  const full = request_of(Math.min(PENDING_BATCH, PENDING));
  const remainder = PENDING % PENDING_BATCH;
  const last = remainder > 0 && PENDING > PENDING_BATCH ? request_of(remainder) : full;
  const batches = Math.ceil(PENDING / PENDING_BATCH);

  await sleep(SETTLE_MS);
  const before = memory_of(pid);
  say(`  broker RSS before producing: ${mb(before.rss)} MB; producing ${f0(batches)} batches of ${f0(full.bytes)} B ...`);

  const connections = await Promise.all(Array.from({ length: PENDING_CONNECTIONS }, () => Connection.connect(host, broker.port, { max_in_flight: PENDING_IN_FLIGHT })));
  let next_batch = 0;
  let acknowledged = 0;
  let failure: unknown = null;
  const started = performance.now();
  const deadline = started + PENDING_PRODUCE_LIMIT_MS;
  let next_progress = started + PROGRESS_EVERY_MS;
  const produce_on = async (connection: Connection) => {
    const in_flight = new Set<Promise<void>>();
    while (next_batch < batches && failure === null && performance.now() < deadline) {
      const is_last = next_batch === batches - 1;
      const count = is_last && remainder > 0 ? remainder : Math.min(PENDING_BATCH, PENDING);
      const { request } = is_last ? last : full;
      next_batch++;
      const sending: Promise<void> = connection
        .request(request)
        .then((response) => {
          check_produce_response(response, topic, 1);
          acknowledged += count;
        })
        .catch((error: unknown) => void (failure ??= error))
        .finally(() => in_flight.delete(sending));
      in_flight.add(sending);
      if (in_flight.size >= PENDING_IN_FLIGHT) await Promise.race(in_flight);
      if (performance.now() >= next_progress) {
        next_progress += PROGRESS_EVERY_MS;
        say(`  ... ${f0(acknowledged)} acknowledged after ${secs(performance.now() - started)}, broker RSS ${mb(memory_of(pid).rss)} MB`);
      }
    }
    await Promise.all(in_flight);
  };
  try {
    await with_timeout(Promise.all(connections.map(produce_on)), PENDING_PRODUCE_LIMIT_MS + PART_GRACE_MS, 'pending: producing');
  } finally {
    for (const connection of connections) connection.close();
  }
  const produce_ms = performance.now() - started;
  if (failure) throw new PartFailed(`pending: a Produce request failed after ${f0(acknowledged)} acknowledged: ${failure instanceof Error ? failure.message : String(failure)}`);
  if (acknowledged < PENDING) throw new PartFailed(`pending: the ${secs(PENDING_PRODUCE_LIMIT_MS)} limit passed with ${f0(acknowledged)} of ${f0(PENDING)} acknowledged`);
  const acked = memory_of(pid);
  await sleep(SETTLE_MS);
  const settled = memory_of(pid);
  const [delivered_early] = await end_offsets(admin, topic, 1);
  admin.close();
  const stopped = await stop_broker(broker, 'pending');
  report_broker_output(broker.output(), 'pending, first broker');
  if (stopped.code !== 0) say(`broker exit code ${String(stopped.code)} after SIGTERM`);
  const disk = du_bytes(broker.data_dir);
  const growth = settled.rss - before.rss;
  pending = { growth, per_message: growth / PENDING };
  table(
    ['figure', 'value'],
    [
      ['pending messages acknowledged', f0(acknowledged)],
      ['produce time', secs(produce_ms)],
      ['produce rate', `${f0(acknowledged / (produce_ms / 1000))} msg/s`],
      ['records in the topic (must be 0: none due yet)', f0(delivered_early ?? -1)],
      ['broker RSS before producing', `${mb(before.rss)} MB`],
      ['broker RSS when all were acknowledged', `${mb(acked.rss)} MB`],
      [`broker RSS ${SETTLE_MS / 1000} s later`, `${mb(settled.rss)} MB`],
      ['broker peak RSS (VmHWM)', `${mb(settled.peak)} MB`],
      ['RSS growth (settled - before)', `${mb(growth)} MB`],
      ['RSS growth per pending message', `${f1(growth / PENDING)} B`],
      ['data directory on disk', `${mb(disk)} MB`],
      ['clean stop (SIGTERM to exit)', `${f0(stopped.ms)} ms`],
    ],
  );

  say(`  restarting on ${broker.data_dir} ...`);
  const again = await restart_broker(broker.data_dir, RESTART_LIMIT_MS);
  const restarted = memory_of(again.child.pid!);
  await sleep(SETTLE_MS);
  const restarted_settled = memory_of(again.child.pid!);
  const check = await Connection.connect(host, again.port, { max_in_flight: 1 });
  const [delivered_after_restart] = await end_offsets(check, topic, 1);
  check.close();
  const stopped_again = await stop_broker(again, 'restarted');
  report_broker_output(again.output(), 'pending, restarted broker');
  if (stopped_again.code !== 0) say(`restarted broker exit code ${String(stopped_again.code)} after SIGTERM`);

  table(
    ['figure (restart)', 'value'],
    [
      ['restart with them pending: spawn to ready', `${f0(again.ready_ms)} ms (fresh empty broker: ${f0(fresh_ready_ms)} ms)`],
      ['records in the topic after the restart (must be 0)', f0(delivered_after_restart ?? -1)],
      ['RSS after the restart: at ready', `${mb(restarted.rss)} MB`],
      [`RSS after the restart: ${SETTLE_MS / 1000} s later`, `${mb(restarted_settled.rss)} MB`],
      ['peak RSS during the restart (VmHWM)', `${mb(restarted_settled.peak)} MB`],
    ],
  );
}

// ---------------------------------------------------------------- main

let failed = false;
let rate: RateFigures | null = null;
say(`# Delayed delivery benchmark (${new Date().toISOString()}, node ${process.version}, broker --durability fsync)`);
try {
  for (const part of PARTS) {
    if (SKIP.has(part)) continue;
    try {
      if (part === 'spread') await part_spread();
      if (part === 'rate') rate = await part_rate();
      if (part === 'pending') await part_pending();
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
  const rows: Array<Array<string>> = [];
  if (rate) {
    const p99_ok = rate.p99 <= TARGET_P99_MS;
    const max_ok = rate.max <= TARGET_MAX_MS;
    rows.push([`lateness p99 <= ${TARGET_P99_MS} ms at ${f0(RATE)} delayed msg/s`, `${f0(rate.p99)} ms`, p99_ok ? `met (${f0(TARGET_P99_MS - rate.p99)} ms to spare)` : `missed by ${f0(rate.p99 - TARGET_P99_MS)} ms`]);
    rows.push([`lateness max <= ${f0(TARGET_MAX_MS)} ms at ${f0(RATE)} delayed msg/s`, `${f0(rate.max)} ms`, max_ok ? `met (${f0(TARGET_MAX_MS - rate.max)} ms to spare)` : `missed by ${f0(rate.max - TARGET_MAX_MS)} ms`]);
  }
  if (pending) {
    // Below a million pending, fixed costs (caches, heap) dominate the growth: no verdict then.
    const at_target = pending.per_message * TARGET_PENDING;
    const scaled = PENDING !== TARGET_PENDING;
    const ok = at_target <= TARGET_RSS_BYTES;
    rows.push([
      `RSS growth <= ${mb(TARGET_RSS_BYTES)} MB for ${f0(TARGET_PENDING)} pending`,
      scaled ? `${mb(pending.growth)} MB for ${f0(PENDING)} (${f1(pending.per_message)} B each; ${mb(at_target)} MB scaled linearly to ${f0(TARGET_PENDING)})` : `${mb(pending.growth)} MB (${f1(pending.per_message)} B each)`,
      PENDING < 1_000_000
        ? 'not judged: too few pending (fixed costs dominate); run with --pending 10000000'
        : ok
          ? `met (${mb(TARGET_RSS_BYTES - at_target)} MB to spare${scaled ? ', scaled' : ''})`
          : `missed by ${mb(at_target - TARGET_RSS_BYTES)} MB${scaled ? ' (scaled)' : ''}`,
    ]);
  }
  if (rows.length > 0) table(['target', 'measured', 'verdict'], rows);
  else say('(no part with a target ran)');
} finally {
  for (const broker of live_brokers) await broker.kill().catch(() => undefined);
  for (const dir of data_dirs) fs.rmSync(dir, { recursive: true, force: true });
}
process.exit(failed || early_or_duplicates ? 1 : 0);
