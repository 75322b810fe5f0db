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
//
// This file reads the options, runs the systems and prints the results; the parts are in
// bench/cluster/ (systems.ts starts them, measure.ts runs the producers, with processes.ts and
// support.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bench_args, positive_int as positive_int_or_exit } from './cli_args.ts';
import { type Measurement, measure_system } from './cluster/measure.ts';
import { PageCacheControl } from './page_cache.ts';
import { clean_up_on_exit, cleanup } from './cluster/processes.ts';
import { type ClusterBenchOptions, f0, f1, print_lines_to_stderr, say, size_label, table } from './cluster/support.ts';
import { CLUSTER_CONFIG, MIN_INSYNC, SYSTEM_IDS, type SystemId } from './cluster/systems.ts';

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

function usage_error(message: string): never {
  console.error(`${message}\n${USAGE}`);
  process.exit(2);
}

const SECONDS = positive_int('seconds', args.seconds, 3600);
const MESSAGES = positive_int('messages', args.messages, 100_000_000);
const WARMUP_SECONDS = args['warmup-seconds'] === '0' ? 0 : positive_int('warmup-seconds', args['warmup-seconds'], 600);
const PARTITIONS = positive_int('partitions', args.partitions, 1000);
const PRODUCERS = positive_int('producers', args.producers, 64);
const IN_FLIGHT = positive_int('in-flight', args['in-flight'], 1000);
const SEND_MESSAGES = positive_int('send-messages', args['send-messages'], 100_000);
const SIZES = args.sizes.split(',').map((s) => positive_int('sizes', s.trim(), 1024 * 1024));
const SYSTEMS = args.systems.split(',').map((s) => s.trim());
for (const id of SYSTEMS) {
  if (!(SYSTEM_IDS as readonly string[]).includes(id))
    usage_error(`--systems: unknown system ${JSON.stringify(id)} (systems: ${SYSTEM_IDS.join(', ')})`);
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
    if (error) return;
    const file = path.join(dir, 'CPU.' + name + '.' + process.pid + '.cpuprofile');
    fs.writeFileSync(file, JSON.stringify(result.profile));
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
    const preload = encodeURIComponent(CPU_PROFILE_PRELOAD).replace(/'/g, '%27');
    node_options.push(`--import=data:text/javascript,${preload}`);
  }
  const joined = node_options.filter((o) => o !== '').join(' ');
  if (joined !== '') BROKER_ENV.NODE_OPTIONS = joined;
}
const JSON_OUT = args.json;
if (JSON_OUT) print_lines_to_stderr();
const PAGE_CACHE = args['page-cache'];
if (PAGE_CACHE !== 'drop' && PAGE_CACHE !== 'hold' && PAGE_CACHE !== 'keep')
  usage_error(`--page-cache: expected drop, hold or keep, got ${JSON.stringify(PAGE_CACHE)}`);
const CLUSTER_DURABILITY = args['cluster-durability'];
if (!/^(fsync|none|interval:\d+)$/.test(CLUSTER_DURABILITY))
  usage_error(`--cluster-durability: expected fsync, interval:MS or none, got ${JSON.stringify(CLUSTER_DURABILITY)}`);

/** The run's shape, as measured and as reported in the JSON output. */
const RUN_SETTINGS = {
  seconds: SECONDS,
  messages: MESSAGES,
  warmup_seconds: WARMUP_SECONDS,
  partitions: PARTITIONS,
  sizes: SIZES,
  producers: PRODUCERS,
  in_flight: IN_FLIGHT,
  send_messages: SEND_MESSAGES,
};

const OPTIONS_READ: ClusterBenchOptions = {
  ...RUN_SETTINGS,
  cluster_durability: CLUSTER_DURABILITY,
  broker_env: BROKER_ENV,
  page_cache: new PageCacheControl(PAGE_CACHE, (line) => say(line)),
};

/** The target: the cluster at least this fraction of single-node throughput. */
const TARGET_RATIO = 0.5;

// ---------------------------------------------------------------- main

clean_up_on_exit();
say(`# Replicated produce (acks=all): ${SYSTEMS.join(' vs ')}`);
say(
  `${os.cpus().length} cores, Node ${process.version}; ${PARTITIONS} partitions; ` +
    `sizes ${SIZES.map(size_label).join(', ')}; ` +
    `${PRODUCERS} SDK producers x ${IN_FLIGHT} sends of ${f0(SEND_MESSAGES)} in flight; ` +
    `warm-up ${WARMUP_SECONDS} s, then at most ${SECONDS} s or ${f0(MESSAGES)} messages per size; ` +
    `page cache: ${PAGE_CACHE}`,
);

const measurements: Measurement[] = [];
const failures: Array<{ system: SystemId; error: string }> = [];
try {
  for (const id of SYSTEMS as SystemId[]) {
    try {
      measurements.push(...(await measure_system(id, OPTIONS_READ)));
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
for (const v of verdicts) {
  const target = `cluster >= ${f0(TARGET_RATIO * 100)}% of single node at ${size_label(v.size_bytes)}`;
  say(`target: ${target}: ${f1(v.ratio * 100)}% — ${v.met ? 'met' : 'missed'}`);
}
for (const f of failures) say(`FAILED ${f.system}: ${f.error}`);

if (JSON_OUT) {
  process.stdout.write(
    `${JSON.stringify(
      {
        machine: { cores: os.cpus().length, node: process.version },
        settings: {
          ...RUN_SETTINGS,
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
