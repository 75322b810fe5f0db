// Replicated produce benchmark: acks=all throughput of one broker beside a 3-node cluster.
// Prints figures; it is not a test.
//
//   npm run bench:cluster                                   # 100 B and 1 KiB, both systems (about 1 minute)
//   npm run bench:cluster -- --seconds 5 --sizes 100        # a quick look
//   npm run -s bench:cluster -- --json > cluster.json       # tables on stderr, one JSON object on stdout
//   npm run bench:cluster -- --broker-cpu-prof prof         # a V8 CPU profile of each broker in prof/
//
// Two systems, one after the other, each started fresh; its processes and directories are removed
// before the next one starts (data left on the disk slows the next system's fsync'd writes):
//   single   one broker (`sluice start --durability fsync`, no etcd): a topic of --partitions
//            partitions, replication factor 1.
//   cluster  an etcd on loopback (test/support/etcd.ts) and 3 brokers (`sluice start --etcd ...
//            --node-id N --config FILE --http off`, durability fsync), cluster config leaseTtlMs
//            3000, replicationFactor 3, replicaLagTimeMaxMs 10000; a topic of --partitions
//            partitions, replication factor 3, min.insync.replicas=2. Measuring starts only once
//            Metadata shows every partition with a leader and 3 members in its ISR, so acks=all
//            waits for all three replicas. The producers bootstrap with all three brokers.
// Brokers are started directly (no proxies in front of them), each on its own temporary data
// directory. All processes share this machine's cores with the producers.
//
// Producers: --producers (4) SDK producers (src/sdk, `Sluice`), each with its own connections,
// producer defaults (idempotent, lingerMs 5, batchBytes 1,000,000, maxInFlightRequests 5) and
// `acks: -1`, driven as the side-by-side harness drives the SDK for its publish workload: send()
// calls of --send-messages (1,000) messages of one shared value, --in-flight (8) calls outstanding
// per producer, unkeyed (the default partitioner spreads them round-robin over the partitions).
// For each size: a warm-up of --warmup-seconds (3) on the same topic, then the measured run, which
// stops starting sends after --seconds (20) or once --messages (2,000,000) were started, whichever
// comes first, and is timed until the last acknowledgement. msg/s counts acknowledged messages;
// MB/s counts their payload (MB is 10^6 bytes). Broker CPU is user+system time from /proc over the
// measured run, per process (100% is one core).
// Every wait has a time limit; every process and directory is removed at the end, also on errors
// and on SIGINT/SIGTERM. Exit code 1 when a system failed.
import { execFileSync } from 'node:child_process';
import { PageCacheControl } from './page_cache.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bench_args, positive_int as positive_int_or_exit } from './cli_args.ts';
import { pump_sends } from './pump_sends.ts';
import { Sluice, type Producer } from '../src/sdk/index.ts';
import { new_data_dir, start_broker_process, type BrokerProcess } from '../test/support/broker_process.ts';
import { free_port, start_etcd, type EtcdProcess, ETCD_BINARY } from '../test/support/etcd.ts';

// ---------------------------------------------------------------- options

const USAGE = `usage: npm run bench:cluster -- [options]
  --seconds S              measured run per size: stop starting sends after S seconds (default 20)
  --messages N             ... or after N messages, whichever first (default 2000000)
  --warmup-seconds S       warm-up per size on the same topic (default 3)
  --partitions N           partitions of the topic (default 6)
  --sizes LIST             message sizes in bytes, comma-separated (default 100,1024)
  --producers N            SDK producers, each with its own connections (default 4)
  --in-flight N            send() calls outstanding per producer (default 8)
  --send-messages N        messages per send() call (default 1000)
  --systems LIST           single,cluster (default both)
  --cluster-durability P   the cluster brokers' --durability: fsync (default, as the single node),
                           interval:MS or none (replication instead of each replica's fsync)
  --broker-cpu-prof DIR    write a V8 CPU profile of each broker to DIR (summarize with
                           node --import tsx bench/harness/sluice/profile_summary.ts DIR/*.cpuprofile)
  --broker-node-options S  NODE_OPTIONS for the broker processes (only flags NODE_OPTIONS allows),
                           e.g. --broker-node-options="--import=./bench/harness/sluice/io_probe.mjs"
  --page-cache MODE        drop (default): before each size's warm-up, sync and drop the page cache
                           so every run starts with the same cache; hold: also every 3 s while
                           producing (new page-cache pages are then ones freed a moment ago, as
                           in a page cache that has long been full; see docs/benchmarks.md);
                           keep: leave it alone. drop and hold need root
  --json                   print one JSON object on stdout (the tables go to stderr)
  -h, --help               this text`;

const OPTIONS = {
  seconds: { type: 'string', default: '20' },
  messages: { type: 'string', default: '2000000' },
  'warmup-seconds': { type: 'string', default: '3' },
  partitions: { type: 'string', default: '6' },
  sizes: { type: 'string', default: '100,1024' },
  producers: { type: 'string', default: '4' },
  'in-flight': { type: 'string', default: '8' },
  'send-messages': { type: 'string', default: '1000' },
  systems: { type: 'string', default: 'single,cluster' },
  'cluster-durability': { type: 'string', default: 'fsync' },
  'broker-cpu-prof': { type: 'string', default: '' },
  'broker-node-options': { type: 'string', default: '' },
  'page-cache': { type: 'string', default: 'drop' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

const args = bench_args(OPTIONS, USAGE);
const positive_int = (name: string, text: string, max: number) => positive_int_or_exit(name, text, max, USAGE);

const SECONDS = positive_int('seconds', args.seconds, 3600);
const MESSAGES = positive_int('messages', args.messages, 100_000_000);
const WARMUP_SECONDS = args['warmup-seconds'] === '0' ? 0 : positive_int('warmup-seconds', args['warmup-seconds'], 600);
const PARTITIONS = positive_int('partitions', args.partitions, 1000);
const PRODUCERS = positive_int('producers', args.producers, 64);
const IN_FLIGHT = positive_int('in-flight', args['in-flight'], 1000);
const SEND_MESSAGES = positive_int('send-messages', args['send-messages'], 100_000);
const SIZES = args.sizes.split(',').map((s) => positive_int('sizes', s.trim(), 1024 * 1024));
const SYSTEM_IDS = ['single', 'cluster'] as const;
type SystemId = (typeof SYSTEM_IDS)[number];
const SYSTEMS = args.systems.split(',').map((s) => s.trim());
for (const id of SYSTEMS) {
  if (!(SYSTEM_IDS as readonly string[]).includes(id)) {
    console.error(`--systems: unknown system ${JSON.stringify(id)} (systems: ${SYSTEM_IDS.join(', ')})\n${USAGE}`);
    process.exit(2);
  }
}
/**
 * A preload that profiles the broker it runs in: node refuses --cpu-prof in NODE_OPTIONS (the only
 * way to give start_broker_process's node flags), so the profiler is started through node:inspector
 * instead and the profile written when the process exits, named after its --node-id.
 */
const CPU_PROFILE_PRELOAD = `
import { Session } from 'node:inspector';
import fs from 'node:fs';
import path from 'node:path';
const dir = process.env.SLUICE_BENCH_CPU_PROF_DIR;
const at = process.argv.indexOf('--node-id');
const name = at > 0 ? 'node' + process.argv[at + 1] : 'single';
const session = new Session();
session.connect();
session.post('Profiler.enable');
session.post('Profiler.setSamplingInterval', { interval: 1000 });
session.post('Profiler.start');
process.on('exit', () => {
  session.post('Profiler.stop', (error, result) => {
    if (!error) fs.writeFileSync(path.join(dir, 'CPU.' + name + '.' + process.pid + '.cpuprofile'), JSON.stringify(result.profile));
  });
});
`;
const CPU_PROF_DIR = args['broker-cpu-prof'] ? path.resolve(args['broker-cpu-prof']) : null;
const BROKER_ENV: NodeJS.ProcessEnv = {};
{
  const node_options = [args['broker-node-options']];
  if (CPU_PROF_DIR) {
    fs.mkdirSync(CPU_PROF_DIR, { recursive: true });
    BROKER_ENV.SLUICE_BENCH_CPU_PROF_DIR = CPU_PROF_DIR;
    node_options.push(`--import=data:text/javascript,${encodeURIComponent(CPU_PROFILE_PRELOAD).replace(/'/g, '%27')}`);
  }
  const joined = node_options.filter((o) => o !== '').join(' ');
  if (joined !== '') BROKER_ENV.NODE_OPTIONS = joined;
}
const JSON_OUT = args.json;
const PAGE_CACHE = args['page-cache'];
if (PAGE_CACHE !== 'drop' && PAGE_CACHE !== 'hold' && PAGE_CACHE !== 'keep') {
  console.error(`--page-cache: expected drop, hold or keep, got ${JSON.stringify(PAGE_CACHE)}\n${USAGE}`);
  process.exit(2);
}
const page_cache = new PageCacheControl(PAGE_CACHE, (line) => say(line));
const CLUSTER_DURABILITY = args['cluster-durability'];
if (!/^(fsync|none|interval:\d+)$/.test(CLUSTER_DURABILITY)) {
  console.error(
    `--cluster-durability: expected fsync, interval:MS or none, got ${JSON.stringify(CLUSTER_DURABILITY)}\n${USAGE}`,
  );
  process.exit(2);
}

const NODES = 3;
const CLUSTER_CONFIG = { cluster: { leaseTtlMs: 3000, replicationFactor: 3, replicaLagTimeMaxMs: 10_000 } };
const MIN_INSYNC = 2;
/** The issue's target: the cluster at least this fraction of single-node throughput. */
const TARGET_RATIO = 0.5;
/** Warm-up sends stop after this many messages even when time is left. */
const WARMUP_MESSAGES_MAX = 500_000;
/** Time limits of the waits around the runs. */
const READY_LIMIT_MS = 60_000;
const ISR_LIMIT_MS = 60_000;
const GRACE_MS = 60_000;
const STOP_LIMIT_MS = 30_000;
const POLL_MS = 200;

// ---------------------------------------------------------------- output

/** Human-readable lines: stdout, or stderr with --json (stdout then carries only the JSON). */
const say = (line = '') => (JSON_OUT ? process.stderr : process.stdout).write(`${line}\n`);
const f0 = (value: number) => Math.round(value).toLocaleString('en-US');
const f1 = (value: number) => value.toFixed(1);
const size_label = (bytes: number) => (bytes % 1024 === 0 ? `${bytes / 1024} KiB` : `${bytes} B`);
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function table(headers: string[], rows: Array<Array<string | number>>): void {
  say(`| ${headers.join(' | ')} |`);
  say(`| ${headers.map((_, i) => (i < 2 ? '---' : '---:')).join(' | ')} |`);
  for (const row of rows) say(`| ${row.join(' | ')} |`);
}

/** Resolves `promise`, or rejects after `ms` with a message naming `what`. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not done within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Polls `check` every POLL_MS until it returns true, or fails after `limit_ms`. */
async function wait_until(what: string, limit_ms: number, check: () => Promise<boolean>): Promise<number> {
  const started = Date.now();
  let last_error: unknown = null;
  while (Date.now() - started <= limit_ms) {
    try {
      if (await within(check(), limit_ms, what)) return Date.now() - started;
      last_error = null;
    } catch (error) {
      last_error = error;
    }
    await sleep(POLL_MS);
  }
  const reason = last_error instanceof Error ? ` (last error: ${last_error.message})` : '';
  throw new Error(`${what}: not within ${limit_ms} ms${reason}`);
}

// ---------------------------------------------------------------- CPU from /proc

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** User + system CPU seconds of a process so far, or NaN when it is gone. */
function cpu_seconds(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return NaN;
  }
}

// ---------------------------------------------------------------- processes to clean up

const live_brokers = new Set<BrokerProcess>();
const live_etcds = new Set<EtcdProcess>();
const temp_dirs = new Set<string>();

async function stop_broker(broker: BrokerProcess): Promise<void> {
  try {
    await within(broker.stop(), STOP_LIMIT_MS, 'broker stop');
  } catch {
    await broker.kill().catch(() => undefined);
  } finally {
    live_brokers.delete(broker);
  }
}

async function cleanup(): Promise<void> {
  await Promise.all([...live_brokers].map((broker) => stop_broker(broker)));
  for (const etcd of live_etcds) {
    await etcd.stop().catch(() => undefined);
    live_etcds.delete(etcd);
  }
  kill_stray_children();
  remove_temp_dirs();
}

/**
 * Child processes of this one that are still running: a broker or etcd whose start timed out is
 * never handed back by its helper, so it is found here by its parent pid.
 */
function kill_stray_children(): void {
  let entries: string[] = [];
  try {
    entries = fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return;
  }
  for (const name of entries) {
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid) process.kill(Number(name), 'SIGKILL');
    } catch {
      // gone already
    }
  }
}

function remove_temp_dirs(): void {
  for (const dir of temp_dirs) fs.rmSync(dir, { recursive: true, force: true });
  temp_dirs.clear();
}

/** Last resort on a signal or an exit that skipped `cleanup`: kill what is left, synchronously. */
function kill_everything_now(): void {
  for (const broker of live_brokers) broker.child.kill('SIGKILL');
  for (const etcd of live_etcds) {
    etcd.child.kill('SIGCONT');
    etcd.child.kill('SIGKILL');
  }
  kill_stray_children();
  for (const dir of temp_dirs) fs.rmSync(dir, { recursive: true, force: true });
}

process.on('exit', kill_everything_now);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    say(`\n${signal}: stopping`);
    within(cleanup(), STOP_LIMIT_MS, 'cleanup')
      .catch(() => undefined)
      .finally(() => process.exit(130));
  });
}

async function start_broker(
  data_dir: string,
  port: number,
  extra: string[],
  durability = 'fsync',
): Promise<BrokerProcess> {
  const broker = await start_broker_process({
    data_dir,
    port,
    args: ['--durability', durability, '--http', 'off', ...extra],
    env: BROKER_ENV,
  });
  live_brokers.add(broker);
  return broker;
}

// ---------------------------------------------------------------- systems

interface RunningSystem {
  id: SystemId;
  label: string;
  bootstrap: string[];
  /** Node id (1 for the single broker) to its process. */
  brokers: Map<number, BrokerProcess>;
  etcd: EtcdProcess | null;
  replication_factor: number;
  topic_configs: Array<{ name: string; value: string }>;
}

async function start_single(): Promise<RunningSystem> {
  const data_dir = new_data_dir('bench-cluster-single');
  temp_dirs.add(data_dir);
  const broker = await start_broker(data_dir, await free_port(), []);
  return {
    id: 'single',
    label: 'single node',
    bootstrap: [broker.bootstrap],
    brokers: new Map([[1, broker]]),
    etcd: null,
    replication_factor: 1,
    topic_configs: [],
  };
}

async function start_cluster(): Promise<RunningSystem> {
  if (!ETCD_BINARY) throw new Error('etcd is not installed (Debian package etcd-server)');
  const etcd = await start_etcd();
  live_etcds.add(etcd);
  const config_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-cluster-config-'));
  temp_dirs.add(config_dir);
  const config_file = path.join(config_dir, 'config.json');
  fs.writeFileSync(config_file, JSON.stringify(CLUSTER_CONFIG));
  const nodes: Array<{ id: number; port: number; data_dir: string }> = [];
  for (let id = 1; id <= NODES; id++) {
    const data_dir = new_data_dir(`bench-cluster-node${id}`);
    temp_dirs.add(data_dir);
    nodes.push({ id, port: await free_port(), data_dir });
  }
  // All at once; every broker that did start is tracked (live_brokers) even when another failed.
  const started = await Promise.allSettled(
    nodes.map((node) =>
      start_broker(
        node.data_dir,
        node.port,
        ['--etcd', etcd.endpoint, '--node-id', String(node.id), '--config', config_file],
        CLUSTER_DURABILITY,
      ),
    ),
  );
  const failure = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failure) throw failure.reason;
  const brokers = new Map(started.map((s, i) => [nodes[i]!.id, (s as PromiseFulfilledResult<BrokerProcess>).value]));
  return {
    id: 'cluster',
    label:
      CLUSTER_DURABILITY === 'fsync'
        ? `${NODES}-node cluster`
        : `${NODES}-node cluster (durability ${CLUSTER_DURABILITY})`,
    bootstrap: [...brokers.values()].map((b) => b.bootstrap),
    brokers,
    etcd,
    replication_factor: NODES,
    topic_configs: [{ name: 'min.insync.replicas', value: String(MIN_INSYNC) }],
  };
}

/** Creates the topic and waits until every partition has a leader and a full ISR. Returns leaders per node. */
async function create_topic(system: RunningSystem, sluice: Sluice, topic: string): Promise<Map<number, number>> {
  const admin = sluice.admin();
  await within(admin.connect(), READY_LIMIT_MS, 'admin connect');
  try {
    if (system.id === 'cluster') {
      await wait_until(
        `${NODES} brokers registered`,
        READY_LIMIT_MS,
        async () => (await admin.describeCluster()).brokers.length === NODES,
      );
    }
    await wait_until(`topic ${topic} created`, READY_LIMIT_MS, async () => {
      await admin.createTopics({
        topics: [
          {
            topic,
            numPartitions: PARTITIONS,
            replicationFactor: system.replication_factor,
            configEntries: system.topic_configs,
          },
        ],
        timeout: 10_000,
      });
      return true;
    });
    let leaders = new Map<number, number>();
    const waited = await wait_until(
      `every partition of ${topic} with ${system.replication_factor} in its ISR`,
      ISR_LIMIT_MS,
      async () => {
        const { topics } = await admin.fetchTopicMetadata({ topics: [topic] });
        const partitions = topics[0]?.partitions ?? [];
        if (partitions.length !== PARTITIONS) return false;
        if (
          !partitions.every(
            (p) =>
              p.leader >= 0 &&
              p.isr.length === system.replication_factor &&
              p.replicas.length === system.replication_factor,
          )
        )
          return false;
        leaders = new Map();
        for (const p of partitions) leaders.set(p.leader, (leaders.get(p.leader) ?? 0) + 1);
        return true;
      },
    );
    if (system.id === 'cluster')
      say(
        `  ${topic}: ${PARTITIONS} partitions, ISR of ${system.replication_factor} everywhere after ${f0(waited)} ms; leaders per node: ${[
          ...leaders,
        ]
          .sort((a, b) => a[0] - b[0])
          .map(([node, count]) => `${node}:${count}`)
          .join(' ')}`,
      );
    return leaders;
  } finally {
    await within(admin.disconnect(), STOP_LIMIT_MS, 'admin disconnect').catch(() => undefined);
  }
}

// ---------------------------------------------------------------- producing

interface ProduceResult {
  acknowledged: number;
  elapsed_s: number;
  /** What ended the sending: the time limit or the message count. */
  ended_by: 'time' | 'count';
}

/** Every producer sends `messages` / PRODUCERS of `size` bytes to `topic` for at most `seconds`. */
async function produce(
  producers: Producer[],
  topic: string,
  size: number,
  messages: number,
  seconds: number,
): Promise<ProduceResult> {
  const value = Buffer.alloc(size, 0x61);
  const full = Array.from({ length: SEND_MESSAGES }, () => ({ value }));
  const shares = Array.from(
    { length: producers.length },
    (_, i) => Math.floor(messages / producers.length) + (i < messages % producers.length ? 1 : 0),
  );
  let acknowledged = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await within(
    Promise.all(
      producers.map((producer, i) =>
        pump_sends(
          shares[i]!,
          SEND_MESSAGES,
          IN_FLIGHT,
          deadline,
          (count) => producer.send({ topic, acks: -1, messages: count === full.length ? full : full.slice(0, count) }),
          (count) => (acknowledged += count),
        ),
      ),
    ),
    seconds * 1000 + GRACE_MS,
    `producing to ${topic}`,
  );
  const elapsed_s = (performance.now() - started) / 1000;
  return { acknowledged, elapsed_s, ended_by: acknowledged >= messages ? 'count' : 'time' };
}

interface Measurement {
  system: SystemId;
  label: string;
  size_bytes: number;
  partitions: number;
  messages: number;
  seconds: number;
  ended_by: 'time' | 'count';
  msgs_per_s: number;
  mb_per_s: number;
  warmup_messages: number;
  /** Broker CPU over the measured run, percent of one core, by node id. */
  broker_cpu_pct: Record<string, number>;
  etcd_cpu_pct: number | null;
  /** This process (the producers) over the measured run, percent of one core. */
  client_cpu_pct: number;
  /** Partitions led by each node. */
  leaders: Record<string, number>;
}

async function measure_system(id: SystemId): Promise<Measurement[]> {
  const results: Measurement[] = [];
  const started = performance.now();
  const system = await (id === 'single' ? start_single() : start_cluster());
  say(`\n## ${system.label}: ${system.bootstrap.join(', ')} (ready after ${f0(performance.now() - started)} ms)`);
  const sluice = new Sluice({
    brokers: system.bootstrap,
    clientId: 'bench-cluster',
    retry: { retries: 5, initialRetryTime: 100 },
  });
  const producers: Producer[] = [];
  try {
    for (let i = 0; i < PRODUCERS; i++) {
      const producer = new Sluice({
        brokers: system.bootstrap,
        clientId: `bench-cluster-producer-${i}`,
        retry: { retries: 5, initialRetryTime: 100 },
      }).producer({ acks: -1, allowAutoTopicCreation: false });
      producers.push(producer);
      await within(producer.connect(), READY_LIMIT_MS, 'producer connect');
    }
    for (const size of SIZES) {
      const topic = `bench-${id}-${size}`;
      const leaders = await create_topic(system, sluice, topic);
      page_cache.drop_now();
      let warmup_messages = 0;
      if (WARMUP_SECONDS > 0) {
        const warm = await page_cache.holding(() =>
          produce(producers, topic, size, Math.min(MESSAGES, WARMUP_MESSAGES_MAX), WARMUP_SECONDS),
        );
        warmup_messages = warm.acknowledged;
      }
      const cpu_before = new Map([...system.brokers].map(([node, broker]) => [node, cpu_seconds(broker.child.pid)]));
      const etcd_before = cpu_seconds(system.etcd?.child.pid);
      const client_before = process.cpuUsage();
      const run = await page_cache.holding(() => produce(producers, topic, size, MESSAGES, SECONDS));
      const client_cpu = process.cpuUsage(client_before);
      const pct = (seconds: number) => (100 * seconds) / run.elapsed_s;
      const broker_cpu_pct: Record<string, number> = {};
      for (const [node, broker] of system.brokers)
        broker_cpu_pct[node] = pct(cpu_seconds(broker.child.pid) - cpu_before.get(node)!);
      const msgs_per_s = run.acknowledged / run.elapsed_s;
      const measurement: Measurement = {
        system: id,
        label: system.label,
        size_bytes: size,
        partitions: PARTITIONS,
        messages: run.acknowledged,
        seconds: run.elapsed_s,
        ended_by: run.ended_by,
        msgs_per_s,
        mb_per_s: (msgs_per_s * size) / 1e6,
        warmup_messages,
        broker_cpu_pct,
        etcd_cpu_pct: system.etcd ? pct(cpu_seconds(system.etcd.child.pid) - etcd_before) : null,
        client_cpu_pct: pct((client_cpu.user + client_cpu.system) / 1e6),
        leaders: Object.fromEntries(leaders),
      };
      results.push(measurement);
      say(
        `  ${size_label(size)}: ${f0(run.acknowledged)} messages in ${f1(run.elapsed_s)} s (ended by ${run.ended_by}) = ${f0(msgs_per_s)} msg/s, ${f1(measurement.mb_per_s)} MB/s; ` +
          `CPU: brokers ${Object.entries(broker_cpu_pct)
            .map(([node, value]) => `${node}:${f0(value)}%`)
            .join(' ')}` +
          (measurement.etcd_cpu_pct !== null ? `, etcd ${f0(measurement.etcd_cpu_pct)}%` : '') +
          `, producers ${f0(measurement.client_cpu_pct)}%`,
      );
    }
  } finally {
    await Promise.all(
      producers.map((producer) =>
        within(producer.disconnect(), STOP_LIMIT_MS, 'producer disconnect').catch(() => undefined),
      ),
    );
    for (const broker of system.brokers.values()) {
      const lines = broker
        .output()
        .split('\n')
        .filter((line) => /"level":(40|50|60)/.test(line));
      if (lines.length > 0)
        say(`  broker output: ${lines.length} warning/error line(s), first: ${lines[0]!.slice(0, 300)}`);
    }
    await Promise.all([...system.brokers.values()].map((broker) => stop_broker(broker)));
    if (system.etcd) {
      await system.etcd.stop().catch(() => undefined);
      live_etcds.delete(system.etcd);
    }
    // Its data goes before the next system starts, so that one writes to the same free disk.
    remove_temp_dirs();
  }
  return results;
}

// ---------------------------------------------------------------- main

say(`# Replicated produce (acks=all): ${SYSTEMS.join(' vs ')}`);
say(
  `${os.cpus().length} cores, Node ${process.version}; ${PARTITIONS} partitions; sizes ${SIZES.map(size_label).join(', ')}; ` +
    `${PRODUCERS} SDK producers x ${IN_FLIGHT} sends of ${f0(SEND_MESSAGES)} in flight; warm-up ${WARMUP_SECONDS} s, then at most ${SECONDS} s or ${f0(MESSAGES)} messages per size; page cache: ${PAGE_CACHE}`,
);

const measurements: Measurement[] = [];
const failures: Array<{ system: SystemId; error: string }> = [];
try {
  for (const id of SYSTEMS as SystemId[]) {
    try {
      measurements.push(...(await measure_system(id)));
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      failures.push({ system: id, error: message });
      say(`  ${id} failed: ${message}`);
      await cleanup();
    }
  }
} finally {
  await cleanup();
}

const single_rate = (size: number) =>
  measurements.find((m) => m.system === 'single' && m.size_bytes === size)?.msgs_per_s;
const ratio_of = (m: Measurement) => {
  const base = single_rate(m.size_bytes);
  return m.system === 'cluster' && base ? m.msgs_per_s / base : null;
};

say('\n## Results');
table(
  ['system', 'size', 'msg/s', 'MB/s', 'cluster/single', 'broker CPU % (per node)', 'producers CPU %'],
  measurements.map((m) => {
    const ratio = ratio_of(m);
    return [
      m.label,
      size_label(m.size_bytes),
      f0(m.msgs_per_s),
      f1(m.mb_per_s),
      ratio === null ? (m.system === 'single' ? '1.000' : '–') : ratio.toFixed(3),
      Object.values(m.broker_cpu_pct).map(f0).join(' / ') +
        (m.etcd_cpu_pct !== null ? ` (etcd ${f0(m.etcd_cpu_pct)})` : ''),
      f0(m.client_cpu_pct),
    ];
  }),
);
const verdicts = measurements
  .filter((m) => ratio_of(m) !== null)
  .map((m) => {
    const ratio = ratio_of(m)!;
    return { size_bytes: m.size_bytes, ratio, met: ratio >= TARGET_RATIO };
  });
for (const v of verdicts)
  say(
    `target: cluster >= ${f0(TARGET_RATIO * 100)}% of single node at ${size_label(v.size_bytes)}: ${f1(v.ratio * 100)}% — ${v.met ? 'met' : 'missed'}`,
  );
for (const f of failures) say(`FAILED ${f.system}: ${f.error}`);

if (JSON_OUT) {
  process.stdout.write(
    `${JSON.stringify(
      {
        machine: { cores: os.cpus().length, node: process.version },
        settings: {
          seconds: SECONDS,
          messages: MESSAGES,
          warmup_seconds: WARMUP_SECONDS,
          partitions: PARTITIONS,
          sizes: SIZES,
          producers: PRODUCERS,
          in_flight: IN_FLIGHT,
          send_messages: SEND_MESSAGES,
          cluster_config: CLUSTER_CONFIG,
          min_insync_replicas: MIN_INSYNC,
          page_cache: PAGE_CACHE,
        },
        results: measurements.map((m) => ({ ...m, cluster_over_single: ratio_of(m) })),
        target: { cluster_over_single_min: TARGET_RATIO, verdicts },
        failures,
      },
      null,
      2,
    )}\n`,
  );
}
process.exit(failures.length > 0 ? 1 : 0);
