// Sluice with the project's lean client (lean_client.ts: Produce v9, Fetch v12) under each of the
// three durability policies: every workload but queue, publish_single and drain_each (it has no
// per-message send or per-message handler to measure).
import { performance } from 'node:perf_hooks';
import { decode_record_batch, encode_record_batch } from '../../../src/protocol/record_batch.ts';
import { client_cpu_seconds } from '../machine.ts';
import type { LatencyParams, LatencyResult, PublishParams, ThroughputResult } from '../types.ts';
import { LATENCY_MAX_IN_FLIGHT, latency_samples, publish_at_fixed_rate } from './latency.ts';
import {
  check_produce_response,
  Connection,
  consume,
  produce_request,
  publish,
  type ProduceOptions,
} from './lean_client.ts';
import {
  DURABILITY,
  GRACE_MS,
  result,
  SluiceSystem,
  within,
  type DurabilityKey,
  type SluiceSystemsOptions,
} from './system.ts';

/**
 * Lean producer batching used by the benchmark: up to 64 KiB or 1,000 messages per batch, up to
 * 1 MiB of batches per request (one per partition), 16 requests in flight per connection. 16 KiB
 * batches (Kafka's Java default) cost the broker about twice the CPU per message; see the
 * self-check report.
 */
export const LEAN_PRODUCE_DEFAULTS: Required<ProduceOptions> = {
  batch_messages_max: 1000,
  batch_bytes_max: 64 * 1024,
  max_in_flight: 16,
  request_bytes_max: 1024 * 1024,
};

export class LeanSystem extends SluiceSystem {
  readonly id: string;
  readonly label: string;
  readonly client = 'Sluice lean client (bench/harness/sluice/lean_client.ts, Produce v9 / Fetch v12)';
  private readonly produce: Required<ProduceOptions>;

  constructor(durability: DurabilityKey, options: SluiceSystemsOptions) {
    super(durability, options);
    this.id = `sluice-lean-${durability}`;
    this.label = `Sluice (lean client, ${DURABILITY[durability].flag})`;
    this.produce = { ...LEAN_PRODUCE_DEFAULTS, ...options.lean };
  }

  async publish(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult> {
    const topic = await this.new_topic(params.partitions);
    const outcome = await publish({ ...this.run(topic, params), progress });
    return result(outcome.acknowledged, params, outcome.elapsed_ms, outcome.truncated);
  }

  async publish_consume(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult> {
    const topic = await this.new_topic(params.partitions);
    const broker = this.running;
    let cancel!: () => void;
    const cancelled = new Promise<void>((resolve) => (cancel = resolve));
    let polling!: () => void;
    const consumer_polling = new Promise<void>((resolve) => (polling = resolve));
    const consumer_run = {
      host: broker.host,
      port: broker.port,
      topic,
      partitions: params.partitions,
      expected: params.messages,
      time_limit_ms: params.time_limit_ms + GRACE_MS,
      progress,
      cancel: cancelled,
      on_polling: polling,
    };
    const consuming = consume(consumer_run);
    consuming.catch(() => undefined);
    await within(Promise.race([consumer_polling, consuming]), GRACE_MS, 'consumer start');
    const started = performance.now();
    try {
      const produced = await publish(this.run(topic, params));
      // Under the time limit fewer may be published: the consumer then waits for those only.
      consumer_run.expected = produced.acknowledged;
      const consumed = await consuming;
      if (consumed.received < produced.acknowledged)
        throw new Error(`consumed ${consumed.received} of ${produced.acknowledged} acknowledged messages`);
      return result(consumed.received, params, performance.now() - started, produced.truncated);
    } finally {
      cancel();
      await consuming.catch(() => undefined);
    }
  }

  async latency(params: LatencyParams): Promise<LatencyResult> {
    const topic = await this.new_topic(1);
    const broker = this.running;
    const total = Math.max(1, Math.round((params.rate_per_s * params.duration_ms) / 1000));
    const samples = latency_samples(total);
    let cancel!: () => void;
    const cancelled = new Promise<void>((resolve) => (cancel = resolve));
    let polling!: () => void;
    const consumer_polling = new Promise<void>((resolve) => (polling = resolve));
    const consumer_run = {
      host: broker.host,
      port: broker.port,
      topic,
      partitions: 1,
      expected: total,
      time_limit_ms: params.duration_ms + GRACE_MS,
      cancel: cancelled,
      on_polling: polling,
      on_batch: (frame: Buffer, position: number, received_at: number) => {
        for (const record of decode_record_batch(frame, position))
          samples.add(received_at - record.value!.readDoubleLE(0));
      },
    };
    const consuming = consume(consumer_run);
    consuming.catch(() => undefined);
    const producer = await Connection.connect(broker.host, broker.port, { max_in_flight: LATENCY_MAX_IN_FLIGHT });
    try {
      await within(Promise.race([consumer_polling, consuming]), GRACE_MS, 'consumer start');
      const sent = await publish_at_fixed_rate(params, LATENCY_MAX_IN_FLIGHT, async (values) => {
        const timestamp_ms = Date.now();
        const batch = build_batch_of(values, timestamp_ms);
        check_produce_response(await producer.request(produce_request(topic, [{ partition: 0, batch }])), topic, 1);
      });
      consumer_run.expected = sent;
      await consuming;
      return samples.result(sent);
    } finally {
      producer.close();
      cancel();
      await consuming.catch(() => undefined);
    }
  }

  async drain(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult> {
    const topic = await this.new_topic(params.partitions);
    const produced = await publish(this.run(topic, params));
    if (produced.truncated)
      throw new Error(
        `drain: only ${produced.acknowledged} of ${params.messages} messages published ` +
          `within ${params.time_limit_ms} ms`,
      );
    // The backlog was written in this process: the client's CPU counts from here.
    const cpu_before = client_cpu_seconds();
    const consumed = await consume({
      host: this.running.host,
      port: this.running.port,
      topic,
      partitions: params.partitions,
      expected: produced.acknowledged,
      time_limit_ms: params.time_limit_ms,
      progress,
    });
    const client_cpu_s = client_cpu_seconds() - cpu_before;
    return result(consumed.received, params, consumed.elapsed_ms, consumed.truncated, client_cpu_s);
  }

  private run(topic: string, params: PublishParams) {
    return {
      host: this.running.host,
      port: this.running.port,
      topic,
      partitions: params.partitions,
      producers: params.producers,
      messages: params.messages,
      payload_bytes: params.payload_bytes,
      time_limit_ms: params.time_limit_ms,
      options: this.produce,
    };
  }
}

/** One batch of distinct values (the latency workload's small groups). */
function build_batch_of(values: Buffer[], timestamp_ms: number): Buffer {
  return encode_record_batch(values.map((value) => ({ key: null, value, timestamp_ms })));
}
