// A channel's exchange.* and queue.* methods over the core's routing: declare (passive or not),
// delete, bind, unbind, purge; server-named and exclusive queues (an exclusive queue belongs to
// its connection: others get RESOURCE_LOCKED, and it goes when the connection closes); the
// message and consumer counts declare-ok and delete-ok report.
import { randomBytes } from 'node:crypto';
import type { AclOperation, Core, ExchangeType, QueueRecord } from '../../core/index.ts';
import { AmqpError, ReplyCode } from '../../protocol/amqp/constants.ts';
import { amqp_allowed, require_amqp, type AmqpActor } from './amqp_authorize.ts';
import type { ConnectionPort } from './ports.ts';
import type { DecodedMethod, MethodArgs, MethodInput, MethodName } from '../../protocol/amqp/methods.ts';
import { routing_args } from './arguments.ts';

const EXCHANGE_TYPES: readonly string[] = ['direct', 'fanout', 'topic', 'headers', 'x-delayed-message'];
const ROUTING_TYPES: readonly string[] = ['direct', 'fanout', 'topic', 'headers'];
const NAME_BYTES_MAX = 255;

/** What declarations need of their channel. */
export interface DeclarationsHost {
  readonly core: Core;
  readonly connection: ConnectionPort;
  send<N extends MethodName>(name: N, args: MethodInput<N>): void;
}

export class Declarations {
  constructor(private readonly channel: DeclarationsHost) {}

  private get core() {
    return this.channel.core;
  }

  private get vhost(): string {
    return this.channel.connection.vhost;
  }

  private get registry() {
    return this.channel.connection.registry;
  }

  private get actor(): AmqpActor {
    const { connection } = this.channel;
    return { core: this.core, username: connection.username, client_host: connection.remote_address ?? '' };
  }

  /** The ACL a declaration needs (amqp_authorize.ts); ACCESS_REFUSED on the method otherwise. */
  private authorize(method: DecodedMethod): void {
    const at = [method.class_id, method.method_id] as const;
    const on_queue = (operation: AclOperation, queue: string) =>
      require_amqp(this.actor, operation, 'topic', this.core.routing.queue_topic(this.vhost, queue), at);
    switch (method.name) {
      case 'exchange.declare':
        if (!method.args.passive) require_amqp(this.actor, 'alter', 'cluster', '', at);
        return;
      case 'exchange.delete':
      case 'exchange.bind':
      case 'exchange.unbind':
        return require_amqp(this.actor, 'alter', 'cluster', '', at);
      case 'queue.declare': {
        const { passive, queue } = method.args;
        if (passive) return on_queue('describe', queue);
        // A server-named queue (amq.gen-…) is new: CREATE on the cluster covers it.
        if (
          queue === '' ||
          !amqp_allowed(this.actor, 'create', 'topic', this.core.routing.queue_topic(this.vhost, queue))
        )
          require_amqp(this.actor, 'create', 'cluster', '', at);
        return;
      }
      case 'queue.bind':
      case 'queue.unbind':
        return on_queue('alter', method.args.queue);
      case 'queue.purge':
      case 'queue.delete':
        return on_queue('delete', method.args.queue);
    }
  }

  dispatch(method: DecodedMethod): void | Promise<void> {
    this.authorize(method);
    switch (method.name) {
      case 'exchange.declare':
        return this.declare_exchange(method.args);
      case 'exchange.delete':
        return this.delete_exchange(method.args);
      case 'exchange.bind':
      case 'exchange.unbind': {
        const { destination, source, routing_key, arguments: args, nowait } = method.args;
        const binding = {
          source,
          destination,
          destination_type: 'exchange' as const,
          routing_key,
          arguments: routing_args(args),
        };
        const bind = method.name === 'exchange.bind';
        return this.after(
          bind ? this.core.routing.bind(this.vhost, binding) : this.core.routing.unbind(this.vhost, binding),
          nowait,
          () => this.channel.send(bind ? 'exchange.bind-ok' : 'exchange.unbind-ok', {}),
        );
      }
      case 'queue.declare':
        return this.declare_queue(method.args);
      case 'queue.bind':
      case 'queue.unbind': {
        const { queue, exchange, routing_key, arguments: args } = method.args;
        const bind = method.name === 'queue.bind';
        const name = this.queue_for(queue, 50, bind ? 20 : 50).name;
        const binding = {
          source: exchange,
          destination: name,
          destination_type: 'queue' as const,
          routing_key,
          arguments: routing_args(args),
        };
        const nowait = method.name === 'queue.bind' && method.args.nowait;
        return this.after(
          bind ? this.core.routing.bind(this.vhost, binding) : this.core.routing.unbind(this.vhost, binding),
          nowait,
          () => this.channel.send(bind ? 'queue.bind-ok' : 'queue.unbind-ok', {}),
        );
      }
      case 'queue.purge':
        return this.purge(method.args);
      case 'queue.delete':
        return this.delete_queue(method.args);
      default:
        throw new AmqpError(
          ReplyCode.NOT_IMPLEMENTED,
          `NOT_IMPLEMENTED - ${method.name} is not served`,
          method.class_id,
          method.method_id,
        );
    }
  }

  private async after(done: Promise<void>, nowait: boolean, answer: () => void): Promise<void> {
    await done;
    if (!nowait) answer();
  }

  private async declare_exchange(args: MethodArgs<'exchange.declare'>): Promise<void> {
    const name = args.exchange;
    if (args.passive) {
      if (!this.core.routing.exchange(this.vhost, name))
        throw new AmqpError(ReplyCode.NOT_FOUND, `NOT_FOUND - no exchange '${name}' in vhost '${this.vhost}'`, 40, 10);
    } else {
      if (name === '')
        throw new AmqpError(
          ReplyCode.ACCESS_REFUSED,
          'ACCESS_REFUSED - the default exchange cannot be declared',
          40,
          10,
        );
      if (!EXCHANGE_TYPES.includes(args.type))
        throw new AmqpError(
          ReplyCode.COMMAND_INVALID,
          `COMMAND_INVALID - unknown exchange type '${args.type}'`,
          40,
          10,
        );
      check_name(name, 40, 10);
      const delayed_type = args.arguments['x-delayed-type'];
      if (args.type === 'x-delayed-message' && !ROUTING_TYPES.includes(String(delayed_type)))
        throw new AmqpError(
          ReplyCode.PRECONDITION_FAILED,
          `PRECONDITION_FAILED - x-delayed-message needs x-delayed-type (one of ${ROUTING_TYPES.join(', ')})`,
          40,
          10,
        );
      await this.core.routing.declare_exchange(this.vhost, {
        name,
        type: args.type as ExchangeType,
        durable: args.durable,
        auto_delete: args.auto_delete,
        internal: args.internal,
        arguments: routing_args(args.arguments),
      });
    }
    if (!args.nowait) this.channel.send('exchange.declare-ok', {});
  }

  private async delete_exchange(args: MethodArgs<'exchange.delete'>): Promise<void> {
    // Deleting an exchange that is not there succeeds (RabbitMQ 3.x+): the outcome is the same.
    if (this.core.routing.exchange(this.vhost, args.exchange))
      await this.core.routing.delete_exchange(this.vhost, args.exchange, { if_unused: args.if_unused });
    if (!args.nowait) this.channel.send('exchange.delete-ok', {});
  }

  private async declare_queue(args: MethodArgs<'queue.declare'>): Promise<void> {
    let queue: QueueRecord;
    if (args.passive) {
      queue = this.queue_for(args.queue, 50, 10);
    } else {
      const name = args.queue || `amq.gen-${randomBytes(16).toString('base64url')}`;
      check_name(name, 50, 10);
      const existing = this.core.routing.queue(this.vhost, name);
      if (existing) this.check_owner(existing, 50, 10);
      queue = await this.core.routing.declare_queue(this.vhost, {
        name,
        durable: args.durable,
        exclusive: args.exclusive,
        auto_delete: args.auto_delete,
        arguments: routing_args(args.arguments),
      });
      if (queue.exclusive && !existing) this.registry.own(this.channel.connection, queue);
      this.registry.used(this.vhost, queue); // declaring again renews x-expires; a passive look does not
    }
    if (!args.nowait)
      this.channel.send('queue.declare-ok', {
        queue: queue.name,
        message_count: this.ready_count(queue),
        consumer_count: this.registry.consumer_count(queue),
      });
  }

  private async purge(args: MethodArgs<'queue.purge'>): Promise<void> {
    const queue = this.queue_for(args.queue, 50, 30);
    const count = this.ready_count(queue);
    const topic = this.core.topics.get(queue.topic);
    for (let p = 0; p < (topic?.partitions ?? 0); p++) await this.core.partitions.delete_records(queue.topic, p, -1);
    if (!args.nowait) this.channel.send('queue.purge-ok', { message_count: count });
  }

  private async delete_queue(args: MethodArgs<'queue.delete'>): Promise<void> {
    const queue = this.core.routing.queue(this.vhost, args.queue);
    let count = 0;
    if (queue) {
      this.check_owner(queue, 50, 40);
      count = this.ready_count(queue);
      if (args.if_unused && this.registry.consumer_count(queue) > 0)
        throw new AmqpError(
          ReplyCode.PRECONDITION_FAILED,
          `PRECONDITION_FAILED - queue '${queue.name}' in vhost '${this.vhost}' in use`,
          50,
          40,
        );
      if (args.if_empty && count > 0)
        throw new AmqpError(
          ReplyCode.PRECONDITION_FAILED,
          `PRECONDITION_FAILED - queue '${queue.name}' in vhost '${this.vhost}' is not empty`,
          50,
          40,
        );
      await this.registry.delete_queue(this.core, this.vhost, queue);
    }
    if (!args.nowait) this.channel.send('queue.delete-ok', { message_count: count });
  }

  /** The queue named (or 404), usable by this connection (or 405). */
  queue_for(name: string, class_id: number, method_id: number): QueueRecord {
    const queue = this.core.routing.queue(this.vhost, name);
    if (!queue)
      throw new AmqpError(
        ReplyCode.NOT_FOUND,
        `NOT_FOUND - no queue '${name}' in vhost '${this.vhost}'`,
        class_id,
        method_id,
      );
    this.check_owner(queue, class_id, method_id);
    return queue;
  }

  private check_owner(queue: QueueRecord, class_id: number, method_id: number): void {
    if (queue.exclusive && !this.registry.owns(this.channel.connection, queue))
      throw new AmqpError(
        ReplyCode.RESOURCE_LOCKED,
        `RESOURCE_LOCKED - cannot obtain exclusive access to locked queue '${queue.name}' in vhost '${this.vhost}'`,
        class_id,
        method_id,
      );
  }

  /** Messages ready for delivery (not held by a consumer). */
  ready_count(queue: QueueRecord): number {
    const stats = this.core.shares.is_coordinator ? this.core.shares.queue_stats(queue.group_id) : null;
    if (stats && stats.partitions.length > 0) return stats.available;
    const partitions = this.core.topics.get(queue.topic)?.partitions ?? 0;
    let count = 0;
    for (let p = 0; p < partitions; p++) {
      const reader = this.core.partitions.reader_now(queue.topic, p);
      count += Math.max(0, reader.high_watermark - reader.log_start_offset);
    }
    return count;
  }
}

function check_name(name: string, class_id: number, method_id: number): void {
  if (Buffer.byteLength(name) > NAME_BYTES_MAX)
    throw new AmqpError(
      ReplyCode.PRECONDITION_FAILED,
      `PRECONDITION_FAILED - name longer than ${NAME_BYTES_MAX} bytes`,
      class_id,
      method_id,
    );
}
