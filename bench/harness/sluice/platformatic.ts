// Sluice with @platformatic/kafka 2.x as the client (the workloads are in client_library.ts;
// here, how it opens its producers and group consumer, and the Node 20 polyfill it needs).
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Consumer as PlatformaticConsumer, Producer as PlatformaticProducer, ProduceAcks } from '@platformatic/kafka';
import { ClientLibrarySystem, type ConsumeMode, type GroupConsumerHandle, type OnMessages } from './client_library.ts';
import { GRACE_MS, within } from './system.ts';

// @platformatic/kafka 2.x targets Node 22 and calls Promise.withResolvers; this project runs on
// Node 20, so provide it (as test/kafka/platformatic.test.ts does) before the client is used.
const promise_ctor = Promise as unknown as { withResolvers?: () => unknown };
if (typeof promise_ctor.withResolvers !== 'function') {
  promise_ctor.withResolvers = () => {
    let resolve!: (value: unknown) => void;
    let reject!: (reason?: unknown) => void;
    const promise = new Promise((ok, fail) => {
      resolve = ok;
      reject = fail;
    });
    return { promise, resolve, reject };
  };
}

function package_version(name: string): string {
  try {
    const file = path.resolve(import.meta.dirname, '..', '..', '..', 'node_modules', name, 'package.json');
    return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version?: string }).version ?? '?';
  } catch {
    return '?';
  }
}
/**
 * @platformatic/kafka 2.x. Producer: acks=all (-1), otherwise its defaults (not idempotent), sends
 * of 1,000 messages with 4 outstanding, as kafkajs (publish_single: one message per send, 2,000
 * unresolved). Consumer: a group member reading its message stream ('data' per message) from the
 * earliest offset, maxWaitTime 100 ms, autocommit on. The stream is its only way to consume, and
 * it is per message, so drain and drain_each read it the same way.
 */
export class PlatformaticSystem extends ClientLibrarySystem {
  readonly id = 'sluice-platformatic-fsync';
  readonly label = 'Sluice (@platformatic/kafka)';
  readonly client = `@platformatic/kafka ${package_version('@platformatic/kafka')}, ${this.send_shape()}`;

  private base(client_id: string) {
    return {
      clientId: client_id,
      bootstrapBrokers: [this.running.bootstrap],
      timeout: 30_000,
      connectTimeout: 10_000,
      retries: 3,
      retryDelay: 100,
    };
  }

  protected async open_producer(index: number) {
    const producer = new PlatformaticProducer({
      ...this.base(`bench-producer-${index}`),
      acks: ProduceAcks.ALL,
      autocreateTopics: false,
    });
    return {
      send: (topic: string, values: Buffer[]) => producer.send({ messages: values.map((value) => ({ topic, value })) }),
      close: () => producer.close(),
    };
  }

  protected async open_consumer(
    topic: string,
    expected: () => number,
    on_messages: OnMessages,
    time_limit_ms: number,
    _mode: ConsumeMode,
  ): Promise<GroupConsumerHandle> {
    const consumer = new PlatformaticConsumer({
      ...this.base('bench-consumer'),
      groupId: `bench-${this.id}-${++this.groups}`,
      sessionTimeout: 30_000,
      rebalanceTimeout: 30_000,
      heartbeatInterval: 3_000,
      maxWaitTime: 100,
      maxBytesPerPartition: 1024 * 1024,
      maxBytes: 8 * 1024 * 1024,
    });
    const state = this.consumer_state(expected, time_limit_ms, '@platformatic/kafka consumer');
    let joined_at = 0;
    let stream: Awaited<ReturnType<typeof consumer.consume>> | null = null;
    const close = async () => {
      if (stream) await within(stream.close(), GRACE_MS, '@platformatic/kafka stream close').catch(() => undefined);
      await within(consumer.close(true), GRACE_MS, '@platformatic/kafka consumer close').catch(() => undefined);
    };
    const joined = (async () => {
      // consume() resolves once the member joined the group and has its assignment.
      stream = await within(
        consumer.consume({ topics: [topic], mode: 'committed', fallbackMode: 'earliest', autocommit: true }),
        GRACE_MS,
        '@platformatic/kafka consumer group join',
      );
      joined_at = performance.now();
      // One reused array: the harness allocates nothing per message.
      const one: Array<Buffer | null> = [null];
      stream.on('data', (message) => {
        one[0] = message.value;
        on_messages(one, performance.now());
        state.add(1);
      });
      stream.on('error', (error: Error) =>
        state.fail(new Error(`@platformatic/kafka consumer stream: ${error.message}`)),
      );
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
}
