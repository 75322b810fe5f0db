// The part the client-library systems (kafkajs.ts, sdk.ts, platformatic.ts) share: their
// publish, publish_single, publish_consume, latency, drain and drain_each workloads, written once
// over a producer and a group consumer that each client opens its own way.
import { performance } from 'node:perf_hooks';
import { pump_sends } from '../../pump_sends.ts';
import { client_cpu_seconds } from '../machine.ts';
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
 * How the group consumer hands messages to the harness: a handler per fetched batch (eachBatch),
 * or one per message (eachMessage), on_messages then seeing one value at a time.
 */
export type ConsumeMode = 'batch' | 'message';

/**
 * A group consumer's handler in the kafkajs shape (the SDK's and kafkajs's run() take it): one
 * per batch, or one per message; `add(count)` after on_messages saw them.
 */
export function consumer_handlers(
  mode: ConsumeMode,
  on_messages: OnMessages,
  add: (count: number) => void,
): {
  eachMessage?: (payload: { message: { value: Buffer | null } }) => Promise<void>;
  eachBatch?: (payload: { batch: { messages: Array<{ value: Buffer | null }> } }) => Promise<void>;
} {
  if (mode === 'message') {
    // One reused array, so the harness allocates nothing per message.
    const one: Array<Buffer | null> = [null];
    return {
      eachMessage: async ({ message }) => {
        one[0] = message.value;
        on_messages(one, performance.now());
        add(1);
      },
    };
  }
  return {
    eachBatch: async ({ batch }) => {
      const received_at = performance.now();
      on_messages(
        batch.messages.map((message) => message.value),
        received_at,
      );
      add(batch.messages.length);
    },
  };
}

/** publish_single: send() calls of one message each left unresolved at once, per producer. */
const SINGLE_SENDS_IN_FLIGHT = 2000;

/** Progress is reported at most once per this many messages (a bar update per message would cost more). */
const PROGRESS_EVERY = 1000;

/**
 * A client-library system (kafkajs, SDK, @platformatic/kafka): the same workloads for each —
 * sends of `send_messages` messages, `sends_in_flight` of them outstanding per producer (or one
 * message per send, SINGLE_SENDS_IN_FLIGHT outstanding), and one group consumer — with the
 * client-specific parts in `open_producer` and `open_consumer`.
 */
export abstract class ClientLibrarySystem extends SluiceSystem {
  protected readonly send_messages: number;
  protected readonly sends_in_flight: number;
  protected groups = 0;

  constructor(options: SluiceSystemsOptions) {
    super('fsync', options);
    this.send_messages = options.client_send_messages ?? 1000;
    this.sends_in_flight = options.client_sends_in_flight ?? 4;
  }

  /** How publish drives the producers, for the systems' `client` labels. */
  protected send_shape(): string {
    return `${this.sends_in_flight} sends of ${this.send_messages.toLocaleString('en-US')} in flight`;
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
    mode: ConsumeMode,
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

  /**
   * Publishes `params.messages` through `params.producers` producers, `per_send` messages per
   * send() call and `in_flight` calls outstanding per producer; the client's CPU is measured over
   * the timed part (not the connects and closes).
   */
  private async produce(
    topic: string,
    params: PublishParams,
    shape: { per_send: number; in_flight: number },
    progress?: (messages_done: number) => void,
  ): Promise<{ acknowledged: number; elapsed_ms: number; truncated: boolean; client_cpu_s: number }> {
    const producers = await Promise.all(
      Array.from({ length: params.producers }, (_, i) =>
        within(this.open_producer(i), GRACE_MS, `${this.id} producer connect`),
      ),
    );
    try {
      const value = Buffer.alloc(params.payload_bytes, 0x61);
      const full = Array.from({ length: shape.per_send }, () => value);
      let acknowledged = 0;
      let reported = 0;
      const cpu_before = client_cpu_seconds();
      const started = performance.now();
      const deadline = started + params.time_limit_ms;
      const shares = split(params.messages, params.producers);
      await within(
        Promise.all(
          producers.map((producer, i) =>
            pump_sends(
              shares[i]!,
              shape.per_send,
              shape.in_flight,
              deadline,
              (count) => producer.send(topic, count === full.length ? full : full.slice(0, count)),
              (count) => {
                acknowledged += count;
                if (acknowledged - reported >= PROGRESS_EVERY) {
                  reported = acknowledged;
                  progress?.(acknowledged);
                }
              },
            ),
          ),
        ),
        params.time_limit_ms + GRACE_MS,
        `${this.id} publish`,
      );
      const elapsed_ms = performance.now() - started;
      const client_cpu_s = client_cpu_seconds() - cpu_before;
      return { acknowledged, elapsed_ms, truncated: acknowledged < params.messages, client_cpu_s };
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
    const shape = { per_send: this.send_messages, in_flight: this.sends_in_flight };
    const produced = await this.produce(topic, params, shape, progress);
    return result(produced.acknowledged, params, produced.elapsed_ms, produced.truncated, produced.client_cpu_s);
  }

  /** One message per send(), SINGLE_SENDS_IN_FLIGHT of them unresolved per producer. */
  async publish_single(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult> {
    const topic = await this.new_topic(params.partitions);
    const shape = { per_send: 1, in_flight: SINGLE_SENDS_IN_FLIGHT };
    const produced = await this.produce(topic, params, shape, progress);
    return result(produced.acknowledged, params, produced.elapsed_ms, produced.truncated, produced.client_cpu_s);
  }

  async publish_consume(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult> {
    const topic = await this.new_topic(params.partitions);
    let expected = params.messages;
    const consumer = await this.open_consumer(
      topic,
      () => expected,
      () => progress(consumer.received()),
      params.time_limit_ms + 2 * GRACE_MS,
      'batch',
    );
    try {
      await consumer.joined;
      const cpu_before = client_cpu_seconds();
      const started = performance.now();
      const shape = { per_send: this.send_messages, in_flight: this.sends_in_flight };
      const produced = await this.produce(topic, params, shape);
      expected = produced.acknowledged;
      consumer.recheck();
      await consumer.done;
      const elapsed_ms = performance.now() - started;
      return result(consumer.received(), params, elapsed_ms, produced.truncated, client_cpu_seconds() - cpu_before);
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
      'batch',
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
    return this.drain_with(params, progress, 'batch');
  }

  /** As drain, the consumer handing over one message at a time (eachMessage). */
  async drain_each(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult> {
    return this.drain_with(params, progress, 'message');
  }

  /**
   * The backlog written by the lean client (untimed), then consumed by a fresh group in `mode`;
   * timed from the first assignment (a fresh group on an idle broker joins in one round) to the
   * last message, the client's CPU over the same span.
   */
  private async drain_with(
    params: PublishParams,
    progress: (messages_done: number) => void,
    mode: ConsumeMode,
  ): Promise<ThroughputResult> {
    const topic = await this.new_topic(params.partitions);
    const what = mode === 'batch' ? 'drain' : 'drain_each';
    const backlog = await this.backlog(topic, params, what);
    let seen = 0;
    let reported = 0;
    const on_messages: OnMessages = (values) => {
      seen += values.length;
      if (seen - reported >= PROGRESS_EVERY) {
        reported = seen;
        progress(seen);
      }
    };
    const consumer = await this.open_consumer(topic, () => backlog, on_messages, params.time_limit_ms + GRACE_MS, mode);
    try {
      await consumer.joined;
      const cpu_before = client_cpu_seconds();
      await consumer.done;
      const elapsed_ms = performance.now() - consumer.joined_at();
      return result(consumer.received(), params, elapsed_ms, false, client_cpu_seconds() - cpu_before);
    } finally {
      await consumer.close();
    }
  }
}
