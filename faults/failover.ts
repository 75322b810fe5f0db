// `npm run faults:failover -- --kills N`: how long a partition takes to accept writes again after
// its leader is killed, with every broker setting at its default. A 3-broker cluster in the network
// lab; a kafkajs idempotent producer writes one record at a time (acks=all) to partition 0 of a
// topic with 3 replicas and min.insync.replicas=2; the partition's leader is killed with SIGKILL,
// and the gap is the time from the kill to the first acknowledgement after it. The killed broker
// is restarted and the ISR made whole before the next kill. Prints p50, p99 and max, and writes
// every gap to failover.json in the results folder.
import { setTimeout as sleep } from 'node:timers/promises';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Kafka } from 'kafkajs';
import { LabCluster, etcd_missing, sweep_disks } from './lab_cluster.ts';
import { network_missing, sweep } from './net.ts';
import { lab_kafka } from './workload.ts';

const ROOT = path.resolve(import.meta.dirname, '..');
const LAB = 101;
const TOPIC = 'failover';
const RESUME_TIMEOUT_MS = 30_000;
const ISR_TIMEOUT_MS = 60_000;

async function partition_zero(kafka: Kafka): Promise<{ leader: number; isr: number[] }> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const { topics } = await admin.fetchTopicMetadata({ topics: [TOPIC] });
    const p = topics[0]!.partitions.find((x) => x.partitionId === 0)!;
    return { leader: p.leader, isr: p.isr };
  } finally {
    await admin.disconnect();
  }
}

async function until<T>(what: string, timeout_ms: number, probe: () => Promise<T | null>): Promise<T> {
  const deadline_ms = Date.now() + timeout_ms;
  for (;;) {
    const found = await probe().catch(() => null);
    if (found !== null) return found;
    if (Date.now() > deadline_ms) throw new Error(`${what}: not within ${timeout_ms} ms`);
    await sleep(200);
  }
}

/** Writes until stopped; `acks` holds the time of every acknowledgement. */
function writer(kafka: Kafka) {
  const acks: number[] = [];
  let running = true;
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  const done = (async () => {
    await producer.connect();
    for (let n = 0; running; n++) {
      try {
        await producer.send({ topic: TOPIC, acks: -1, messages: [{ partition: 0, value: `m${n}` }] });
        acks.push(performance.now());
      } catch {
        // retried by the next send
      }
    }
    await producer.disconnect();
  })();
  return {
    acks,
    stop: async () => {
      running = false;
      await done;
    },
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { kills: { type: 'string', default: '50' }, out: { type: 'string' } } });
  const kills = Number(values.kills);
  const missing = (await network_missing()) ?? etcd_missing();
  if (missing) throw new Error(`the failover measurement cannot run here: ${missing}`);
  const stamp = new Date().toISOString().replace(/[:.]/g, '-');
  const dir = path.resolve(values.out ?? path.join(ROOT, 'faults-results', `failover-${stamp}`));
  fs.mkdirSync(dir, { recursive: true });
  await sweep();
  sweep_disks();
  const cluster = await LabCluster.start(LAB, 3, dir, true);
  const gaps_ms: number[] = [];
  try {
    const kafka = lab_kafka(cluster.bootstrap, 'failover');
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({
      topics: [
        {
          topic: TOPIC,
          numPartitions: 1,
          replicationFactor: 3,
          configEntries: [{ name: 'min.insync.replicas', value: '2' }],
        },
      ],
      waitForLeaders: true,
    });
    await admin.disconnect();
    const load = writer(kafka);
    try {
      for (let kill = 0; kill < kills; kill++) {
        const { leader } = await until('an ISR of 3', ISR_TIMEOUT_MS, async () => {
          const state = await partition_zero(kafka);
          return state.leader > 0 && state.isr.length === 3 ? state : null;
        });
        await until('writes flowing', RESUME_TIMEOUT_MS, async () =>
          load.acks.length > 0 && performance.now() - load.acks.at(-1)! < 200 ? true : null,
        );
        await cluster.kill(leader);
        // From the moment the process is gone: an answer already on its way is not the new leader's.
        const killed_ms = performance.now();
        const killed_at = Date.now();
        const resumed_ms = await until(
          `writes after killing broker ${leader}`,
          RESUME_TIMEOUT_MS,
          async () => load.acks.find((t) => t > killed_ms) ?? null,
        );
        gaps_ms.push(Math.round(resumed_ms - killed_ms));
        const resumed = `writes resumed after ${gaps_ms.at(-1)} ms (killed at ${killed_at})`;
        process.stderr.write(`kill ${kill + 1}/${kills}: broker ${leader}, ${resumed}\n`);
        await cluster.start_broker(leader);
      }
    } finally {
      await load.stop();
    }
  } finally {
    await cluster.stop();
  }
  const sorted = [...gaps_ms].sort((a, b) => a - b);
  const summary = {
    kills: gaps_ms.length,
    p50_ms: percentile(sorted, 50),
    p99_ms: percentile(sorted, 99),
    max_ms: sorted.at(-1),
    gaps_ms,
  };
  fs.writeFileSync(path.join(dir, 'failover.json'), JSON.stringify(summary, null, 1));
  const { kills: count, p50_ms, p99_ms, max_ms } = summary;
  process.stdout.write(`failover over ${count} kills: p50 ${p50_ms} ms, p99 ${p99_ms} ms, max ${max_ms} ms (${dir})\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(2);
  },
);
