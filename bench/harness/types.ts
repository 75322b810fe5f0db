// The contract between the benchmark harness and the systems it drives. Each system (Sluice with
// one of its clients, or a peer broker with its usual Node client) implements SystemUnderTest; the
// harness (bench/harness/run.ts) starts it, runs workloads, samples the server's CPU and memory,
// measures its own (the client's) CPU, and reports everything side by side, grouped by durability.

/** How durable an acknowledgement is, for grouping the comparison. */
export type DurabilityClass = 'fsync' | 'periodic' | 'none';

export interface PublishParams {
  /** Messages to publish in total (the run may stop earlier at time_limit_ms). */
  messages: number;
  payload_bytes: number;
  /** Partitions (Sluice), or queues/streams/subjects for peers; 1 when the system has no such notion. */
  partitions: number;
  /** Concurrent producers (connections). */
  producers: number;
  time_limit_ms: number;
}

/** The queue workload: a backlog of `messages` written first (untimed), then shared by `consumers`. */
export interface QueueParams extends PublishParams {
  /** Consumers (each its own connection) sharing the one queue, each acknowledging every message. */
  consumers: number;
}

export interface ThroughputResult {
  messages: number;
  bytes: number;
  elapsed_ms: number;
  /** Set when the run hit time_limit_ms before publishing every message. */
  truncated?: boolean;
  /**
   * The harness process's CPU seconds (machine.ts, client_cpu_seconds) over the timed part only,
   * set by workloads with an untimed setup (a backlog written in-process, files written for kcat),
   * whose cost would otherwise be charged to the client; without it the whole workload counts.
   */
  client_cpu_s?: number;
}

export interface LatencyParams {
  rate_per_s: number;
  duration_ms: number;
  payload_bytes: number;
}

export interface LatencyResult {
  /** End-to-end latency (publish call to consumer receipt) of every message, in milliseconds. */
  samples_ms: Float64Array;
  sent: number;
  received: number;
}

export interface SystemUnderTest {
  /** Short unique id, e.g. 'sluice-lean-fsync', 'rabbitmq-quorum', 'redis-always'. */
  id: string;
  /** Human label for reports, e.g. 'Sluice (lean client)', 'RabbitMQ quorum queue'. */
  label: string;
  durability: DurabilityClass;
  /** What exactly an acknowledgement means here, printed beside the figures. */
  durability_detail: string;
  /** The client library (and version) used to drive it. */
  client: string;
  /** Starts the server(s) on loopback with a fresh directory under workdir. */
  start(workdir: string): Promise<void>;
  stop(): Promise<void>;
  /** Process ids whose CPU time and memory count as "the broker". */
  server_pids(): number[];
  /** Publish-only throughput: resolves when every publish was acknowledged. */
  publish(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult>;
  /** Publish and consume at once; resolves when every message was consumed. */
  publish_consume(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult>;
  /** Fixed-rate publishing with a consumer measuring end-to-end latency. */
  latency(params: LatencyParams): Promise<LatencyResult>;
  /**
   * Backlog drain: publish `params.messages` first (not timed), then consume them all (timed).
   * The result counts the consumed messages.
   */
  drain(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult>;
  /**
   * Queue delivery with per-message acknowledgement: `params.messages` written first to a fresh
   * queue/topic with `params.partitions` partitions (not timed), then `params.consumers` consumers
   * share it, each message acknowledged on its own; timed from the first message received to the
   * last one acknowledged by the consumers' handlers. The result counts acknowledged messages.
   * Optional: the harness skips systems without it (the report shows "–").
   */
  queue?(params: QueueParams, progress: (messages_done: number) => void): Promise<ThroughputResult>;
  /**
   * Publish with one message per send() call and up to 2,000 calls unresolved per producer;
   * resolves when every send was acknowledged. Optional, for systems with a per-message send API
   * (the client libraries); the harness skips the others (the report shows "–").
   */
  publish_single?(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult>;
  /**
   * As drain, with the consumer handing messages to a per-message handler (eachMessage) instead of
   * a per-batch one. Optional: the harness skips systems without it (the report shows "–").
   */
  drain_each?(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult>;
}

/** A system that cannot run here says why instead of being silently left out. */
export interface Unavailable {
  id: string;
  label: string;
  reason: string;
}
