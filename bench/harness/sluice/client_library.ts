// The part the client-library systems (kafkajs.ts, sdk.ts, platformatic.ts) share: their
// publish, publish_consume, latency and drain workloads, written once over a producer and a group
// consumer that each client opens its own way.
import { performance } from 'node:perf_hooks';
import { pump_sends } from '../../pump_sends.ts';
import type { LatencyParams, LatencyResult, PublishParams, ThroughputResult } from '../types.ts';
import { LATENCY_MAX_IN_FLIGHT, latency_samples, publish_at_fixed_rate } from './latency.ts';
import { publish, split } from './lean_client.ts';
import { GRACE_MS, result, SluiceSystem, within, type SluiceSystemsOptions } from './system.ts';

/** A running group consumer as the client-library systems use it. */
export interface GroupConsumerHandle {
  /** Resolves once the consumer has its first assignment. */
  joined: Promise<void>;
  /** Resolves once `expected()` messages arrived (bounded by the time limit). */
  done: Promise<void>;
  received(): number;
  joined_at(): number;
  recheck(): void;
  close(): Promise<void>;
}

export type OnMessages = (values: Array<Buffer | null>, received_at: number) => void;

/**
 * A client-library system (kafkajs, SDK, @platformatic/kafka): the same workloads for each —
 * sends of `send_messages` messages, `sends_in_flight` of them outstanding per producer, and one
 * group consumer — with the client-specific parts in `open_producer` and `open_consumer`.
 */
export abstract class ClientLibrarySystem extends SluiceSystem {
  protected readonly send_messages: number;
  protected readonly sends_in_flight: number;
  protected groups = 0;

  constructor(options: SluiceSystemsOptions) {
    super('fsync', options);
    this.send_messages = options.client_send_messages ?? 1000;
    this.sends_in_flight = options.client_sends_in_flight ?? 8;
  }

  /** A connected producer: `send(topic, values)` resolves once all are acknowledged (acks=all). */
  protected abstract open_producer(
    index: number,
  ): Promise<{ send: (topic: string, values: Buffer[]) => Promise<unknown>; close: () => Promise<void> }>;
  protected abstract open_consumer(
    topic: string,
    expected: () => number,
    on_messages: OnMessages,
    time_limit_ms: number,
  ): Promise<GroupConsumerHandle>;

  protected consumer_state(expected: () => number, time_limit_ms: number, what: string) {
    let received = 0;
    let finish!: () => void;
    let fail!: (error: Error) => void;
    const done = new Promise<void>((resolve, reject) => {
      finish = resolve;
      fail = reject;
    });
    done.catch(() => undefined);
    return {
      done: within(done, time_limit_ms, what),
      fail,
      add(count: number) {
        received += count;
        if (received >= expected()) finish();
      },
      received: () => received,
      recheck: () => {
        if (received >= expected()) finish();
      },
    };
  }

  private async produce(
    topic: string,
    params: PublishParams,
    progress?: (messages_done: number) => void,
  ): Promise<{ acknowledged: number; elapsed_ms: number; truncated: boolean }> {
    const producers = await Promise.all(
      Array.from({ length: params.producers }, (_, i) =>
        within(this.open_producer(i), GRACE_MS, `${this.id} producer connect`),
      ),
    );
    try {
      const value = Buffer.alloc(params.payload_bytes, 0x61);
      const full = Array.from({ length: this.send_messages }, () => value);
      let acknowledged = 0;
      const started = performance.now();
      const deadline = started + params.time_limit_ms;
      const shares = split(params.messages, params.producers);
      await within(
        Promise.all(
          producers.map((producer, i) =>
            pump_sends(
              shares[i]!,
              this.send_messages,
              this.sends_in_flight,
              deadline,
              (count) => producer.send(topic, count === full.length ? full : full.slice(0, count)),
              (count) => {
                acknowledged += count;
                progress?.(acknowledged);
              },
            ),
          ),
        ),
        params.time_limit_ms + GRACE_MS,
        `${this.id} publish`,
      );
      return { acknowledged, elapsed_ms: performance.now() - started, truncated: acknowledged < params.messages };
    } finally {
      await Promise.all(
        producers.map((producer) =>
          within(producer.close(), GRACE_MS, `${this.id} producer close`).catch(() => undefined),
        ),
      );
    }
  }

  async publish(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult> {
    const topic = await this.new_topic(params.partitions);
    const produced = await this.produce(topic, params, progress);
    return result(produced.acknowledged, params, produced.elapsed_ms, produced.truncated);
  }

  async publish_consume(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult> {
    const topic = await this.new_topic(params.partitions);
    let expected = params.messages;
    const consumer = await this.open_consumer(
      topic,
      () => expected,
      () => progress(consumer.received()),
      params.time_limit_ms + 2 * GRACE_MS,
    );
    try {
      await consumer.joined;
      const started = performance.now();
      const produced = await this.produce(topic, params);
      expected = produced.acknowledged;
      consumer.recheck();
      await consumer.done;
      return result(consumer.received(), params, performance.now() - started, produced.truncated);
    } finally {
      await consumer.close();
    }
  }

  async latency(params: LatencyParams): Promise<LatencyResult> {
    const topic = await this.new_topic(1);
    const total = Math.max(1, Math.round((params.rate_per_s * params.duration_ms) / 1000));
    const samples = latency_samples(total);
    let expected = total;
    const consumer = await this.open_consumer(
      topic,
      () => expected,
      (values, received_at) => {
        for (const value of values) samples.add(received_at - value!.readDoubleLE(0));
      },
      params.duration_ms + 2 * GRACE_MS,
    );
    try {
      await consumer.joined;
      const producer = await within(this.open_producer(0), GRACE_MS, `${this.id} producer connect`);
      try {
        const sent = await publish_at_fixed_rate(params, LATENCY_MAX_IN_FLIGHT, (values) =>
          producer.send(topic, values).then(() => undefined),
        );
        expected = sent;
        consumer.recheck();
        await consumer.done;
        return samples.result(sent);
      } finally {
        await within(producer.close(), GRACE_MS, `${this.id} producer close`).catch(() => undefined);
      }
    } finally {
      await consumer.close();
    }
  }

  /**
   * Writes `params.messages` to `topic` with the lean client (untimed) and resolves with the count;
   * fails if the time limit cut it short. The backlog is written by the lean client for every
   * client library, so each consumer reads the same log (no client's own headers or batch sizes)
   * and only the consumer is timed.
   */
  protected async backlog(topic: string, params: PublishParams, what: string): Promise<number> {
    const produced = await publish({
      host: this.running.host,
      port: this.running.port,
      topic,
      partitions: params.partitions,
      producers: params.producers,
      messages: params.messages,
      payload_bytes: params.payload_bytes,
      time_limit_ms: params.time_limit_ms,
    });
    if (produced.truncated)
      throw new Error(
        `${what}: only ${produced.acknowledged} of ${params.messages} messages published ` +
          `within ${params.time_limit_ms} ms`,
      );
    return produced.acknowledged;
  }

  async drain(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult> {
    const topic = await this.new_topic(params.partitions);
    const backlog = await this.backlog(topic, params, 'drain');
    // Timed from the first assignment (a fresh group on an idle broker joins in one round).
    const consumer = await this.open_consumer(
      topic,
      () => backlog,
      () => progress(consumer.received()),
      params.time_limit_ms + GRACE_MS,
    );
    try {
      await consumer.joined;
      await consumer.done;
      return result(consumer.received(), params, performance.now() - consumer.joined_at(), false);
    } finally {
      await consumer.close();
    }
  }
}
