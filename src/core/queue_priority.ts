// Priority queues (AMQP x-max-priority): each priority level is a partition of the queue's topic,
// and consumers take from the highest level that has messages first. Shared by the routing table
// (how many partitions a new queue gets) and the front ends (where a message goes).

/** The highest x-max-priority AMQP allows (a priority is an octet). */
export const PRIORITY_MAX = 255;
/**
 * Priority levels kept apart. RabbitMQ advises at most 10 priorities; a higher x-max-priority
 * shares the levels out evenly.
 */
export const PRIORITY_LEVELS_MAX = 11;

/** The levels (partitions) of a queue whose x-max-priority is `max`. */
export function priority_levels(max: number): number {
  return Math.min(max + 1, PRIORITY_LEVELS_MAX);
}

/**
 * The level (partition) of a queue with `levels` levels and x-max-priority `max` that a message of
 * `priority` goes to: 0 for none, the top one at or above `max`, as RabbitMQ caps priorities.
 */
export function priority_level(max: number, levels: number, priority: number | undefined): number {
  const p = Math.min(Math.max(priority ?? 0, 0), max);
  return Math.floor((p * (levels - 1)) / max);
}
