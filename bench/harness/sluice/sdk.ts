// Sluice with the project's SDK (the package's compiled build) as the client: the client-library workloads
// (client_library.ts) through its producer and group consumer, and the queue workload through its
// share-group queue consumer.
import { performance } from 'node:perf_hooks';
// The SDK as its users get it: the package's compiled output (npm run bench builds it first).
import { Sluice, type QueueMessagePayload } from 'sluice';
import { client_cpu_seconds } from '../machine.ts';
import type { QueueParams, ThroughputResult } from '../types.ts';
import {
  ClientLibrarySystem,
  consumer_handlers,
  type ConsumeMode,
  type GroupConsumerHandle,
  type OnMessages,
} from './client_library.ts';
import { GRACE_MS, result, within } from './system.ts';

/** Queue workload, SDK queue consumer: records acquired per ShareFetch, and handlers running at once per consumer. */
const QUEUE_MAX_RECORDS = 500;
const QUEUE_CONCURRENCY = 16;

/**
 * The project's SDK (compiled, from the package). Producer: its defaults (idempotent, acks -1, lingerMs 0,
 * batchBytes 1,000,000, maxInFlightRequests 5, a message-id header on every message), driven like
 * kafkajs: sends of 1,000 messages, 4 outstanding (publish_single: one message per send, 2,000
 * unresolved). Consumer: a group member with eachBatch (drain_each: eachMessage) and its defaults
 * except maxWaitTimeInMs 100 (as the kafkajs system). Queue: share-group members made with
 * queueConsumer (maxRecords 500), each running eachMessage with concurrency 16.
 */
export class SdkSystem extends ClientLibrarySystem {
  readonly id = 'sluice-sdk-fsync';
  readonly label = 'Sluice (SDK)';
  readonly client = `Sluice SDK (compiled package), producer defaults, ${this.send_shape()}`;

  private sluice(client_id: string): Sluice {
    return new Sluice({
      brokers: [this.running.bootstrap],
      clientId: client_id,
      retry: { retries: 3, initialRetryTime: 100 },
    });
  }

  protected async open_producer(index: number) {
    const producer = this.sluice(`bench-producer-${index}`).producer({ allowAutoTopicCreation: false });
    await producer.connect();
    return {
      send: (topic: string, values: Buffer[]) =>
        producer.send({ topic, acks: -1, messages: values.map((value) => ({ value })) }),
      close: () => producer.disconnect(),
    };
  }

  protected async open_consumer(
    topic: string,
    expected: () => number,
    on_messages: OnMessages,
    time_limit_ms: number,
    mode: ConsumeMode,
  ): Promise<GroupConsumerHandle> {
    const consumer = this.sluice('bench-consumer').consumer({
      groupId: `bench-${this.id}-${++this.groups}`,
      maxWaitTimeInMs: 100,
      allowAutoTopicCreation: false,
    });
    const state = this.consumer_state(expected, time_limit_ms, 'SDK consumer');
    let joined_at = 0;
    consumer.on<{ error?: unknown; restart?: boolean }>(consumer.events.CRASH, ({ payload }) => {
      if (payload.restart === false) state.fail(new Error(`SDK consumer crashed: ${String(payload.error)}`));
    });
    const close = () => within(consumer.disconnect(), GRACE_MS, 'SDK consumer disconnect').catch(() => undefined);
    const joined = (async () => {
      await within(consumer.connect(), GRACE_MS, 'SDK consumer connect');
      await consumer.subscribe({ topic, fromBeginning: true });
      // run() resolves once the first assignment and its starting positions are in place.
      await within(consumer.run(consumer_handlers(mode, on_messages, state.add)), GRACE_MS, 'SDK consumer group join');
      joined_at = performance.now();
    })();
    joined.catch(() => undefined);
    return {
      joined,
      done: state.done,
      received: state.received,
      joined_at: () => joined_at,
      recheck: state.recheck,
      close,
    };
  }

  /**
   * Queue delivery with per-message acknowledgement: the backlog is written by the lean client (as
   * for drain), then `params.consumers` members of a fresh share group each handle messages one by
   * one; a handler that resolves accepts its message (the SDK sends the acknowledgement with its
   * next ShareFetch). Timed from the first handler call to the handler call that makes the count
   * reach the backlog, the client's CPU over the same span; bounded by the time limit (then the
   * result is truncated).
   */
  async queue(params: QueueParams, progress: (messages_done: number) => void): Promise<ThroughputResult> {
    const topic = await this.new_topic(params.partitions);
    const expected = await this.backlog(topic, params, 'queue');
    const group_id = `bench-${this.id}-queue-${++this.groups}`;
    const tally = new QueueTally(params.partitions, expected, progress);
    const consumers = Array.from({ length: params.consumers }, (_, i) =>
      this.sluice(`bench-queue-${i}`).queueConsumer({ groupId: group_id, maxRecords: QUEUE_MAX_RECORDS }),
    );
    try {
      await within(
        Promise.all(
          consumers.map(async (consumer) => {
            await consumer.subscribe({ topics: [topic] });
            // run() resolves once the member has its first assignment; fetching goes on after.
            await consumer.run({ concurrency: QUEUE_CONCURRENCY, eachMessage: tally.each_message });
          }),
        ),
        GRACE_MS,
        'SDK queue consumers join',
      );
      await tally.wait(performance.now(), params.time_limit_ms);
      const end = tally.finished !== 0 ? tally.finished : performance.now();
      const cpu_end = tally.finished !== 0 ? tally.cpu_finished : client_cpu_seconds();
      const count = tally.handled;
      progress(count);
      if (tally.started === 0)
        throw new Error(
          `queue: no message delivered to ${params.consumers} SDK queue consumers within ${GRACE_MS} ms of joining`,
        );
      if (tally.duplicates > 0)
        process.stderr.write(
          `${this.id} queue: ${tally.duplicates} redeliveries of already handled messages (not counted)\n`,
        );
      return result(count, params, end - tally.started, count < expected, cpu_end - tally.cpu_started);
    } finally {
      await Promise.all(
        consumers.map((consumer) =>
          within(consumer.disconnect(), GRACE_MS, 'SDK queue consumer disconnect').catch(() => undefined),
        ),
      );
    }
  }
}

/**
 * The queue workload's count: each message (partition and offset) once, the time of the first
 * handler call and of the one that makes the count reach `expected`.
 */
class QueueTally {
  handled = 0;
  duplicates = 0;
  started = 0;
  finished = 0;
  /** The client's CPU seconds (client_cpu_seconds) at `started` and at `finished`. */
  cpu_started = 0;
  cpu_finished = 0;
  private finish!: () => void;
  private readonly all_handled = new Promise<void>((resolve) => (this.finish = resolve));
  /**
   * Distinct offsets per partition (a fresh topic: offsets below the backlog size), so a
   * redelivery is not counted twice.
   */
  private readonly seen: Uint8Array[];

  constructor(
    partitions: number,
    private readonly expected: number,
    private readonly progress: (messages_done: number) => void,
  ) {
    this.seen = Array.from({ length: partitions }, () => new Uint8Array(expected));
  }

  /** The queue consumers' handler: accepts every message (by resolving). */
  readonly each_message = async ({ partition, message }: QueueMessagePayload): Promise<void> => {
    if (this.started === 0) {
      this.started = performance.now();
      this.cpu_started = client_cpu_seconds();
    }
    const offset = Number(message.offset);
    const marks = this.seen[partition];
    if (!marks || offset < 0 || offset >= marks.length || marks[offset] === 1) {
      this.duplicates++;
      return;
    }
    marks[offset] = 1;
    this.handled++;
    if ((this.handled & 1023) === 0) this.progress(this.handled);
    if (this.handled === this.expected) {
      this.finished = performance.now();
      this.cpu_finished = client_cpu_seconds();
      this.finish();
    }
  };

  /**
   * Waits until every message was handled, bounded: the first message within GRACE_MS of
   * `joined_at`, then all of them within `time_limit_ms` of the first; each round waits at most
   * 50 ms.
   */
  async wait(joined_at: number, time_limit_ms: number): Promise<void> {
    while (this.handled < this.expected) {
      const now = performance.now();
      const deadline = this.started === 0 ? joined_at + GRACE_MS : this.started + time_limit_ms;
      if (now >= deadline) break;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        this.all_handled,
        new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.min(deadline - now, 50)))),
      ]);
      clearTimeout(timer);
    }
  }
}
