// The base of every Sluice system of the side-by-side benchmark: its own broker process on a fresh
// data directory under the harness's workdir, one of three durability policies, a fresh topic per
// workload, and the helpers every client's driver shares (results, bounded waits).
//
// Conventions shared by every driver (lean.ts, kcat.ts, kafkajs.ts, sdk.ts, platformatic.ts):
// - every workload creates its own topic (CreateTopics, untimed) named bench-<system>-<n>;
// - ThroughputResult.bytes counts payload bytes (messages x payload_bytes), not wire bytes;
// - latency: the value's first 8 bytes carry performance.now() at the publish call (little-endian
//   float64); the consumer in the same process subtracts it from performance.now() at receipt;
// - every wait is bounded by the workload's time limit plus a fixed grace period;
// - a workload with an untimed setup in this process (a backlog, kcat's message files) measures
//   the client's CPU over its timed part itself (ThroughputResult.client_cpu_s).
import type {
  DurabilityClass,
  LatencyParams,
  LatencyResult,
  PublishParams,
  SystemUnderTest,
  ThroughputResult,
} from '../types.ts';
import { BrokerProcess } from './broker.ts';
import { Connection, create_topic, end_offsets, type ProduceOptions } from './lean_client.ts';

/** Extra time allowed beyond a workload's own limit (connects, group joins, the last acks). */
export const GRACE_MS = 30_000;

export interface SluiceSystemsOptions {
  /** Extra node flags for every broker process, e.g. ['--cpu-prof', '--cpu-prof-dir=DIR']. */
  broker_node_args?: string[];
  /** Batching of the lean producer (defaults in LEAN_PRODUCE_DEFAULTS, lean.ts). */
  lean?: ProduceOptions;
  kcat_path?: string;
  /**
   * Messages per send() call of the client-library systems (kafkajs, SDK, @platformatic/kafka), and
   * send() calls in flight per producer (default 1000 and 4).
   */
  client_send_messages?: number;
  client_sends_in_flight?: number;
}

export const DURABILITY = {
  fsync: { flag: 'fsync', class: 'fsync', detail: 'fsync before ack, group commit across partitions' },
  interval: { flag: 'interval:100', class: 'periodic', detail: 'ack after write, fsync every 100 ms' },
  none: { flag: 'none', class: 'none', detail: 'ack after write, fsync at checkpoints (10 s)' },
} satisfies Record<string, { flag: string; class: DurabilityClass; detail: string }>;
export type DurabilityKey = keyof typeof DURABILITY;

export abstract class SluiceSystem implements SystemUnderTest {
  abstract readonly id: string;
  abstract readonly label: string;
  abstract readonly client: string;
  readonly durability: DurabilityClass;
  readonly durability_detail: string;
  protected broker: BrokerProcess | null = null;
  protected workdir = '';
  private topics = 0;

  constructor(
    private readonly durability_key: DurabilityKey,
    protected readonly options: SluiceSystemsOptions,
  ) {
    this.durability = DURABILITY[durability_key].class;
    this.durability_detail = DURABILITY[durability_key].detail;
  }

  async start(workdir: string): Promise<void> {
    if (this.broker) throw new Error(`${this.id} is already started`);
    this.workdir = workdir;
    this.broker = await BrokerProcess.start(workdir, this.id, {
      durability: DURABILITY[this.durability_key].flag,
      node_args: this.options.broker_node_args,
    });
  }

  async stop(): Promise<void> {
    const broker = this.broker;
    this.broker = null;
    await broker?.stop();
  }

  server_pids(): number[] {
    return this.broker ? [this.broker.pid] : [];
  }

  protected get running(): BrokerProcess {
    if (!this.broker) throw new Error(`${this.id} is not started`);
    return this.broker;
  }

  /** Creates a fresh topic for one workload (untimed). */
  protected async new_topic(partitions: number): Promise<string> {
    const topic = `bench-${this.id}-${++this.topics}`;
    const connection = await Connection.connect(this.running.host, this.running.port);
    try {
      await create_topic(connection, topic, partitions);
    } finally {
      connection.close();
    }
    return topic;
  }

  protected async topic_size(topic: string, partitions: number): Promise<number> {
    const connection = await Connection.connect(this.running.host, this.running.port);
    try {
      return (await end_offsets(connection, topic, partitions)).reduce((a, b) => a + b, 0);
    } finally {
      connection.close();
    }
  }

  abstract publish(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult>;
  abstract publish_consume(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult>;
  abstract latency(params: LatencyParams): Promise<LatencyResult>;
  abstract drain(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult>;
}

/** A throughput result; `client_cpu_s` when the caller measured the client's CPU over the timed part. */
export function result(
  messages: number,
  params: PublishParams,
  elapsed_ms: number,
  truncated: boolean,
  client_cpu_s?: number,
): ThroughputResult {
  return {
    messages,
    bytes: messages * params.payload_bytes,
    elapsed_ms,
    ...(truncated ? { truncated } : {}),
    ...(client_cpu_s !== undefined ? { client_cpu_s } : {}),
  };
}

/** Resolves `promise`, or rejects after `ms` with a message naming `what`. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not done within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
