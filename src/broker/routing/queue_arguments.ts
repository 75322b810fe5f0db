// A queue's declare arguments (RabbitMQ's x-arguments) as the topic configs and share-group configs
// that serve them, and the topic name a queue is stored under. The queue engine is the share
// groups': TTL, length limits, overflow, delivery limits and dead letters are theirs.
import { createHash } from 'node:crypto';
import { RoutingError } from '../../core/errors.ts';
import type { GroupConfigs, RoutingArgs, TopicConfigs } from '../../core/types.ts';
import { PRIORITY_MAX, priority_levels } from '../../core/queue_priority.ts';

/** RabbitMQ's consumer timeout: an unacknowledged delivery is taken back after this long. */
export const QUEUE_LOCK_DURATION_MS = 1_800_000;
/** Deliveries of a message when the queue sets no x-delivery-limit (share groups allow at most this). */
export const QUEUE_DELIVERY_LIMIT_DEFAULT = 1_000;
const TOPIC_NAME_MAX = 249;
const TOPIC_NAME = /^[a-zA-Z0-9._-]+$/;

/** Arguments accepted; others are refused so a typo does not pass for a setting. */
const KNOWN = new Set([
  'x-message-ttl',
  'x-expires',
  'x-max-length',
  'x-max-length-bytes',
  'x-overflow',
  'x-dead-letter-exchange',
  'x-dead-letter-routing-key',
  'x-delivery-limit',
  'x-queue-type',
  'x-single-active-consumer',
  'x-max-priority',
  'x-queue-mode',
  'x-queue-version',
  'x-queue-leader-locator',
  'x-quorum-initial-group-size',
]);

/**
 * The topic holding a queue's messages: its own name in the default virtual host when that is a
 * valid topic name (so Kafka clients see queue `orders` as topic `orders`); otherwise, and in other
 * virtual hosts, `amqp.<vhost>.<name>` with invalid characters as `_` and a hash of the original.
 */
export function queue_topic_name(vhost: string, name: string): string {
  if (vhost === '/' && TOPIC_NAME.test(name) && name.length <= TOPIC_NAME_MAX && !name.startsWith('__'))
    if (name !== '.' && name !== '..') return name;
  const clean = (text: string) => text.replace(/[^a-zA-Z0-9._-]/g, '_');
  const hash = createHash('sha256').update(`${vhost}\0${name}`).digest('hex').slice(0, 8);
  return `amqp.${clean(vhost)}.${clean(name)}`.slice(0, TOPIC_NAME_MAX - 9) + `.${hash}`;
}

/** The share group that delivers a queue's messages. */
export function queue_group_id(topic: string): string {
  return `amqp.${topic}`;
}

function integer_arg(args: RoutingArgs, name: string, min: number): number | undefined {
  const value = args[name];
  if (value === undefined) return undefined;
  const n = typeof value === 'string' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < min)
    throw new RoutingError('precondition_failed', `invalid arg '${name}': ${String(value)} is not an integer ≥ ${min}`);
  return n;
}

function check_choice(args: RoutingArgs, name: string, values: readonly string[]): string | undefined {
  const value = args[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !values.includes(value))
    throw new RoutingError(
      'precondition_failed',
      `invalid arg '${name}': ${String(value)} (one of ${values.join(', ')})`,
    );
  return value;
}

/** Throws precondition_failed for an unknown or invalid argument. */
export function check_queue_arguments(args: RoutingArgs): void {
  for (const name of Object.keys(args))
    if (!KNOWN.has(name)) throw new RoutingError('precondition_failed', `unknown queue argument '${name}'`);
  for (const name of ['x-message-ttl', 'x-max-length', 'x-max-length-bytes']) integer_arg(args, name, 0);
  integer_arg(args, 'x-expires', 1);
  integer_arg(args, 'x-delivery-limit', 1);
  const priority_max = integer_arg(args, 'x-max-priority', 1);
  if (priority_max !== undefined && priority_max > PRIORITY_MAX)
    throw new RoutingError(
      'precondition_failed',
      `invalid arg 'x-max-priority': ${priority_max} is above ${PRIORITY_MAX}`,
    );
  check_choice(args, 'x-overflow', ['drop-head', 'reject-publish', 'reject-publish-dlx']);
  check_choice(args, 'x-queue-type', ['classic', 'quorum']);
}

/** The partitions of a new queue's topic: one per priority level with x-max-priority, else 1. */
export function queue_partitions(args: RoutingArgs): number {
  const max = integer_arg(args, 'x-max-priority', 1);
  return max === undefined ? 1 : priority_levels(max);
}

/** The configs of the topic a new queue creates. */
export function queue_topic_configs(args: RoutingArgs): TopicConfigs {
  const configs: TopicConfigs = {};
  const ttl_ms = integer_arg(args, 'x-message-ttl', 0);
  if (ttl_ms !== undefined) configs['sluice.message.ttl.ms'] = String(ttl_ms);
  const length_max = integer_arg(args, 'x-max-length', 0);
  if (length_max !== undefined) configs['sluice.max.messages'] = String(length_max);
  const bytes_max = integer_arg(args, 'x-max-length-bytes', 0);
  if (bytes_max !== undefined) configs['sluice.max.bytes'] = String(bytes_max);
  const overflow = check_choice(args, 'x-overflow', ['drop-head', 'reject-publish', 'reject-publish-dlx']);
  if (overflow) configs['sluice.overflow.policy'] = overflow === 'drop-head' ? 'archive-oldest' : 'reject';
  return configs;
}

/** The share-group configs of a queue: AMQP's delivery model over the group's state. */
export function queue_group_configs(args: RoutingArgs): GroupConfigs {
  const limit = integer_arg(args, 'x-delivery-limit', 1) ?? QUEUE_DELIVERY_LIMIT_DEFAULT;
  return {
    'share.record.lock.duration.ms': String(QUEUE_LOCK_DURATION_MS),
    'share.delivery.count.limit': String(Math.min(limit, QUEUE_DELIVERY_LIMIT_DEFAULT)),
    'share.auto.offset.reset': 'earliest',
  };
}
