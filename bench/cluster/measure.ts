// One system's run of the replicated produce benchmark: SDK producers send with acks=all to a
// fresh topic per message size, after a warm-up, while the brokers' and etcd's CPU time is read
// from /proc; the system is stopped and its data removed before the next one starts.
import { Sluice, type Producer } from '../../src/sdk/index.ts';
import { pump_sends } from '../pump_sends.ts';
import { cpu_seconds, remove_temp_dirs, stop_broker, stop_etcd } from './processes.ts';
import { type RunningSystem, type SystemId, create_topic, start_system } from './systems.ts';
import {
  type ClusterBenchOptions,
  GRACE_MS,
  READY_LIMIT_MS,
  STOP_LIMIT_MS,
  f0,
  f1,
  say,
  size_label,
  within,
} from './support.ts';

/** Warm-up sends stop after this many messages even when time is left. */
const WARMUP_MESSAGES_MAX = 500_000;

interface ProduceResult {
  acknowledged: number;
  elapsed_s: number;
  /** What ended the sending: the time limit or the message count. */
  ended_by: 'time' | 'count';
}

export interface Measurement {
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

/** Every producer sends its share of `messages` of `size` bytes to `topic` for at most `seconds`. */
async function produce(
  options: ClusterBenchOptions,
  producers: Producer[],
  topic: string,
  size: number,
  messages: number,
  seconds: number,
): Promise<ProduceResult> {
  const value = Buffer.alloc(size, 0x61);
  const full = Array.from({ length: options.send_messages }, () => ({ value }));
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
          options.send_messages,
          options.in_flight,
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

async function connect_producers(options: ClusterBenchOptions, system: RunningSystem, producers: Producer[]) {
  for (let i = 0; i < options.producers; i++) {
    const producer = new Sluice({
      brokers: system.bootstrap,
      clientId: `bench-cluster-producer-${i}`,
      retry: { retries: 5, initialRetryTime: 100 },
    }).producer({ acks: -1, allowAutoTopicCreation: false });
    producers.push(producer);
    await within(producer.connect(), READY_LIMIT_MS, 'producer connect');
  }
}

/** The warm-up and the measured run of one message size, on a topic of its own. */
async function measure_size(
  options: ClusterBenchOptions,
  system: RunningSystem,
  sluice: Sluice,
  producers: Producer[],
  size: number,
): Promise<Measurement> {
  const { page_cache } = options;
  const topic = `bench-${system.id}-${size}`;
  const leaders = await create_topic(system, sluice, topic, options.partitions);
  page_cache.drop_now();
  let warmup_messages = 0;
  if (options.warmup_seconds > 0) {
    const warmup_count = Math.min(options.messages, WARMUP_MESSAGES_MAX);
    const warm = await page_cache.holding(() =>
      produce(options, producers, topic, size, warmup_count, options.warmup_seconds),
    );
    warmup_messages = warm.acknowledged;
  }
  const cpu_before = new Map([...system.brokers].map(([node, broker]) => [node, cpu_seconds(broker.child.pid)]));
  const etcd_before = cpu_seconds(system.etcd?.child.pid);
  const client_before = process.cpuUsage();
  const run = await page_cache.holding(() =>
    produce(options, producers, topic, size, options.messages, options.seconds),
  );
  const client_cpu = process.cpuUsage(client_before);
  const pct = (seconds: number) => (100 * seconds) / run.elapsed_s;
  const broker_cpu_pct: Record<string, number> = {};
  for (const [node, broker] of system.brokers)
    broker_cpu_pct[node] = pct(cpu_seconds(broker.child.pid) - cpu_before.get(node)!);
  const msgs_per_s = run.acknowledged / run.elapsed_s;
  return {
    system: system.id,
    label: system.label,
    size_bytes: size,
    partitions: options.partitions,
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
}

function report(m: Measurement): void {
  const brokers = Object.entries(m.broker_cpu_pct)
    .map(([node, value]) => `${node}:${f0(value)}%`)
    .join(' ');
  say(
    `  ${size_label(m.size_bytes)}: ${f0(m.messages)} messages in ${f1(m.seconds)} s (ended by ${m.ended_by}) = ` +
      `${f0(m.msgs_per_s)} msg/s, ${f1(m.mb_per_s)} MB/s; ` +
      `CPU: brokers ${brokers}` +
      (m.etcd_cpu_pct !== null ? `, etcd ${f0(m.etcd_cpu_pct)}%` : '') +
      `, producers ${f0(m.client_cpu_pct)}%`,
  );
}

/** Disconnects the producers, says whether the brokers logged warnings, and removes the system. */
async function stop_system(system: RunningSystem, producers: Producer[]): Promise<void> {
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
  if (system.etcd) await stop_etcd(system.etcd);
  // Its data goes before the next system starts, so that one writes to the same free disk.
  remove_temp_dirs();
}

/** Starts the system, measures every size on it and stops it again. */
export async function measure_system(id: SystemId, options: ClusterBenchOptions): Promise<Measurement[]> {
  const results: Measurement[] = [];
  const started = performance.now();
  const system = await start_system(id, options);
  say(`\n## ${system.label}: ${system.bootstrap.join(', ')} (ready after ${f0(performance.now() - started)} ms)`);
  const sluice = new Sluice({
    brokers: system.bootstrap,
    clientId: 'bench-cluster',
    retry: { retries: 5, initialRetryTime: 100 },
  });
  const producers: Producer[] = [];
  try {
    await connect_producers(options, system, producers);
    for (const size of options.sizes) {
      const measurement = await measure_size(options, system, sluice, producers, size);
      results.push(measurement);
      report(measurement);
    }
  } finally {
    await stop_system(system, producers);
  }
  return results;
}
