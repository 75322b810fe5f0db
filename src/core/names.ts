// Names and bounds every part agrees on: internal topics, storage partition names, partition counts.

/** Partitions one topic may have. */
export const PARTITIONS_MAX = 10_000;

/** Topics whose names start with `__` are the broker's own. */
export function is_internal_topic(name: string): boolean {
  return name.startsWith('__');
}

/** The storage partition holding a topic's partition. */
export function partition_name(topic: string, partition: number): string {
  return `${topic}-${partition}`;
}
