// Sluice with kafkajs 2.2.4 as the client (the workloads are in client_library.ts; here, how
// kafkajs opens its producers and group consumer).
import { performance } from 'node:perf_hooks';
import { Kafka, logLevel, Partitioners, type Consumer, type Producer } from 'kafkajs';
import {
  ClientLibrarySystem,
  consumer_handlers,
  type ConsumeMode,
  type GroupConsumerHandle,
  type OnMessages,
} from './client_library.ts';
import { GRACE_MS, within } from './system.ts';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';

const KAFKAJS_VERSION = '2.2.4';

/**
 * kafkajs 2.2.4: producers with acks -1 and the default partitioner, sends of 1,000 messages with
 * 4 outstanding (publish_single: one message per send, 2,000 unresolved); one group consumer
 * counting messages with eachBatch (drain_each: eachMessage).
 */
export class KafkajsSystem extends ClientLibrarySystem {
  readonly id = 'sluice-kafkajs-fsync';
  readonly label = 'Sluice (kafkajs)';
  readonly client = `kafkajs ${KAFKAJS_VERSION}, ${this.send_shape()}`;

  private kafka(client_id: string): Kafka {
    return new Kafka({
      brokers: [this.running.bootstrap],
      clientId: client_id,
      logLevel: logLevel.NOTHING,
      retry: { retries: 3, initialRetryTime: 100 },
    });
  }

  protected async open_producer(index: number) {
    const producer: Producer = this.kafka(`bench-producer-${index}`).producer({
      allowAutoTopicCreation: false,
      createPartitioner: Partitioners.DefaultPartitioner,
    });
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
    const consumer: Consumer = this.kafka('bench-consumer').consumer({
      groupId: `bench-${this.id}-${++this.groups}`,
      maxWaitTimeInMs: 100,
      minBytes: 1,
      maxBytesPerPartition: 1024 * 1024,
      maxBytes: 8 * 1024 * 1024,
      sessionTimeout: 30_000,
      heartbeatInterval: 3_000,
    });
    const state = this.consumer_state(expected, time_limit_ms, 'kafkajs consumer');
    let joined_at = 0;
    const joined = new Promise<void>((resolve) =>
      consumer.on(consumer.events.GROUP_JOIN, () => {
        if (joined_at === 0) joined_at = performance.now();
        resolve();
      }),
    );
    consumer.on(consumer.events.CRASH, (event) =>
      state.fail(new Error(`kafkajs consumer crashed: ${String(event.payload.error)}`)),
    );
    await within(consumer.connect(), GRACE_MS, 'kafkajs consumer connect');
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run(consumer_handlers(mode, on_messages, state.add));
    return {
      joined: within(joined, GRACE_MS, 'kafkajs consumer group join'),
      done: state.done,
      received: state.received,
      joined_at: () => joined_at,
      recheck: state.recheck,
      close: () => within(consumer.disconnect(), GRACE_MS, 'kafkajs consumer disconnect').catch(() => undefined),
    };
  }
}
