// `npm run faults -- --minutes N --seed S`: a 3-broker cluster in the network lab, idempotent
// producers writing while a seeded schedule injects one fault after another (a broker killed and
// restarted, paused past its lease, or cut off from the others and etcd), then everything healed,
// the topic read back and the history checked. Broker logs, the history and the verdict are kept
// in the results folder; the exit code is 1 when the checker finds a failure.
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { check_history, describe_failures } from './checker/check.ts';
import type { HistoryOp } from './checker/history.ts';
import { LEASE_TTL_MS, LabCluster, etcd_missing } from './lab_cluster.ts';
import { network_missing, sweep } from './net.ts';
import { create_topic, lab_kafka, produce_loop, read_all } from './workload.ts';
import { random_from } from '../bench/seeded_random.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const LAB = 100;
const BROKERS = 3;
const PRODUCERS = 3;
/** A fault lasts this long (a pause: past the lease, so the broker loses its leaderships). */
const FAULT_MS = { kill: 2000, pause: LEASE_TTL_MS + 1500, partition: 4000 } as const;
/** Quiet time between faults. */
const GAP_MS = 1500;

type Fault = keyof typeof FAULT_MS;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One fault on one broker, held for its time, then undone. */
async function inject(cluster: LabCluster, fault: Fault, node_id: number, log: (line: string) => void): Promise<void> {
  const host = `b${node_id}`;
  log(`${fault} broker ${node_id}`);
  if (fault === 'kill') {
    await cluster.kill(node_id);
    await sleep(FAULT_MS.kill);
    await cluster.start_broker(node_id);
  } else if (fault === 'pause') {
    cluster.pause(node_id);
    await sleep(FAULT_MS.pause);
    cluster.resume(node_id);
  } else {
    const others = ['etcd', ...[...cluster.brokers.values()].map((b) => b.host).filter((h) => h !== host)];
    await cluster.lab.partition([[host], others]);
    await sleep(FAULT_MS.partition);
    await cluster.lab.heal();
  }
  log(`healed ${fault} of broker ${node_id}`);
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { minutes: { type: 'string', default: '1' }, seed: { type: 'string' }, out: { type: 'string' } },
  });
  const minutes = Number(values.minutes);
  const seed = values.seed !== undefined ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31);
  if (!(minutes > 0) || !Number.isInteger(seed))
    throw new Error('usage: npm run faults -- [--minutes N] [--seed S] [--out DIR]');
  const missing = (await network_missing()) ?? etcd_missing();
  if (missing) throw new Error(`the fault suite cannot run here: ${missing}`);
  const dir = path.resolve(
    values.out ?? path.join(ROOT, 'faults-results', new Date().toISOString().replace(/[:.]/g, '-')),
  );
  fs.mkdirSync(dir, { recursive: true });
  const journal = fs.createWriteStream(path.join(dir, 'run.log'));
  const started_ms = Date.now();
  const log = (line: string) => {
    const text = `${((Date.now() - started_ms) / 1000).toFixed(1)}s ${line}`;
    journal.write(`${text}\n`);
    process.stderr.write(`${text}\n`);
  };
  log(`seed ${seed}, ${minutes} min, results in ${dir}`);
  await sweep();
  const cluster = await LabCluster.start(LAB, BROKERS, dir);
  const history: HistoryOp[] = [];
  const faults: Record<string, number> = {};
  try {
    const kafka = lab_kafka(cluster.bootstrap, 'faults');
    await create_topic(kafka);
    const end_ms = Date.now() + minutes * 60_000;
    const writing = Array.from({ length: PRODUCERS }, (_, i) =>
      produce_loop(kafka, `p${i}`, started_ms, () => Date.now() < end_ms, history),
    );
    const next = random_from(seed);
    const kinds = Object.keys(FAULT_MS) as Fault[];
    while (Date.now() < end_ms) {
      await sleep(GAP_MS);
      const fault = kinds[Math.floor(next() * kinds.length)]!;
      const node_id = 1 + Math.floor(next() * BROKERS);
      await inject(cluster, fault, node_id, log);
      faults[fault] = (faults[fault] ?? 0) + 1;
    }
    await Promise.all(writing);
    log('restoring the cluster, reading the topic back');
    await cluster.restore();
    history.push(...(await read_all(kafka, 'final-reader', started_ms)));
  } finally {
    fs.writeFileSync(path.join(dir, 'history.jsonl'), history.map((op) => JSON.stringify(op)).join('\n') + '\n');
    await cluster.stop();
  }
  const result = check_history(history);
  const verdict = describe_failures(result, seed, `npm run faults -- --minutes ${minutes}`);
  log(`faults injected: ${JSON.stringify(faults)}`);
  log(verdict);
  fs.writeFileSync(path.join(dir, 'verdict.json'), JSON.stringify({ seed, minutes, faults, ...result }, null, 1));
  journal.end();
  return result.valid ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(2);
  },
);
