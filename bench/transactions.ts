// Transactions benchmark. Prints figures; it is not a test.
//
//   npm run bench:transactions                          # the full run (about 2 minutes on 2 cores)
//   npm run bench:transactions -- --seconds 5           # a quick look
//
// One broker process (`sluice start --durability fsync` unless --durability says otherwise,
// test/support/broker_process.ts, a fresh temporary data directory removed at the end), topics of
// 3 partitions, the SDK's clients:
//   1. idempotent: --producers (64) idempotent producers, each in a loop sending --messages (100)
//      messages of --bytes (100) B spread over the 3 partitions in one send() and waiting for it;
//      --seconds (20) s. The baseline: the same records without a transaction.
//   2. transactions: as many transactional producers, each in a loop: transaction(), the same
//      send(), commit(); --seconds s. Figures: transactions/s, records/s, the latency of a
//      transaction (transaction() to commit() resolved) and of a round of part 1.
//   3. drain: the topic of part 2 (committed data and its markers) read from the start by a
//      consumer without a group (broadcast mode), read_uncommitted then read_committed, twice
//      each alternately; records/s of each.
// Targets (issue: transactions): >= 5,000 transactions/s in part 2; read_committed drain within
// 10 % of read_uncommitted. Exit code 1 when a part failed or a drain read a wrong count.
import { bench_args, positive_int as positive_int_or_exit } from './cli_args.ts';
import { new_data_dir, start_broker_process } from '../test/support/broker_process.ts';
import { Sluice } from '../src/sdk/index.ts';
import type { Message, Producer } from '../src/sdk/producer.ts';
import { f0, f1, percentile, say, table, with_timeout } from './delayed/support.ts';
import fs from 'node:fs';

const USAGE = `usage: npm run bench:transactions -- [options]
  --producers N   producers at once in parts 1 and 2 (default 64)
  --seconds S     length of parts 1 and 2 (default 20)
  --messages N    messages per send / transaction (default 100)
  --bytes N       bytes per message value (default 100)
  --durability D  the broker's --durability (default fsync, the target's; none or interval:MS to
                  see what waiting for fsync costs)`;

const args = bench_args(
  {
    producers: { type: 'string', default: '64' },
    seconds: { type: 'string', default: '20' },
    messages: { type: 'string', default: '100' },
    bytes: { type: 'string', default: '100' },
    durability: { type: 'string', default: 'fsync' },
    help: { type: 'boolean', short: 'h', default: false },
  } as const,
  USAGE,
);
const positive_int = (name: string, text: string, max: number) => positive_int_or_exit(name, text, max, USAGE);
const PRODUCERS = positive_int('producers', args.producers, 1024);
const SECONDS = positive_int('seconds', args.seconds, 3600);
const MESSAGES = positive_int('messages', args.messages, 100_000);
const BYTES = positive_int('bytes', args.bytes, 1_000_000);
const PARTITIONS = 3;
const DRAIN_LIMIT_MS = 300_000;

interface LoopFigures {
  rounds: number;
  elapsed_ms: number;
  latencies_ms: Float64Array;
}

function messages(): Message[] {
  const value = Buffer.alloc(BYTES, 0x2e);
  return Array.from({ length: MESSAGES }, (_, i) => ({ value, partition: i % PARTITIONS }));
}

/** Runs `round` in a loop on every producer for SECONDS; rounds completed and their latencies. */
async function loop(producers: Producer[], round: (producer: Producer) => Promise<void>): Promise<LoopFigures> {
  const latencies: number[] = [];
  const started = performance.now();
  const deadline = started + SECONDS * 1000;
  await Promise.all(
    producers.map(async (producer) => {
      while (performance.now() < deadline) {
        const begun = performance.now();
        await round(producer);
        latencies.push(performance.now() - begun);
      }
    }),
  );
  const sorted = Float64Array.from(latencies).sort();
  return { rounds: latencies.length, elapsed_ms: performance.now() - started, latencies_ms: sorted };
}

async function part_idempotent(sluice: Sluice, topic: string): Promise<LoopFigures> {
  const producers = Array.from({ length: PRODUCERS }, () => sluice.producer());
  await Promise.all(producers.map((p) => p.connect()));
  const batch = messages();
  try {
    return await loop(producers, async (producer) => void (await producer.send({ topic, messages: batch })));
  } finally {
    await Promise.all(producers.map((p) => p.disconnect()));
  }
}

async function part_transactions(sluice: Sluice, topic: string): Promise<LoopFigures> {
  const producers = Array.from({ length: PRODUCERS }, (_, i) => sluice.producer({ transactionalId: `bench-${i}` }));
  await Promise.all(producers.map((p) => p.connect()));
  const batch = messages();
  try {
    return await loop(producers, async (producer) => {
      const transaction = await producer.transaction();
      await transaction.send({ topic, messages: batch });
      await transaction.commit();
    });
  } finally {
    await Promise.all(producers.map((p) => p.disconnect()));
  }
}

/** Reads `topic` from its start until `expected` records arrived; records/s. */
async function drain(sluice: Sluice, topic: string, expected: number, read_uncommitted: boolean): Promise<number> {
  const consumer = sluice.consumer({ readUncommitted: read_uncommitted, maxWaitTimeInMs: 50 });
  let seen = 0;
  let done!: () => void;
  const all = new Promise<void>((resolve) => (done = resolve));
  await consumer.subscribe({ topic, fromBeginning: true });
  const started = performance.now();
  await consumer.run({
    eachBatch: async ({ batch }) => {
      seen += batch.messages.length;
      if (seen >= expected) done();
    },
  });
  try {
    await with_timeout(all, DRAIN_LIMIT_MS, `draining ${expected} records`);
    return (seen / (performance.now() - started)) * 1000;
  } finally {
    await consumer.disconnect();
    if (seen !== expected) throw new Error(`the drain read ${seen} records, ${expected} were committed`);
  }
}

function loop_row(name: string, figures: LoopFigures): Array<string | number> {
  const per_s = (figures.rounds / figures.elapsed_ms) * 1000;
  const ms = (q: number) => f1(percentile(figures.latencies_ms, q));
  return [name, f0(figures.rounds), f0(per_s), f0(per_s * MESSAGES), ms(0.5), ms(0.99), ms(1)];
}

async function main(): Promise<void> {
  const data_dir = new_data_dir('bench-txn');
  const broker = await start_broker_process({ data_dir, args: ['--durability', args.durability] });
  let failed = false;
  try {
    const sluice = new Sluice({ brokers: [broker.bootstrap], clientId: 'bench-transactions' });
    const admin = sluice.admin();
    await admin.connect();
    await admin.createTopics({
      topics: ['idempotent', 'transactional'].map((topic) => ({ topic, numPartitions: PARTITIONS })),
    });
    await admin.disconnect();
    say(`${PRODUCERS} producers, ${MESSAGES} messages x ${BYTES} B per send, ${PARTITIONS} partitions, ${SECONDS} s`);
    say();
    const idempotent = await part_idempotent(sluice, 'idempotent');
    const transactions = await part_transactions(sluice, 'transactional');
    table(
      ['part', 'sends or transactions', 'per s', 'records/s', 'p50 ms', 'p99 ms', 'max ms'],
      [loop_row('idempotent send', idempotent), loop_row('transaction (send + commit)', transactions)],
    );
    const cost = idempotent.rounds / idempotent.elapsed_ms / (transactions.rounds / transactions.elapsed_ms);
    say();
    say(`a transaction costs ${cost.toFixed(2)}x the time of the same idempotent send (throughput ratio)`);
    const expected = transactions.rounds * MESSAGES;
    const rates = { uncommitted: [] as number[], committed: [] as number[] };
    for (let run = 0; run < 2; run++) {
      rates.uncommitted.push(await drain(sluice, 'transactional', expected, true));
      rates.committed.push(await drain(sluice, 'transactional', expected, false));
    }
    say();
    table(
      ['drain of the transactional topic', 'run 1 records/s', 'run 2 records/s'],
      [
        ['read_uncommitted', ...rates.uncommitted.map(f0)],
        ['read_committed', ...rates.committed.map(f0)],
      ],
    );
    const best = (list: number[]) => Math.max(...list);
    const ratio = best(rates.committed) / best(rates.uncommitted);
    say();
    say(`targets: ${f0((transactions.rounds / transactions.elapsed_ms) * 1000)} transactions/s (>= 5,000);`);
    say(`read_committed drain at ${(ratio * 100).toFixed(0)} % of read_uncommitted (>= 90 %), best runs`);
  } catch (error) {
    failed = true;
    console.error(error);
  } finally {
    await broker.stop();
    fs.rmSync(data_dir, { recursive: true, force: true });
  }
  process.exit(failed ? 1 : 0);
}

await main();
