// `npm run faults -- --minutes N --seed S [--faults a,b]`: a 3-broker cluster in the network lab,
// idempotent producers writing while a seeded schedule injects one fault after another, sometimes
// two of different kinds at once (faults/nemesis.ts), then everything healed, the topic read back
// by a consumer and from every replica's files, and the history checked. Broker logs, the history
// and the verdict are kept in the results folder; the exit code is 1 when the checker finds a
// failure.
import { setTimeout as sleep } from 'node:timers/promises';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { check_history, describe_failures } from './checker/check.ts';
import type { HistoryOp } from './checker/history.ts';
import { LEASE_TTL_MS, LabCluster, etcd_missing, faketime_missing, sweep_disks } from './lab_cluster.ts';
import { type Injected, type Nemesis, type Random, fault_family, nemeses } from './nemesis.ts';
import { network_missing, sweep } from './net.ts';
import { Sluice } from '../src/sdk/index.ts';
import { group_member } from './group_workload.ts';
import { queue_members } from './queue_workload.ts';
import { AMQP_QUEUE, amqp_workload } from './amqp_workload.ts';
import { replica_history } from './replicas.ts';
import { kcat_missing, kcat_producer } from './kcat_workload.ts';
import { DELAYED_TOPIC, delayed_workload } from './delayed_workload.ts';
import { TXN_INPUT_TOPIC, TXN_OUTPUT_TOPIC, txn_workload } from './txn_workload.ts';
import { COMPACTED_CONFIGS, COMPACTED_TOPIC, compaction_workload } from './compaction_workload.ts';
import { HALF_TOPIC, half_workload } from './half_workload.ts';
import { QUOTA_TOPIC, SECRET_TOPIC, security_workload } from './security_workload.ts';
import {
  TOPIC,
  create_topic,
  high_watermarks,
  isr_whole_within,
  lab_kafka,
  produce_loop,
  read_all,
  wait_for_full_isr,
} from './workload.ts';
import { random_from } from '../bench/seeded_random.ts';
import type { Kafka } from 'kafkajs';

const ROOT = path.resolve(import.meta.dirname, '..');
const LAB = 100;
const BROKERS = 3;
const PRODUCERS = 3;
const GROUP_MEMBERS = 2;
/** Quiet time between faults. */
const GAP_MS = 1500;
/** How often a fault comes with a second one of another kind at the same time. */
const MIXED_SHARE = 0.3;

/** How long disk damage waits for every replica to be in sync before it is left out. */
const DISK_DAMAGE_WAIT_MS = 10_000;

const family = (nemesis: Nemesis) => fault_family(nemesis.name);

/**
 * A broker's clock may stay wrong this long after its clock file was healed: with a cache
 * duration of 1 s libfaketime reads the file every 2 s (measured: the new offset showed 0.1–2.0 s
 * after the write). A window of 1 s let messages a broker stamped with its still-wrong clock
 * count as delivered early (seed 707).
 */
const CLOCK_READ_MS = 2500;
/** Operations written to history.jsonl at a time. */
const HISTORY_SLICE_OPS = 10_000;

/**
 * One fault (sometimes two at once, seeded), held for its time, then undone; a clock fault goes
 * into the history with how wrong the clock was.
 */
async function inject(
  cluster: LabCluster,
  kinds: Nemesis[],
  next: Random,
  log: (line: string) => void,
  at: () => number,
  history: HistoryOp[],
  replicas_in_sync: () => Promise<boolean>,
) {
  const first = kinds[Math.floor(next() * kinds.length)]!;
  const others = kinds.filter((k) => family(k) !== family(first));
  let chosen =
    next() < MIXED_SHARE && others.length > 0 ? [first, others[Math.floor(next() * others.length)]!] : [first];
  // What the in-sync replicas hold is kept; damage to the disk of one while another's copy is
  // damaged or behind can leave no whole copy at all, which no replication survives (seed 2323:
  // a lost tail on one broker and a corrupt batch on the other in-sync one, the third out of the
  // ISR). So disks are damaged one at a time, and only with every replica in sync.
  const damages_disk = (n: Nemesis) => family(n) === 'disk';
  if (chosen.some(damages_disk) && !(await replicas_in_sync())) {
    log('disk damage left out: not every replica is in sync');
    chosen = chosen.filter((n) => !damages_disk(n));
    if (chosen.length === 0) return [];
  }
  const injected: Injected[] = [];
  const from_ms = at();
  try {
    for (const nemesis of chosen) {
      const fault = await nemesis.start(cluster, next);
      injected.push(fault);
      log(`${nemesis.name}: ${fault.what}`);
    }
    await sleep(Math.max(...chosen.map((n) => n.hold_ms)));
  } finally {
    // The network first: a broker restarted while cut off from etcd exits at once (as it should);
    // then the disk: one restarted on a full disk cannot recover its logs and exits too.
    const rank = (n: Nemesis) => (family(n) === 'network' ? 0 : n.name === 'full_disk' ? 1 : 2);
    const order = chosen.map((n, i) => [rank(n), injected[i]] as const).sort((a, b) => a[0] - b[0]);
    for (const [, fault] of order) await fault?.heal();
    log(`healed ${chosen.map((n) => n.name).join(' + ')}`);
    const to_ms = at() + CLOCK_READ_MS;
    for (const { clock } of injected) {
      if (clock)
        history.push({
          kind: 'clock_fault',
          node_id: clock.node_id,
          from_ms,
          to_ms,
          error_ms: clock.error_ms(to_ms - from_ms),
        });
    }
  }
  return chosen.map((n) => n.name);
}

/** The last `count` lines of each broker's log that match `pattern` (for a failure's first look). */
function log_lines(dir: string, brokers: number, pattern: RegExp, count: number): string[] {
  const out: string[] = [];
  for (let id = 1; id <= brokers; id++) {
    const file = path.join(dir, `b${id}.log`);
    if (!fs.existsSync(file)) continue;
    const lines = fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .filter((line) => pattern.test(line));
    out.push(...lines.slice(-count).map((line) => `  b${id}: ${line.slice(0, 400)}`));
  }
  return out;
}

function parse_options() {
  const { values } = parseArgs({
    options: {
      minutes: { type: 'string', default: '1' },
      seed: { type: 'string' },
      out: { type: 'string' },
      faults: { type: 'string' },
    },
  });
  const minutes = Number(values.minutes);
  const seed = values.seed !== undefined ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31);
  const all = nemeses(LEASE_TTL_MS);
  const names = values.faults?.split(',') ?? all.map((n) => n.name);
  const kinds = names.map((name) => {
    const found = all.find((n) => n.name === name);
    if (!found) throw new Error(`unknown fault ${name}; known: ${all.map((n) => n.name).join(', ')}`);
    return found;
  });
  if (!(minutes > 0) || !Number.isInteger(seed))
    throw new Error('usage: npm run faults -- [--minutes N] [--seed S] [--faults a,b] [--out DIR]');
  const out = path.resolve(
    values.out ?? path.join(ROOT, 'faults-results', new Date().toISOString().replace(/[:.]/g, '-')),
  );
  return {
    minutes,
    seed,
    kinds,
    out,
    replay: `npm run faults -- --minutes ${minutes}${values.faults ? ` --faults ${values.faults}` : ''}`,
  };
}

async function main(): Promise<number> {
  const { minutes, seed, kinds, out: dir, replay } = parse_options();
  const missing = (await network_missing()) ?? etcd_missing() ?? faketime_missing() ?? kcat_missing();
  if (missing) throw new Error(`the fault suite cannot run here: ${missing}`);
  fs.mkdirSync(dir, { recursive: true });
  const journal = fs.createWriteStream(path.join(dir, 'run.log'));
  const started_ms = Date.now();
  const log = (line: string) => {
    const text = `${((Date.now() - started_ms) / 1000).toFixed(1)}s ${line}`;
    journal.write(`${text}\n`);
    process.stderr.write(`${text}\n`);
  };
  log(`seed ${seed}, ${minutes} min, faults ${kinds.map((k) => k.name).join(',')}, results in ${dir}`);
  await sweep();
  sweep_disks();
  const cluster = await LabCluster.start(LAB, BROKERS, dir);
  // Interrupted (Ctrl-C, a timeout): the namespaces, mounts and processes go all the same.
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => void cluster.stop().finally(() => process.exit(130)));
  const history: HistoryOp[] = [];
  const faults: Record<string, number> = {};
  try {
    const kafka = lab_kafka(cluster.bootstrap, 'faults');
    await create_topic(kafka);
    await create_topic(kafka, DELAYED_TOPIC, 1);
    await create_topic(kafka, AMQP_QUEUE, 1);
    await create_topic(kafka, TXN_INPUT_TOPIC);
    await create_topic(kafka, TXN_OUTPUT_TOPIC);
    await create_topic(kafka, HALF_TOPIC);
    await create_topic(kafka, SECRET_TOPIC, 1);
    await create_topic(kafka, QUOTA_TOPIC);
    await create_topic(kafka, COMPACTED_TOPIC, undefined, COMPACTED_CONFIGS);
    await put_secret(kafka);
    const end_ms = Date.now() + minutes * 60_000;
    const until = () => Date.now() < end_ms;
    const { writing, consuming, drains } = await start_workloads(cluster, kafka, seed, {
      started_ms,
      until,
      history,
      dir,
      log,
    });
    const next = random_from(seed);
    const in_sync = () => isr_whole_within(kafka, BROKERS, DISK_DAMAGE_WAIT_MS);
    while (Date.now() < end_ms) {
      await sleep(GAP_MS);
      for (const name of await inject(cluster, kinds, next, log, () => Date.now() - started_ms, history, in_sync))
        faults[name] = (faults[name] ?? 0) + 1;
    }
    await Promise.all([...writing, ...consuming]);
    log('restoring the cluster, reading the topic back');
    await cluster.restore();
    await wait_for_full_isr(kafka, BROKERS);
    await drain_workloads(drains, dir, log);
    for (const op of await read_all(kafka, 'final-reader', started_ms)) history.push(op); // too many to spread
    const ends = await high_watermarks(kafka);
    await sleep(1000); // followers learn the last high watermark on their next fetch
    await cluster.stop_brokers();
    const dirs = new Map([...cluster.brokers.values()].map((b) => [b.node_id, b.data_dir]));
    for (const op of replica_history(dirs, TOPIC, ends, Date.now() - started_ms)) history.push(op);
  } finally {
    write_history(path.join(dir, 'history.jsonl'), history);
    await cluster.stop();
  }
  const result = check_history(history);
  const verdict = describe_failures(result, seed, replay);
  log(`faults injected: ${JSON.stringify(faults)}`);
  log(verdict);
  fs.writeFileSync(path.join(dir, 'verdict.json'), JSON.stringify({ seed, minutes, faults, ...result }, null, 1));
  journal.end();
  return result.valid ? 0 : 1;
}

interface RunContext {
  started_ms: number;
  until: () => boolean;
  history: HistoryOp[];
  dir: string;
  log: (line: string) => void;
}

/** Every workload started: what writes and consumes until the end, and what drains after it. */
async function start_workloads(cluster: LabCluster, kafka: Kafka, seed: number, run: RunContext) {
  const { started_ms, until, history, dir, log } = run;
  const writing = Array.from({ length: PRODUCERS }, (_, i) => produce_loop(kafka, `p${i}`, started_ms, until, history));
  writing.push(kcat_producer(cluster.bootstrap, started_ms, until, history, path.join(dir, 'kcat.log')));
  const queue = queue_members(cluster.bootstrap, started_ms, history);
  const amqp = await amqp_workload(cluster.amqp_targets, started_ms, until, history);
  writing.push(amqp.publishing);
  const sdk = new Sluice({ brokers: cluster.bootstrap, clientId: 'faults-group' });
  const lifetimes = random_from(seed + 1);
  const consuming = Array.from({ length: GROUP_MEMBERS }, (_, i) =>
    group_member(sdk, `member-${i}`, started_ms, until, lifetimes, history),
  );
  for (let i = 0; i < GROUP_MEMBERS; i++)
    consuming.push(group_member(sdk, `member-848-${i}`, started_ms, until, lifetimes, history, 'consumer'));
  const delayed = delayed_workload(sdk, started_ms, until, random_from(seed + 2), history, log);
  const txns = txn_workload(kafka, sdk, started_ms, until, history);
  writing.push(txns.writing);
  const half = half_workload(cluster.bootstrap, started_ms, until, seed, history, log);
  writing.push(half.writing);
  const secure = { plain: cluster.bootstrap, secure: cluster.secure_bootstrap, ca: cluster.security!.ca };
  const security = await security_workload(secure, started_ms, until, history);
  writing.push(security.running);
  const compaction = compaction_workload(kafka, sdk, started_ms, until, history);
  writing.push(compaction.writing);
  return { writing, consuming, drains: { queue, amqp, delayed, txns, half, security, compaction } };
}

/** Lets each workload finish what it still owes (the faults healed), saying what never came. */
async function drain_workloads(
  workloads: Record<
    'queue' | 'amqp' | 'delayed' | 'txns' | 'half' | 'security' | 'compaction',
    { drain(): Promise<number> }
  >,
  dir: string,
  log: (line: string) => void,
): Promise<void> {
  const { queue, amqp, delayed, txns, half, security, compaction } = workloads;
  log('draining: the queue');
  const unaccepted = await queue.drain();
  if (unaccepted > 0) log(`queue: ${unaccepted} acknowledged writes never accepted`);
  log('draining: amqp');
  const unreceived = await amqp.drain();
  if (unreceived > 0) log(`amqp: ${unreceived} confirmed messages never delivered`);
  log('draining: delayed messages');
  const undelivered = await delayed.drain();
  if (undelivered > 0) {
    log(`delayed: ${undelivered} acknowledged messages never delivered`);
    for (const line of log_lines(dir, BROKERS, /delayed|coordinator (stopped|could not)/, 12)) log(line);
  }
  log('draining: transactions');
  const uncopied = await txns.drain();
  if (uncopied > 0) log(`transactions: the loop left ${uncopied} input records uncopied (the final read decides)`);
  log('draining: half messages');
  const unsettled = await half.drain();
  if (unsettled > 0) log(`half messages: ${unsettled} acknowledged never settled (the final reads decide)`);
  log('draining: the compacted topic');
  const unread = await compaction.drain();
  if (unread > 0) log(`compaction: ${unread} partitions of the compacted topic not read to their end`);
  log('draining: users and broker configs on every broker');
  const diverged = await security.drain();
  if (diverged > 0) log(`security: ${diverged} logins or configs went against the last acknowledged change`);
}

/** A record in the topic the security workload's reader may not see: something to leak. */
async function put_secret(kafka: Kafka): Promise<void> {
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic: SECRET_TOPIC, acks: -1, messages: [{ value: 'not for the reader' }] });
  await producer.disconnect();
}

/**
 * One JSON line per operation, written a slice at a time: a 15-minute run's history as one
 * string passed V8's longest string (seed 2020: "Invalid string length").
 */
function write_history(file: string, history: readonly HistoryOp[]): void {
  const fd = fs.openSync(file, 'w');
  try {
    for (let i = 0; i < history.length; i += HISTORY_SLICE_OPS) {
      const lines = history.slice(i, i + HISTORY_SLICE_OPS).map((op) => `${JSON.stringify(op)}\n`);
      fs.writeSync(fd, lines.join(''));
    }
  } finally {
    fs.closeSync(fd);
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(2);
  },
);
