// One AMQP channel: its methods run one after another in arrival order (a declare answered before
// the publish behind it is routed), content frames are gathered into messages for the publisher,
// and deliveries are numbered with delivery tags that ack, nack, reject and recover settle. A
// channel exception sends channel.close and drops everything but close-ok until it comes.
import { amqp_allowed, require_queue_read, type AmqpActor } from './amqp_authorize.ts';
import { AckType, BrokerError, RoutingError, type AckTypeCode, type FetchedPartition } from '../../core/index.ts';
import { AmqpError, ReplyCode } from '../../protocol/amqp/constants.ts';
import type { DecodedMethod, MethodArgs, MethodInput, MethodName } from '../../protocol/amqp/methods.ts';
import { decode_content_header, type BasicProperties } from '../../protocol/amqp/properties.ts';
import { decompress_record_batch } from '../../protocol/compression.ts';
import { decode_record_batch } from '../../protocol/record_batch.ts';
import type { ChannelPort, ConnectionPort } from './ports.ts';
import { Publisher } from './publisher.ts';
import { QueueConsumer, type ConsumerHost } from './consumer.ts';
import { ShareMember } from './share_member.ts';
import { message_of, type PublishedMessage } from './record_mapping.ts';
import { Declarations } from './declarations.ts';
import { broker_failure, routing_failure } from './channel_errors.ts';

/** Until the content header comes (never written to). */
const NO_PROPERTIES = Buffer.alloc(0);

/** Frames a channel holds while an earlier method is still running; reading pauses beyond this. */
const QUEUED_FRAMES_MAX = 10_000;

interface Delivery {
  member: ShareMember;
  consumer: QueueConsumer | null;
  topic: string;
  partition: number;
  offset: number;
}

interface Incoming {
  args: MethodArgs<'basic.publish'>;
  properties: BasicProperties | null;
  properties_raw: Buffer;
  body_size: number;
  chunks: Buffer[];
  received: number;
}

type Task = () => void | Promise<void>;

/** What a transaction holds until tx.commit: its publishes, and the deliveries it settled. */
interface Transaction {
  publishes: Array<{ message: PublishedMessage; mandatory: boolean }>;
  settled: Array<{ tag: number; delivery: Delivery; type: AckTypeCode }>;
}

/** Publishes one transaction may hold (its body bytes are bounded by message_bytes_max each). */
const TX_PUBLISHES_MAX = 10_000;

export class AmqpChannel implements ConsumerHost, ChannelPort {
  /** Why reading is held for this channel's queue of methods. */
  private get hold_key(): string {
    return `channel ${this.id}`;
  }

  private closing = false;
  private incoming: Incoming | null = null;
  private readonly publisher: Publisher;
  readonly consumers = new Map<string, QueueConsumer>();
  private readonly getters = new Map<string, ShareMember>();
  private readonly deliveries = new Map<number, Delivery>();
  private next_tag = 1;
  private prefetch_count = 0;
  private global_prefetch = 0;
  private readonly tasks: Task[] = [];
  private running = false;
  private readonly declarations: Declarations;
  private tx: Transaction | null = null;

  constructor(
    readonly connection: ConnectionPort,
    readonly id: number,
  ) {
    this.publisher = new Publisher({
      core: connection.core,
      vhost: connection.vhost,
      may_write: (topic) => amqp_allowed(this.actor, 'write', 'topic', topic),
      send_return: (m, code, text) => this.send_return(m, code, text),
      send_confirm: (outcome, tag, multiple) =>
        this.send(outcome === 'ack' ? 'basic.ack' : 'basic.nack', { delivery_tag: tag, multiple }),
      logger_warn: (fields, text) => this.warn(fields, text),
    });
    this.declarations = new Declarations(this);
  }

  get core() {
    return this.connection.core;
  }

  get consumer_count(): number {
    return this.consumers.size;
  }

  get client_host(): string {
    return this.connection.remote_address ?? '';
  }

  private get actor(): AmqpActor {
    return { core: this.core, username: this.connection.username, client_host: this.client_host };
  }

  send<N extends MethodName>(name: N, args: MethodInput<N>): void {
    if (!this.closing || name === 'channel.close' || name === 'channel.close-ok')
      this.connection.send_method(this.id, name, args);
  }

  warn(fields: Record<string, unknown>, text: string): void {
    this.connection.logger.warn({ connection: this.connection.id, channel: this.id, ...fields }, text);
  }

  // ------------------------------------------------------------------ frames, in order

  on_method(method: DecodedMethod): void {
    if (this.closing) {
      if (method.name === 'channel.close-ok') this.closed();
      else if (method.name === 'channel.close') this.send('channel.close-ok', {});
      return;
    }
    if (this.incoming) {
      throw new AmqpError(
        ReplyCode.UNEXPECTED_FRAME,
        `${method.name} in the middle of a message's content`,
        method.class_id,
        method.method_id,
      );
    }
    this.run(() => this.dispatch(method), method);
  }

  on_header(payload: Buffer): void {
    if (this.closing) return;
    const incoming = this.incoming;
    if (!incoming || incoming.properties)
      throw new AmqpError(ReplyCode.UNEXPECTED_FRAME, 'content header without basic.publish');
    const header = decode_content_header(payload);
    if (header.class_id !== 60)
      throw new AmqpError(ReplyCode.UNEXPECTED_FRAME, `content header of class ${header.class_id}`);
    incoming.properties = header.properties;
    incoming.properties_raw = header.properties_raw;
    incoming.body_size = header.body_size;
    const max = this.connection.limits.message_bytes_max;
    if (header.body_size > max) {
      this.incoming = null;
      this.fail(
        new AmqpError(
          ReplyCode.PRECONDITION_FAILED,
          `PRECONDITION_FAILED - message size ${header.body_size} is larger than max size ${max}`,
          60,
          40,
        ),
      );
      return;
    }
    if (header.body_size === 0) this.complete(incoming);
  }

  on_body(payload: Buffer): void {
    if (this.closing) return;
    const incoming = this.incoming;
    if (!incoming?.properties) throw new AmqpError(ReplyCode.UNEXPECTED_FRAME, 'content body without a content header');
    incoming.chunks.push(payload);
    incoming.received += payload.length;
    if (incoming.received > incoming.body_size)
      throw new AmqpError(
        ReplyCode.FRAME_ERROR,
        `content body of ${incoming.received} bytes, header said ${incoming.body_size}`,
      );
    if (incoming.received === incoming.body_size) this.complete(incoming);
  }

  private complete(incoming: Incoming): void {
    this.incoming = null;
    const body = incoming.chunks.length === 1 ? incoming.chunks[0]! : Buffer.concat(incoming.chunks, incoming.received);
    const message: PublishedMessage = {
      exchange: incoming.args.exchange,
      routing_key: incoming.args.routing_key,
      properties: incoming.properties!,
      properties_raw: incoming.properties_raw,
      body,
    };
    this.run(() => this.publish(message, incoming.args.mandatory), null);
  }

  private publish(message: PublishedMessage, mandatory: boolean): void {
    const user_id = message.properties.user_id;
    const login = this.connection.username;
    if (user_id !== undefined && user_id !== login)
      throw new AmqpError(
        ReplyCode.PRECONDITION_FAILED,
        `PRECONDITION_FAILED - user_id property set to '${user_id}' but authenticated user was '${login}'`,
        60,
        40,
      );
    if (!this.tx) return this.publisher.publish(message, mandatory);
    this.publisher.exchange_for(message.exchange);
    if (this.tx.publishes.length >= TX_PUBLISHES_MAX)
      throw new AmqpError(
        ReplyCode.PRECONDITION_FAILED,
        `PRECONDITION_FAILED - over ${TX_PUBLISHES_MAX} publishes in one transaction`,
        60,
        40,
      );
    this.tx.publishes.push({ message, mandatory });
  }

  /** Runs tasks one at a time; a synchronous one runs at once when nothing is ahead of it. */
  private run(task: Task, method: DecodedMethod | null): void {
    const guarded: Task = () => {
      if (this.closing) return;
      try {
        const result = task();
        if (result) return result.catch((error: unknown) => this.fail(error, method));
      } catch (error) {
        this.fail(error, method);
      }
    };
    if (this.running || this.tasks.length > 0) {
      this.tasks.push(guarded);
      if (this.tasks.length > QUEUED_FRAMES_MAX) this.connection.hold_reading(this.hold_key, true);
      return;
    }
    const result = guarded();
    if (result) this.drain_tasks(result);
  }

  private drain_tasks(first: Promise<void>): void {
    this.running = true;
    void (async () => {
      await first;
      for (let task = this.tasks.shift(); task; task = this.tasks.shift()) {
        if (this.tasks.length === QUEUED_FRAMES_MAX / 2) this.connection.hold_reading(this.hold_key, false);
        await task();
      }
      this.running = false;
      this.connection.hold_reading(this.hold_key, false);
    })();
  }

  private fail(error: unknown, method: DecodedMethod | null = null): void {
    const class_id = method?.class_id ?? 0;
    const method_id = method?.method_id ?? 0;
    if (error instanceof AmqpError) return this.connection.channel_failed(this, error);
    if (error instanceof RoutingError)
      return this.connection.channel_failed(this, routing_failure(error, class_id, method_id));
    if (error instanceof BrokerError)
      return this.connection.channel_failed(this, broker_failure(this.core, error, class_id, method_id));
    this.connection.fail(error, class_id, method_id);
  }

  // ------------------------------------------------------------------ methods

  private dispatch(method: DecodedMethod): void | Promise<void> {
    switch (method.name) {
      case 'channel.open':
        return this.send('channel.open-ok', {});
      case 'channel.close':
        this.send('channel.close-ok', {});
        return this.closed();
      case 'channel.flow':
        return this.send('channel.flow-ok', { active: method.args.active });
      case 'basic.publish':
        this.connection.published();
        this.incoming = {
          args: method.args,
          properties: null,
          properties_raw: NO_PROPERTIES,
          body_size: 0,
          chunks: [],
          received: 0,
        };
        return;
      case 'basic.qos':
        if (method.args.global) this.global_prefetch = method.args.prefetch_count;
        else this.prefetch_count = method.args.prefetch_count;
        return this.send('basic.qos-ok', {});
      case 'basic.consume':
        return this.consume(method.args);
      case 'basic.cancel':
        return this.cancel(method.args.consumer_tag, method.args.nowait);
      case 'basic.get':
        return this.get(method.args);
      case 'basic.ack':
        return this.settle(method.args.delivery_tag, method.args.multiple, AckType.ACCEPT);
      case 'basic.nack':
        return this.settle(
          method.args.delivery_tag,
          method.args.multiple,
          method.args.requeue ? AckType.RELEASE : AckType.REJECT,
        );
      case 'basic.reject':
        return this.settle(method.args.delivery_tag, false, method.args.requeue ? AckType.RELEASE : AckType.REJECT);
      case 'basic.recover':
      case 'basic.recover-async':
        this.settle_all(AckType.RELEASE);
        if (method.name === 'basic.recover') this.send('basic.recover-ok', {});
        return;
      case 'tx.select':
        if (this.publisher.confirm_mode)
          throw new AmqpError(
            ReplyCode.PRECONDITION_FAILED,
            'PRECONDITION_FAILED - cannot switch from confirm to tx mode',
            90,
            10,
          );
        this.tx ??= { publishes: [], settled: [] };
        return this.send('tx.select-ok', {});
      case 'tx.commit':
        return this.commit();
      case 'tx.rollback':
        return this.rollback();
      case 'confirm.select':
        if (this.tx)
          throw new AmqpError(
            ReplyCode.PRECONDITION_FAILED,
            'PRECONDITION_FAILED - cannot switch from tx to confirm mode',
            85,
            10,
          );
        this.publisher.select_confirms();
        if (!method.args.nowait) this.send('confirm.select-ok', {});
        return;
      default:
        return this.declarations.dispatch(method);
    }
  }

  private async consume(args: MethodArgs<'basic.consume'>): Promise<void> {
    const queue = this.declarations.queue_for(args.queue, 60, 20);
    require_queue_read(this.actor, queue, 20);
    const tag = args.consumer_tag || `amq.ctag-${this.connection.registry.next_tag()}`;
    if (this.consumers.has(tag))
      throw new AmqpError(ReplyCode.NOT_ALLOWED, `NOT_ALLOWED - attempt to reuse consumer tag '${tag}'`, 60, 20);
    const consumer = new QueueConsumer(this, tag, queue, args.no_ack, args.exclusive);
    this.connection.registry.add_consumer(this.connection, queue, consumer);
    this.consumers.set(tag, consumer);
    // Joined first: a broker that cannot serve consumers refuses before consume-ok (its first
    // fetch waits a turn, so consume-ok still goes out before any delivery).
    consumer.start();
    if (!args.nowait) this.send('basic.consume-ok', { consumer_tag: tag });
  }

  private async cancel(tag: string, nowait: boolean): Promise<void> {
    const consumer = this.consumers.get(tag);
    if (!nowait) this.send('basic.cancel-ok', { consumer_tag: tag });
    if (!consumer) return;
    this.consumers.delete(tag);
    await consumer.stop();
    if (consumer.unacked === 0) await consumer.leave();
    await this.connection.registry.remove_consumer(this.connection, consumer);
  }

  /** The broker ends a consumer (its queue was deleted): basic.cancel to the client. */
  cancel_by_broker(consumer: QueueConsumer): void {
    if (this.consumers.get(consumer.tag) !== consumer) return;
    this.consumers.delete(consumer.tag);
    void consumer.leave();
    this.send('basic.cancel', { consumer_tag: consumer.tag, nowait: true });
  }

  /** The share-group coordinator moved away: the consumer is cancelled, its queue kept. */
  coordinator_moved(consumer: QueueConsumer): void {
    this.cancel_by_broker(consumer);
    void this.connection.registry.remove_consumer(this.connection, consumer, { auto_delete: false });
  }

  may_fetch(consumer: QueueConsumer): boolean {
    return this.connection.registry.is_active(consumer);
  }

  prefetch(consumer: QueueConsumer): number {
    if (this.global_prefetch === 0) return this.prefetch_count;
    const held = [...this.consumers.values()].reduce((n, c) => n + c.unacked, 0);
    const room = Math.max(0, this.global_prefetch - held) + consumer.unacked;
    return this.prefetch_count === 0 ? room : Math.min(room, this.prefetch_count);
  }

  drained(): Promise<void> {
    return this.connection.drained();
  }

  async deliver(consumer: QueueConsumer, fetched: FetchedPartition[]): Promise<number> {
    let delivered = 0;
    await each_acquired(fetched, (topic, partition, record, count) => {
      if (this.closing || !consumer.active) {
        consumer.member.settle({ topic, partition, offset: record.offset, type: AckType.RELEASE });
        return;
      }
      const message = message_of(record, count);
      const tag = this.next_tag++;
      if (consumer.no_ack) consumer.member.settle({ topic, partition, offset: record.offset, type: AckType.ACCEPT });
      else {
        this.deliveries.set(tag, { member: consumer.member, consumer, topic, partition, offset: record.offset });
        consumer.unacked++;
      }
      this.connection.send_content(
        this.id,
        'basic.deliver',
        {
          consumer_tag: consumer.tag,
          delivery_tag: tag,
          redelivered: count > 1,
          exchange: message.exchange,
          routing_key: message.routing_key,
        },
        message.properties,
        message.body,
      );
      delivered++;
    });
    return delivered;
  }

  private async get(args: MethodArgs<'basic.get'>): Promise<void> {
    const queue = this.declarations.queue_for(args.queue, 60, 70);
    require_queue_read(this.actor, queue, 70);
    this.connection.registry.used(this.connection.vhost, queue);
    let member = this.getters.get(queue.name);
    if (!member) {
      member = new ShareMember(this.core, queue, this.client_host, (error) =>
        this.warn({ error: String(error) }, 'basic.get member failed'),
      );
      member.join();
      this.getters.set(queue.name, member);
    }
    const fetched = await member.fetch(1, 4 * 1024 * 1024);
    let sent = false;
    await each_acquired(fetched, (topic, partition, record, count) => {
      if (sent) return member.settle({ topic, partition, offset: record.offset, type: AckType.RELEASE });
      sent = true;
      const tag = this.next_tag++;
      if (args.no_ack) member.settle({ topic, partition, offset: record.offset, type: AckType.ACCEPT });
      else this.deliveries.set(tag, { member, consumer: null, topic, partition, offset: record.offset });
      const message = message_of(record, count);
      const remaining = Math.max(0, this.declarations.ready_count(queue) - 1);
      this.connection.send_content(
        this.id,
        'basic.get-ok',
        {
          delivery_tag: tag,
          redelivered: count > 1,
          exchange: message.exchange,
          routing_key: message.routing_key,
          message_count: remaining,
        },
        message.properties,
        message.body,
      );
    });
    if (!sent) this.send('basic.get-empty', {});
  }

  private settle(tag: number, multiple: boolean, type: AckTypeCode): void {
    const taken: Array<[number, Delivery]> = [];
    if (multiple) {
      for (const [t, d] of this.deliveries) {
        if (tag !== 0 && t > tag) break;
        taken.push([t, d]);
        this.deliveries.delete(t);
      }
    } else {
      const d = this.deliveries.get(tag);
      if (!d)
        throw new AmqpError(ReplyCode.PRECONDITION_FAILED, `PRECONDITION_FAILED - unknown delivery tag ${tag}`, 60, 80);
      taken.push([tag, d]);
      this.deliveries.delete(tag);
    }
    this.apply_or_hold(taken, type);
  }

  private settle_all(type: AckTypeCode): void {
    const taken = [...this.deliveries];
    this.deliveries.clear();
    this.apply_or_hold(taken, type);
  }

  private apply_or_hold(taken: Array<[number, Delivery]>, type: AckTypeCode): void {
    if (this.tx) for (const [tag, delivery] of taken) this.tx.settled.push({ tag, delivery, type });
    else
      this.apply(
        taken.map(([, d]) => d),
        type,
      );
  }

  /** Stores the transaction's publishes (one batch per partition), then applies its settlements. */
  private async commit(): Promise<void> {
    const tx = this.tx;
    if (!tx)
      throw new AmqpError(ReplyCode.PRECONDITION_FAILED, 'PRECONDITION_FAILED - channel is not transactional', 90, 20);
    this.tx = { publishes: [], settled: [] };
    await this.publisher.commit(tx.publishes);
    for (const { delivery, type } of tx.settled) this.apply([delivery], type);
    this.send('tx.commit-ok', {});
  }

  /** Forgets the publishes; what the transaction acknowledged is unacknowledged again. */
  private rollback(): void {
    const tx = this.tx;
    if (!tx)
      throw new AmqpError(ReplyCode.PRECONDITION_FAILED, 'PRECONDITION_FAILED - channel is not transactional', 90, 30);
    this.tx = { publishes: [], settled: [] };
    const all = [...this.deliveries, ...tx.settled.map((s) => [s.tag, s.delivery] as [number, Delivery])];
    all.sort((a, b) => a[0] - b[0]);
    this.deliveries.clear();
    for (const [tag, d] of all) this.deliveries.set(tag, d);
    this.send('tx.rollback-ok', {});
  }

  private apply(taken: Delivery[], type: AckTypeCode): void {
    const counts = new Map<QueueConsumer, number>();
    for (const d of taken) {
      d.member.settle({ topic: d.topic, partition: d.partition, offset: d.offset, type });
      if (d.consumer) counts.set(d.consumer, (counts.get(d.consumer) ?? 0) + 1);
    }
    for (const [consumer, n] of counts) {
      consumer.settled(n);
      if (!consumer.active && consumer.unacked === 0) void consumer.leave();
    }
  }

  private send_return(message: PublishedMessage, code: number, text: string): void {
    this.connection.send_content(
      this.id,
      'basic.return',
      {
        reply_code: code,
        reply_text: text,
        exchange: message.exchange,
        routing_key: message.routing_key,
      },
      message.properties_raw,
      message.body,
    );
  }

  // ------------------------------------------------------------------ closing

  /** A channel exception: tell the client; settle nothing more. */
  close_with(error: AmqpError): void {
    if (this.closing) return;
    this.send('channel.close', {
      reply_code: error.code,
      reply_text: error.message.slice(0, 255),
      class_id: error.class_id,
      method_id: error.method_id,
    });
    this.closing = true;
    this.incoming = null;
    this.tasks.length = 0;
    this.release_all();
  }

  private closed(): void {
    this.closing = true;
    this.release_all();
    this.connection.channel_closed(this);
  }

  /** Everything unacknowledged goes back to its queue: members leave, releasing what they hold. */
  release_all(): void {
    this.publisher.flush();
    this.deliveries.clear();
    for (const consumer of this.consumers.values()) {
      void consumer.leave();
      void this.connection.registry.remove_consumer(this.connection, consumer);
    }
    this.consumers.clear();
    for (const member of this.getters.values()) void member.leave();
    this.getters.clear();
  }
}

/** Calls `each` for every record of `fetched` inside an acquired range, with its delivery count. */
async function each_acquired(
  fetched: FetchedPartition[],
  each: (
    topic: string,
    partition: number,
    record: import('../../protocol/record_batch.ts').DecodedRecord,
    count: number,
  ) => void,
): Promise<void> {
  for (const f of fetched) {
    if (f.acquired.length === 0) continue;
    // A fetch returns whole stored batches; only the acquired window of each is decoded.
    const from = Math.min(...f.acquired.map((r) => r.first_offset));
    const to = Math.max(...f.acquired.map((r) => r.last_offset));
    for (const batch of f.batches) {
      for (const record of decode_record_batch(await decompress_record_batch(batch), 0, from, to)) {
        const range = f.acquired.find((r) => record.offset >= r.first_offset && record.offset <= r.last_offset);
        if (range) each(f.topic, f.partition, record, range.delivery_count);
      }
    }
  }
}
