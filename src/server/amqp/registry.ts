// What the AMQP listener knows across its connections: which are open, which connection owns each
// exclusive queue, and the consumers of each queue — for consumer counts, exclusive consumers,
// auto-delete queues (deleted when their last consumer goes) and basic.cancel to the consumers of
// a deleted queue, and x-expires (queue_expiry.ts).
import { randomBytes } from 'node:crypto';
import type { Core, QueueRecord } from '../../core/index.ts';
import { AmqpError, ReplyCode } from '../../protocol/amqp/constants.ts';
import type { ConnectionPort, RegistryPort } from './ports.ts';
import type { QueueConsumer } from './consumer.ts';
import { QueueExpiry } from './queue_expiry.ts';

interface QueueEntry {
  queue: QueueRecord;
  consumers: Map<QueueConsumer, ConnectionPort>;
  /** Whether it ever had a consumer (an auto-delete queue goes only after its last one). */
  consumed: boolean;
  /** x-single-active-consumer: the one consumer delivered to; the others wait their turn. */
  active: QueueConsumer | null;
}

export class ConnectionRegistry implements RegistryPort {
  readonly connections = new Set<ConnectionPort>();
  private readonly owners = new Map<string, ConnectionPort>();
  private readonly queues = new Map<string, QueueEntry>();
  private tag_counter = 0;
  private readonly tag_prefix = randomBytes(6).toString('base64url');

  readonly expiry: QueueExpiry;

  constructor(
    private readonly core: Core,
    vhosts: readonly string[],
  ) {
    this.expiry = new QueueExpiry(
      core,
      (queue) => this.consumer_count(queue),
      (vhost, queue) => this.delete_queue(core, vhost, queue),
      () => vhosts,
    );
  }

  /** The queue was declared, consumed from or read with basic.get: its x-expires clock restarts. */
  used(vhost: string, queue: QueueRecord): void {
    this.expiry.used(vhost, queue);
  }

  opened(connection: ConnectionPort): void {
    this.connections.add(connection);
  }

  /** The connection is gone: its exclusive queues go with it. */
  closed(connection: ConnectionPort): void {
    this.connections.delete(connection);
    for (const [key, owner] of [...this.owners]) {
      if (owner !== connection) continue;
      this.owners.delete(key);
      const [vhost, name] = key.split('\0') as [string, string];
      const queue = this.core.routing.queue(vhost, name);
      if (queue) void this.delete_queue(this.core, vhost, queue).catch(() => undefined);
    }
  }

  next_tag(): string {
    return `${this.tag_prefix}-${(++this.tag_counter).toString(36)}`;
  }

  own(connection: ConnectionPort, queue: QueueRecord): void {
    this.owners.set(key_of(connection.vhost, queue.name), connection);
  }

  owns(connection: ConnectionPort, queue: QueueRecord): boolean {
    return this.owners.get(key_of(connection.vhost, queue.name)) === connection;
  }

  consumer_count(queue: QueueRecord): number {
    return this.queues.get(queue.topic)?.consumers.size ?? 0;
  }

  add_consumer(connection: ConnectionPort, queue: QueueRecord, consumer: QueueConsumer): void {
    let entry = this.queues.get(queue.topic);
    if (!entry) this.queues.set(queue.topic, (entry = { queue, consumers: new Map(), consumed: false, active: null }));
    const others = [...entry.consumers.keys()];
    if (others.some((c) => c.exclusive) || (consumer.exclusive && others.length > 0))
      throw new AmqpError(
        ReplyCode.ACCESS_REFUSED,
        `ACCESS_REFUSED - queue '${queue.name}' in vhost '${connection.vhost}' in exclusive use`,
        60,
        20,
      );
    entry.consumers.set(consumer, connection);
    entry.consumed = true;
    if (queue.arguments['x-single-active-consumer'] === true) entry.active ??= consumer;
  }

  is_active(consumer: QueueConsumer): boolean {
    const entry = this.queues.get(consumer.queue.topic);
    return entry?.queue.arguments['x-single-active-consumer'] !== true || entry.active === consumer;
  }

  async remove_consumer(
    connection: ConnectionPort,
    consumer: QueueConsumer,
    { auto_delete = true }: { auto_delete?: boolean } = {},
  ): Promise<void> {
    const entry = this.queues.get(consumer.queue.topic);
    if (!entry?.consumers.delete(consumer)) return;
    if (entry.active === consumer) {
      // The next in the order they subscribed takes over, as RabbitMQ's single active consumer does.
      entry.active = entry.consumers.keys().next().value ?? null;
      entry.active?.activated();
    }
    if (entry.consumers.size > 0) return;
    this.queues.delete(consumer.queue.topic);
    this.used(connection.vhost, consumer.queue);
    const queue = this.core.routing.queue(connection.vhost, consumer.queue.name);
    if (auto_delete && queue?.auto_delete && entry.consumed)
      await this.delete_queue(this.core, connection.vhost, queue).catch(() => undefined);
  }

  /** Cancels the queue's consumers (basic.cancel to each), then deletes it. */
  async delete_queue(core: Core, vhost: string, queue: QueueRecord): Promise<void> {
    const entry = this.queues.get(queue.topic);
    this.queues.delete(queue.topic);
    this.owners.delete(key_of(vhost, queue.name));
    for (const [consumer, connection] of entry?.consumers ?? []) connection.cancel_consumer(consumer);
    if (core.routing.queue(vhost, queue.name)) await core.routing.delete_queue(vhost, queue.name);
  }
}

function key_of(vhost: string, name: string): string {
  return `${vhost}\0${name}`;
}
