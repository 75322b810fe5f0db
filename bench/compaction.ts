// Log compaction benchmark. Prints figures; it is not a test.
//
//   npm run bench:compaction                              # the full run (about 2 minutes on 2 cores)
//   npm run bench:compaction -- --seconds 10 --prefill-mb 256
//
// One broker process (`sluice start --durability fsync --cleaner-interval-ms 1000`, a fresh
// temporary data directory removed at the end); the SDK's producers, --producers (8) of them, each
// in a loop sending --messages (500) records of --bytes (100) B over --keys (100,000) keys to one
// partition and waiting for it:
//   1. baseline: to a topic with cleanup.policy=delete, --seconds (20) s: records/s.
//   2. prefill: a compacted topic (segment.bytes --segment-mb, 64) filled with --prefill-mb (1024) MB.
//   3. compacting: the same producers to the compacted topic for --seconds while its cleaner works.
//   4. baseline again: part 1 once more (the baseline is the mean of parts 1 and 4).
// Figures: records/s in parts 1 and 3 (their ratio), and the cleaner's passes from the broker's
// log ("log compaction pass"): segment bytes a pass covered over its duration (mapping and
// rewriting), and what they left.
// Targets (issue: Kafka compatibility): the cleaner compacts >= 100 MB/s of segment data while
// producers keep >= 80 % of their uncompacted throughput. Exit code 1 when a part failed.
import { bench_args, positive_int as positive_int_or_exit } from './cli_args.ts';
import { new_data_dir, start_broker_process, type BrokerProcess } from '../test/support/broker_process.ts';
import { Sluice } from '../src/sdk/index.ts';
import type { Message, Producer } from '../src/sdk/producer.ts';
import { f0, f1, mb, say, table } from './delayed/support.ts';
import fs from 'node:fs';

const USAGE = `usage: npm run bench:compaction -- [options]
  --producers N    producers at once (default 8)
  --seconds S      length of parts 1 and 3 (default 20)
  --messages N     records per send (default 500)
  --bytes N        bytes per record value (default 100)
  --keys N         distinct keys (default 100000)
  --prefill-mb N   megabytes written to the compacted topic before part 3 (default 1024)
  --segment-mb N   segment.bytes of the compacted topic, in megabytes (default 64)
  --cleaner-io-mb N  the broker's --cleaner-io-bytes-per-s-max, in megabytes (default 0: no limit)`;

const args = bench_args(
  {
    producers: { type: 'string', default: '8' },
    seconds: { type: 'string', default: '20' },
    messages: { type: 'string', default: '500' },
    bytes: { type: 'string', default: '100' },
    keys: { type: 'string', default: '100000' },
    'prefill-mb': { type: 'string', default: '1024' },
    'segment-mb': { type: 'string', default: '64' },
    'cleaner-io-mb': { type: 'string', default: '0' },
    help: { type: 'boolean', short: 'h', default: false },
  } as const,
  USAGE,
);
const positive_int = (name: string, text: string, max: number) => positive_int_or_exit(name, text, max, USAGE);
const PRODUCERS = positive_int('producers', args.producers, 256);
const SECONDS = positive_int('seconds', args.seconds, 3600);
const MESSAGES = positive_int('messages', args.messages, 100_000);
const BYTES = positive_int('bytes', args.bytes, 1_000_000);
const KEYS = positive_int('keys', args.keys, 100_000_000);
const PREFILL_BYTES = positive_int('prefill-mb', args['prefill-mb'], 100_000) * 1_000_000;
const SEGMENT_BYTES = positive_int('segment-mb', args['segment-mb'], 1024) * 1024 * 1024;
const CLEANER_IO_BYTES_PER_S =
  args['cleaner-io-mb'] === '0' ? 0 : positive_int('cleaner-io-mb', args['cleaner-io-mb'], 100_000) * 1_000_000;

interface Pass {
  segment_bytes: number;
  bytes_read: number;
  bytes_written: number;
  duration_ms: number;
  keys: number;
}

/** Sends from every producer in a loop until `done()`; records sent and the time taken. */
async function loop(producers: Producer[], topic: string, done: (records: number) => boolean) {
  const value = Buffer.alloc(BYTES, 0x2e);
  let records = 0;
  let next_key = 0;
  const started = performance.now();
  await Promise.all(
    producers.map(async (producer) => {
      while (!done(records)) {
        const messages: Message[] = Array.from({ length: MESSAGES }, () => ({
          key: `key-${(next_key = (next_key + 7919) % KEYS)}`,
          value,
          partition: 0,
        }));
        await producer.send({ topic, messages });
        records += MESSAGES;
      }
    }),
  );
  return { records, elapsed_ms: performance.now() - started };
}

async function producing(sluice: Sluice, topic: string, done: (records: number, started: number) => boolean) {
  const producers = Array.from({ length: PRODUCERS }, () => sluice.producer());
  await Promise.all(producers.map((p) => p.connect()));
  const started = performance.now();
  try {
    return await loop(producers, topic, (records) => done(records, started));
  } finally {
    await Promise.all(producers.map((p) => p.disconnect()));
  }
}

/** The cleaner's passes over `partition` that the broker has logged so far. */
function passes_of(broker: BrokerProcess, partition: string): Pass[] {
  const passes: Pass[] = [];
  for (const line of broker.output().split('\n')) {
    if (!line.includes('"log compaction pass"')) continue;
    const fields = JSON.parse(line) as Pass & { partition: string };
    if (fields.partition === partition) passes.push(fields);
  }
  return passes;
}

async function create(sluice: Sluice, topic: string, configs: Record<string, string>): Promise<void> {
  const admin = sluice.admin();
  await admin.connect();
  const configEntries = Object.entries(configs).map(([name, value]) => ({ name, value }));
  await admin.createTopics({ topics: [{ topic, numPartitions: 1, configEntries }] });
  await admin.disconnect();
}

function report(baseline: number, compacting: number, passes: Pass[]): boolean {
  const rows = passes.map((p, i) => [
    i + 1,
    mb(p.segment_bytes),
    mb(p.bytes_written),
    f0(p.keys),
    f1(p.duration_ms / 1000),
    f1(p.segment_bytes / 1e6 / (p.duration_ms / 1000)),
  ]);
  table(['pass', 'segment MB', 'written MB', 'keys', 's', 'MB/s'], rows);
  const covered = passes.reduce((n, p) => n + p.segment_bytes, 0);
  const took_ms = passes.reduce((n, p) => n + p.duration_ms, 0);
  const cleaner_mb_s = took_ms > 0 ? covered / 1e6 / (took_ms / 1000) : 0;
  const kept = baseline > 0 ? compacting / baseline : 0;
  say();
  say(`producers: ${f0(baseline)} records/s uncompacted, ${f0(compacting)} while compacting (${f1(kept * 100)} %)`);
  say(`cleaner: ${f1(cleaner_mb_s)} MB/s of segment data over ${passes.length} passes`);
  const verdict = (met: boolean) => (met ? 'met' : 'MISSED');
  say(`targets: cleaner >= 100 MB/s ${verdict(cleaner_mb_s >= 100)}; producers >= 80 % ${verdict(kept >= 0.8)}`);
  return passes.length > 0;
}

async function main(): Promise<void> {
  const data_dir = new_data_dir('bench-compaction');
  const broker = await start_broker_process({
    data_dir,
    args: [
      ...['--durability', 'fsync', '--cleaner-interval-ms', '1000', '--log-level', 'info'],
      ...['--cleaner-io-bytes-per-s-max', String(CLEANER_IO_BYTES_PER_S)],
    ],
  });
  let ok = false;
  try {
    const sluice = new Sluice({ brokers: [broker.bootstrap], clientId: 'bench-compaction' });
    await create(sluice, 'plain', { 'cleanup.policy': 'delete' });
    await create(sluice, 'kv', { 'cleanup.policy': 'compact', 'segment.bytes': String(SEGMENT_BYTES) });
    say(`${PRODUCERS} producers, ${MESSAGES} records of ${BYTES} B per send, ${f0(KEYS)} keys`);
    const for_seconds = (_: number, started: number) => performance.now() - started > SECONDS * 1000;
    const baseline = await producing(sluice, 'plain', for_seconds);
    say(`1. baseline: ${f0(baseline.records)} records in ${f1(baseline.elapsed_ms / 1000)} s`);
    const per_record = BYTES + 30;
    const prefill = await producing(sluice, 'kv', (records) => records * per_record >= PREFILL_BYTES);
    say(`2. prefill: ${f0(prefill.records)} records in ${f1(prefill.elapsed_ms / 1000)} s`);
    const compacting = await producing(sluice, 'kv', for_seconds);
    say(`3. compacting: ${f0(compacting.records)} records in ${f1(compacting.elapsed_ms / 1000)} s`);
    const after = await producing(sluice, 'plain', for_seconds);
    say(`4. baseline again: ${f0(after.records)} records in ${f1(after.elapsed_ms / 1000)} s`);
    const rate = (part: { records: number; elapsed_ms: number }) => (part.records / part.elapsed_ms) * 1000;
    // The baseline is the mean of before and after: the disk slows as the data directory grows.
    ok = report((rate(baseline) + rate(after)) / 2, rate(compacting), passes_of(broker, 'kv-0'));
  } finally {
    await broker.stop();
    fs.rmSync(data_dir, { recursive: true, force: true });
  }
  process.exitCode = ok ? 0 : 1;
}

await main();
