// The workloads of every peer system (publish, publish_consume, drain, queue, latency), run
// against any broker through its driver's PeerRun (adapter.ts). Every wait is bounded. drain and
// queue publish their backlog in this process first, so they measure the client's CPU over their
// timed part themselves (ThroughputResult.client_cpu_s).
import { setTimeout as sleep } from 'node:timers/promises';
import { client_cpu_seconds } from '../machine.ts';
import type { LatencyParams, LatencyResult, PublishParams, QueueParams, ThroughputResult } from '../types.ts';
import type { PeerQueueConsumer, PeerRun, QueuePeerRun, RunFactory } from './adapter.ts';
import {
  check_consumers,
  check_params,
  consumer_assignment,
  LATENCY_HEADER_BYTES,
  make_payload,
  open_consumers,
  publish_all,
  read_stamp,
  result,
  SETTLE_GRACE_MS,
  Signal,
  stamp_payload,
  throttled_progress,
  with_run,
  with_timeout,
} from './engine.ts';

/** Queue workload: how long after subscribing the first message may take to arrive. */
export const QUEUE_FIRST_MESSAGE_MS = 30_000;

/** After a latency run's publishing ends, how long to wait for the remaining deliveries. */
export const LATENCY_TAIL_WAIT_MS = 10_000;

/** Publish-only throughput. */
export async function run_publish(
  factory: RunFactory,
  params: PublishParams,
  progress: (messages_done: number) => void,
): Promise<ThroughputResult> {
  check_params(params);
  const payload = make_payload(params.payload_bytes);
  const report = throttled_progress(progress);
  return with_run(factory, params.partitions, async (run) => {
    const outcome = await publish_all(
      run,
      params,
      () => payload,
      performance.now() + params.time_limit_ms,
      report.tick,
    );
    report.final(outcome.acked);
    return result(outcome.acked, params.payload_bytes, outcome.elapsed_ms, outcome.truncated);
  });
}

/** Publish with consumers running; ends when every acknowledged message was consumed. */
export async function run_publish_consume(
  factory: RunFactory,
  params: PublishParams,
  progress: (messages_done: number) => void,
): Promise<ThroughputResult> {
  check_params(params);
  const payload = make_payload(params.payload_bytes);
  const report = throttled_progress(progress);
  return with_run(factory, params.partitions, async (run) => {
    const groups = consumer_assignment(params.partitions, params.producers);
    const consumers = await open_consumers(run, groups);
    try {
      let consumed = 0;
      const signal = new Signal();
      const on_message = () => {
        consumed++;
        report.tick(consumed);
        if ((consumed & 255) === 0) signal.notify();
      };
      const started = performance.now();
      for (let c = 0; c < consumers.length; c++) await consumers[c]!.subscribe(groups[c]!, on_message);
      const outcome = await publish_all(
        run,
        params,
        () => payload,
        started + params.time_limit_ms,
        () => undefined,
      );
      const hard_deadline = performance.now() + SETTLE_GRACE_MS;
      while (consumed < outcome.acked) {
        check_consumers(consumers);
        const left = hard_deadline - performance.now();
        if (left <= 0) throw new Error(`consumption stalled: ${consumed} of ${outcome.acked} consumed`);
        await signal.wait(Math.min(left, 5));
      }
      const elapsed = performance.now() - started;
      report.final(consumed);
      return result(consumed, params.payload_bytes, elapsed, outcome.truncated);
    } finally {
      await Promise.allSettled(consumers.map((consumer) => with_timeout(consumer.close(), 30_000, 'consumer close')));
    }
  });
}

/** Backlog drain: publish first (untimed), then time consuming everything. */
export async function run_drain(
  factory: RunFactory,
  params: PublishParams,
  progress: (messages_done: number) => void,
): Promise<ThroughputResult> {
  check_params(params);
  const payload = make_payload(params.payload_bytes);
  const report = throttled_progress(progress);
  return with_run(factory, params.partitions, async (run) => {
    const filled = await publish_all(
      run,
      params,
      () => payload,
      performance.now() + params.time_limit_ms,
      () => undefined,
    );
    const groups = consumer_assignment(params.partitions, params.producers);
    const consumers = await open_consumers(run, groups);
    try {
      let consumed = 0;
      const signal = new Signal();
      const on_message = () => {
        consumed++;
        report.tick(consumed);
        if ((consumed & 255) === 0 || consumed >= filled.acked) signal.notify();
      };
      const cpu_before = client_cpu_seconds();
      const started = performance.now();
      const deadline = started + params.time_limit_ms;
      for (let c = 0; c < consumers.length; c++) await consumers[c]!.subscribe(groups[c]!, on_message);
      while (consumed < filled.acked && performance.now() < deadline) {
        check_consumers(consumers);
        await signal.wait(Math.min(deadline - performance.now(), 5));
      }
      const elapsed = performance.now() - started;
      const client_cpu_s = client_cpu_seconds() - cpu_before;
      report.final(consumed);
      const truncated = filled.truncated || consumed < filled.acked;
      return result(consumed, params.payload_bytes, elapsed, truncated, client_cpu_s);
    } finally {
      await Promise.allSettled(consumers.map((consumer) => with_timeout(consumer.close(), 30_000, 'consumer close')));
    }
  });
}

/**
 * Queue delivery with per-message acknowledgement: publish params.messages to the destination(s)
 * first (untimed, the same publishing as every other workload), then params.consumers consumers
 * (consumer c reads destination c mod partitions) acknowledge every message on its own. Timed from
 * the first delivery to the acknowledgement that makes the count reach the backlog; the first
 * delivery may take QUEUE_FIRST_MESSAGE_MS, the rest params.time_limit_ms (then truncated).
 */
export async function run_queue(
  factory: (partitions: number) => QueuePeerRun,
  params: QueueParams,
  progress: (messages_done: number) => void,
): Promise<ThroughputResult> {
  check_params(params);
  if (!Number.isSafeInteger(params.consumers) || params.consumers < 1)
    throw new Error(`consumers must be a positive integer, got ${params.consumers}`);
  const payload = make_payload(params.payload_bytes);
  const report = throttled_progress(progress);
  const run = factory(params.partitions);
  try {
    await run.prepare();
    const filled = await publish_all(
      run,
      params,
      () => payload,
      performance.now() + params.time_limit_ms,
      () => undefined,
    );
    const consumers: PeerQueueConsumer[] = [];
    try {
      for (let c = 0; c < params.consumers; c++) consumers.push(await run.open_queue_consumer(c));
      const target = filled.acked;
      let acked = 0;
      let started = 0;
      let finished = 0;
      // The client's CPU seconds at the first delivery and at the last acknowledgement.
      let cpu_started = 0;
      let cpu_finished = 0;
      const signal = new Signal();
      const on_delivery = () => {
        if (started !== 0) return;
        started = performance.now();
        cpu_started = client_cpu_seconds();
      };
      const on_acked = () => {
        acked++;
        report.tick(acked);
        if (acked === target) {
          finished = performance.now();
          cpu_finished = client_cpu_seconds();
          signal.notify();
        } else if ((acked & 255) === 0) signal.notify();
      };
      const subscribed_at = performance.now();
      for (let c = 0; c < consumers.length; c++)
        await consumers[c]!.subscribe(c % params.partitions, on_delivery, on_acked);
      while (acked < target) {
        for (const consumer of consumers) {
          const failure = consumer.failure();
          if (failure) throw new Error(`queue consumer failed: ${failure.message}`);
        }
        const deadline = started === 0 ? subscribed_at + QUEUE_FIRST_MESSAGE_MS : started + params.time_limit_ms;
        const left = deadline - performance.now();
        if (left <= 0) break;
        await signal.wait(Math.min(left, 5));
      }
      if (started === 0 && target > 0)
        throw new Error(`no message delivered to ${params.consumers} consumers within ${QUEUE_FIRST_MESSAGE_MS} ms`);
      const end = finished !== 0 ? finished : performance.now();
      const client_cpu_s = (finished !== 0 ? cpu_finished : client_cpu_seconds()) - cpu_started;
      report.final(acked);
      return result(acked, params.payload_bytes, end - started, filled.truncated || acked < target, client_cpu_s);
    } finally {
      await Promise.allSettled(
        consumers.map((consumer) => with_timeout(consumer.close(), 30_000, 'queue consumer close')),
      );
    }
  } finally {
    await with_timeout(run.cleanup(), 60_000, 'cleanup').catch(() => undefined);
  }
}

/** Fixed-rate publishing to one destination with one consumer measuring end-to-end latency. */
export async function run_latency(factory: RunFactory, params: LatencyParams): Promise<LatencyResult> {
  if (!(params.rate_per_s > 0) || !(params.duration_ms > 0))
    throw new Error('rate_per_s and duration_ms must be positive');
  const total = Math.max(1, Math.floor((params.rate_per_s * params.duration_ms) / 1000));
  const template = make_payload(Math.max(params.payload_bytes, LATENCY_HEADER_BYTES));
  return with_run(factory, 1, async (run) => {
    const [consumer] = await open_consumers(run, [[0]]);
    const producer = await run.open_producer();
    const samples = new Float64Array(total);
    const seen = new Uint8Array(total);
    let received = 0;
    let sent = 0;
    let acked = 0;
    let failure: unknown;
    const signal = new Signal();
    try {
      await consumer!.subscribe([0], (payload) => {
        const now = performance.now();
        const stamp = read_stamp(payload);
        if (!stamp || stamp.seq >= total || seen[stamp.seq]) return;
        seen[stamp.seq] = 1;
        samples[received++] = now - stamp.sent_at;
        if (received >= sent) signal.notify();
      });
      const started = performance.now();
      const interval_ms = 1000 / params.rate_per_s;
      // Publishing may fall behind schedule; it stops sending at duration + 5 s in any case.
      const stop_at = started + params.duration_ms + 5000;
      while (sent < total && failure === undefined) {
        const now = performance.now();
        if (now >= stop_at) break;
        const due = Math.min(total, Math.floor((now - started) / interval_ms) + 1);
        while (sent < due) {
          const pause = producer.backpressure();
          if (pause) await with_timeout(pause, Math.max(1, stop_at - performance.now()), 'producer backpressure');
          producer.send(0, stamp_payload(template, sent)).then(
            () => {
              acked++;
            },
            (error: unknown) => {
              failure ??= error;
            },
          );
          sent++;
        }
        const next_at = started + sent * interval_ms;
        await sleep(Math.max(0, next_at - performance.now()));
      }
      const tail_deadline = performance.now() + LATENCY_TAIL_WAIT_MS;
      while (received < sent && performance.now() < tail_deadline) {
        check_consumers([consumer!]);
        await signal.wait(Math.min(50, tail_deadline - performance.now()));
      }
      const ack_deadline = performance.now() + LATENCY_TAIL_WAIT_MS;
      while (acked < sent && failure === undefined && performance.now() < ack_deadline) await sleep(5);
      if (failure !== undefined) throw failure instanceof Error ? failure : new Error(String(failure));
      return { samples_ms: samples.slice(0, received), sent, received };
    } finally {
      await Promise.allSettled([
        with_timeout(producer.close(), 30_000, 'producer close'),
        with_timeout(consumer!.close(), 30_000, 'consumer close'),
      ]);
    }
  });
}

/**
 * The four workloads of a peer system, run through its PeerRun (one per workload): subclasses
 * only say how to open a run against their server.
 */
export abstract class PeerWorkloads {
  protected abstract new_run(partitions: number): PeerRun;

  private readonly factory: RunFactory = (partitions) => this.new_run(partitions);

  publish(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult> {
    return run_publish(this.factory, params, progress);
  }

  publish_consume(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult> {
    return run_publish_consume(this.factory, params, progress);
  }

  latency(params: LatencyParams): Promise<LatencyResult> {
    return run_latency(this.factory, params);
  }

  drain(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult> {
    return run_drain(this.factory, params, progress);
  }
}
