// What the parts of a connection see of each other: a channel of its connection, the connection of
// a channel, and both of the listener's registry. Kept apart so the parts import these and not
// each other's classes.
import type net from 'node:net';
import type { Core, Logger, QueueRecord } from '../../core/index.ts';
import type { AmqpError } from '../../protocol/amqp/constants.ts';
import type { MethodInput, MethodName } from '../../protocol/amqp/methods.ts';
import type { BasicProperties } from '../../protocol/amqp/properties.ts';
import type { QueueConsumer } from './consumer.ts';

export interface AmqpLimits {
  /** frame-max the server proposes (and the largest it accepts). */
  frame_max_bytes: number;
  channel_max: number;
  /** Heartbeat the server proposes, in seconds (0: none). */
  heartbeat_s: number;
  /** Largest message body accepted. */
  message_bytes_max: number;
  /** Bytes waiting to be sent above which deliveries pause until the socket drains. */
  unsent_bytes_max: number;
}

/** One connection as the admin API and metrics show it. */
export interface AmqpConnectionInfo {
  id: string;
  user: string;
  vhost: string;
  channels: number;
  consumers: number;
  opened_ms: number;
  client: Record<string, unknown>;
}

export interface ChannelPort {
  readonly id: number;
  /** Consumers (basic.consume) active on the channel. */
  readonly consumer_count: number;
  close_with(error: AmqpError): void;
  cancel_by_broker(consumer: QueueConsumer): void;
}

export interface ConnectionPort {
  readonly id: string;
  readonly core: Core;
  readonly logger: Logger;
  readonly limits: AmqpLimits;
  readonly registry: RegistryPort;
  readonly socket: net.Socket;
  readonly vhost: string;
  /** The user logged in as: a name of the users, or a client certificate's subject (EXTERNAL). */
  readonly username: string;
  /** Whether it logged in with a password (PLAIN, AMQPLAIN), so as a user that can be removed. */
  readonly password_login: boolean;
  readonly remote_address: string | undefined;
  send_method<N extends MethodName>(channel: number, name: N, args: MethodInput<N>): void;
  send_content<N extends MethodName>(
    channel: number,
    name: N,
    args: MethodInput<N>,
    properties: Buffer | BasicProperties,
    body: Buffer,
  ): void;
  drained(): Promise<void>;
  /** Stops reading the socket while any reason holds it (`on`), resumes when none does. */
  hold_reading(why: string, on: boolean): void;
  /** A message was published on this connection (a disk alarm blocks publishing connections). */
  published(): void;
  /** The disk alarm was raised or cleared. */
  alarm_changed(): void;
  /** The user it logged in as was removed: CONNECTION_FORCED, then closed. */
  user_removed(): void;
  /** A connection exception (or a bug of ours, answered INTERNAL_ERROR). */
  fail(error: unknown, class_id?: number, method_id?: number): void;
  channel_failed(channel: ChannelPort, error: AmqpError): void;
  channel_closed(channel: ChannelPort): void;
  /** The broker ends a consumer of this connection (its queue is being deleted). */
  cancel_consumer(consumer: QueueConsumer): void;
  /** The broker is stopping: CONNECTION_FORCED, then close. */
  shutdown(): void;
  info(): AmqpConnectionInfo;
}

export interface RegistryPort {
  opened(connection: ConnectionPort): void;
  /** The queue was declared, consumed from or read with basic.get (x-expires). */
  used(vhost: string, queue: QueueRecord): void;
  closed(connection: ConnectionPort): void;
  /** A consumer tag unique on this broker. */
  next_tag(): string;
  own(connection: ConnectionPort, queue: QueueRecord): void;
  owns(connection: ConnectionPort, queue: QueueRecord): boolean;
  consumer_count(queue: QueueRecord): number;
  add_consumer(connection: ConnectionPort, queue: QueueRecord, consumer: QueueConsumer): void;
  /** Whether the consumer may be delivered to (single-active-consumer queues have one at a time). */
  is_active(consumer: QueueConsumer): boolean;
  remove_consumer(
    connection: ConnectionPort,
    consumer: QueueConsumer,
    options?: { auto_delete?: boolean },
  ): Promise<void>;
  delete_queue(core: Core, vhost: string, queue: QueueRecord): Promise<void>;
}
