// The parts the peer workloads (workloads.ts) are built from: payloads (stamped for latency),
// publishing over a window of unacknowledged messages per producer, consumer assignment, bounded
// waits and the result. Every loop here is bounded in count and time.
import type { PublishParams, ThroughputResult } from '../types.ts';
import type { PeerConsumer, PeerProducer, PeerRun, RunFactory } from './adapter.ts';

/** Unacknowledged publishes allowed per producer connection. */
export const PUBLISH_WINDOW = 1000;

/** After a phase's time limit, how long in-flight acknowledgements / deliveries may still take. */
export const SETTLE_GRACE_MS = 60_000;

const PROGRESS_EVERY = 1000;

/** A payload of `bytes` bytes with some varied content (not all zeros). */
export function make_payload(bytes: number): Buffer {
  const buf = Buffer.alloc(Math.max(0, bytes));
  for (let i = 0; i < buf.length; i++) buf[i] = (i * 31 + 7) & 0xff;
  return buf;
}

/** Latency payloads carry the send time (performance.now(), float64 LE) at offset 0 and a sequence number at 8. */
export const LATENCY_HEADER_BYTES = 12;

export function stamp_payload(template: Buffer, seq: number): Buffer {
  const buf = Buffer.allocUnsafe(Math.max(template.length, LATENCY_HEADER_BYTES));
  template.copy(buf, 0);
  buf.writeUInt32LE(seq >>> 0, 8);
  buf.writeDoubleLE(performance.now(), 0);
  return buf;
}

export function read_stamp(payload: Uint8Array): { sent_at: number; seq: number } | undefined {
  if (payload.byteLength < LATENCY_HEADER_BYTES) return undefined;
  const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  return { sent_at: view.getFloat64(0, true), seq: view.getUint32(8, true) };
}

/** A promise that one waiter can wait on until notified, or until a deadline. */
export class Signal {
  private waiters: Array<() => void> = [];
  notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }
  /** Resolves on the next notify() or after max_ms, whichever comes first. */
  async wait(max_ms: number): Promise<void> {
    if (max_ms <= 0) return;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.waiters.push(resolve);
      timer = setTimeout(resolve, Math.min(max_ms, 2_147_000_000));
    });
    clearTimeout(timer);
  }
}

export function throttled_progress(progress: (messages_done: number) => void): {
  tick: (done: number) => void;
  final: (done: number) => void;
} {
  let last = 0;
  return {
    tick(done: number) {
      if (done - last >= PROGRESS_EVERY) {
        last = done;
        progress(done);
      }
    },
    final(done: number) {
      last = done;
      progress(done);
    },
  };
}

/** Consumers used for P destinations and N producers: min(N, P) connections, destination d read by consumer d mod C. */
export function consumer_assignment(partitions: number, producers: number): number[][] {
  const consumers = Math.max(1, Math.min(producers, partitions));
  const groups: number[][] = Array.from({ length: consumers }, () => []);
  for (let d = 0; d < partitions; d++) groups[d % consumers]!.push(d);
  return groups;
}

interface PublishOutcome {
  acked: number;
  truncated: boolean;
  elapsed_ms: number;
}

/**
 * Publishes params.messages over params.producers connections (message i goes to destination
 * i mod partitions, producer i mod producers), at most PUBLISH_WINDOW unacknowledged per producer.
 * Stops issuing at deadline (truncated); waits up to SETTLE_GRACE_MS for outstanding acks.
 */
export async function publish_all(
  run: PeerRun,
  params: PublishParams,
  payload_for: (seq: number) => Buffer,
  deadline: number,
  on_ack: (acked: number) => void,
): Promise<PublishOutcome> {
  const producers: PeerProducer[] = [];
  try {
    for (let p = 0; p < params.producers; p++) producers.push(await run.open_producer());
    const started = performance.now();
    let acked = 0;
    let truncated = false;
    const one = async (p: number, producer: PeerProducer): Promise<void> => {
      const signal = new Signal();
      let outstanding = 0;
      let failure: unknown;
      const hard_deadline = deadline + SETTLE_GRACE_MS;
      for (let seq = p; seq < params.messages; seq += params.producers) {
        if (failure !== undefined) break;
        if (performance.now() >= deadline) {
          truncated = true;
          break;
        }
        while (outstanding >= PUBLISH_WINDOW && failure === undefined) {
          const left = hard_deadline - performance.now();
          if (left <= 0) throw new Error(`publish acknowledgements stalled (${outstanding} outstanding)`);
          await signal.wait(left);
        }
        const pause = producer.backpressure();
        if (pause) await with_timeout(pause, Math.max(1, hard_deadline - performance.now()), 'producer backpressure');
        outstanding++;
        producer.send(seq % params.partitions, payload_for(seq)).then(
          () => {
            outstanding--;
            acked++;
            on_ack(acked);
            signal.notify();
          },
          (error: unknown) => {
            outstanding--;
            failure ??= error;
            signal.notify();
          },
        );
      }
      while (outstanding > 0) {
        const left = hard_deadline - performance.now();
        if (left <= 0) throw new Error(`publish acknowledgements stalled at the end (${outstanding} outstanding)`);
        await signal.wait(left);
      }
      if (failure !== undefined) throw failure instanceof Error ? failure : new Error(String(failure));
    };
    await Promise.all(producers.map((producer, p) => one(p, producer)));
    return { acked, truncated, elapsed_ms: performance.now() - started };
  } finally {
    await Promise.allSettled(producers.map((producer) => producer.close()));
  }
}

export async function with_timeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`${what} timed out after ${Math.round(ms)} ms`)),
          Math.min(Math.max(ms, 1), 2_147_000_000),
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

export function check_consumers(consumers: PeerConsumer[]): void {
  for (const consumer of consumers) {
    const failure = consumer.failure();
    if (failure) throw new Error(`consumer failed: ${failure.message}`);
  }
}

export async function open_consumers(run: PeerRun, groups: number[][]): Promise<PeerConsumer[]> {
  const consumers: PeerConsumer[] = [];
  try {
    for (let c = 0; c < groups.length; c++) consumers.push(await run.open_consumer(c));
  } catch (error) {
    await Promise.allSettled(consumers.map((consumer) => consumer.close()));
    throw error;
  }
  return consumers;
}

export async function with_run<T>(
  factory: RunFactory,
  partitions: number,
  body: (run: PeerRun) => Promise<T>,
): Promise<T> {
  const run = factory(partitions);
  try {
    await run.prepare();
    return await body(run);
  } finally {
    await with_timeout(run.cleanup(), 60_000, 'cleanup').catch(() => undefined);
  }
}

export function check_params(params: PublishParams): void {
  if (!Number.isSafeInteger(params.messages) || params.messages < 0)
    throw new Error(`messages must be a non-negative integer, got ${params.messages}`);
  if (!Number.isSafeInteger(params.partitions) || params.partitions < 1)
    throw new Error(`partitions must be a positive integer, got ${params.partitions}`);
  if (!Number.isSafeInteger(params.producers) || params.producers < 1)
    throw new Error(`producers must be a positive integer, got ${params.producers}`);
  if (!(params.time_limit_ms > 0)) throw new Error(`time_limit_ms must be positive, got ${params.time_limit_ms}`);
}

/** A throughput result; `client_cpu_s` when the workload measured the client's CPU over its timed part. */
export function result(
  messages: number,
  payload_bytes: number,
  elapsed_ms: number,
  truncated: boolean,
  client_cpu_s?: number,
): ThroughputResult {
  const out: ThroughputResult = { messages, bytes: messages * payload_bytes, elapsed_ms };
  if (truncated) out.truncated = true;
  if (client_cpu_s !== undefined) out.client_cpu_s = client_cpu_s;
  return out;
}
