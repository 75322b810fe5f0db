// Partitioners: which partition a message goes to. The shape is kafkajs's (a factory returning a
// function of { topic, partitionMetadata, message }), so kafkajs partitioners work here and ours
// work there. The default one places keyed messages exactly as Kafka's Java client and kafkajs's
// DefaultPartitioner do (murmur2 of the key bytes), so producers in different languages agree on
// where a key lives.
import { randomInt } from 'node:crypto';

/** A partition as a partitioner sees it (kafkajs's PartitionMetadata). */
export interface PartitionMetadata {
  partitionErrorCode: number;
  partitionId: number;
  leader: number;
  replicas: number[];
  isr: number[];
  offlineReplicas?: number[];
}

/** Message headers as kafkajs takes them; an array value gives several headers with one key. */
export interface IHeaders {
  [key: string]: Buffer | string | Array<Buffer | string> | undefined;
}

/** The message fields a partitioner may look at (kafkajs's Message: the timestamp is a string). */
export interface PartitionerMessage {
  key?: Buffer | string | null;
  value: Buffer | string | null;
  partition?: number;
  headers?: IHeaders;
  timestamp?: string;
}

export interface PartitionerArgs {
  topic: string;
  partitionMetadata: PartitionMetadata[];
  message: PartitionerMessage;
}

export type Partitioner = (args: PartitionerArgs) => number;
/** A factory called once per producer (kafkajs's ICustomPartitioner). */
export type CreatePartitioner = () => Partitioner;

const SEED = 0x9747b28c;
const M = 0x5bd1e995;
const R = 24;

/** Kafka's murmur2 (org.apache.kafka.common.utils.Utils.murmur2): a signed 32-bit hash. */
export function murmur2(data: Uint8Array): number {
  const length = data.length;
  let h = SEED ^ length;
  const whole = length >>> 2;
  for (let i = 0; i < whole; i++) {
    const at = i * 4;
    let k = data[at]! | (data[at + 1]! << 8) | (data[at + 2]! << 16) | (data[at + 3]! << 24);
    k = Math.imul(k, M);
    k ^= k >>> R;
    k = Math.imul(k, M);
    h = Math.imul(h, M);
    h ^= k;
  }
  const tail = length & ~3;
  const rest = length & 3;
  if (rest === 3) h ^= data[tail + 2]! << 16;
  if (rest >= 2) h ^= data[tail + 1]! << 8;
  if (rest >= 1) {
    h ^= data[tail]!;
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

/** Java's Utils.toPositive: clears the sign bit (not the absolute value). */
export function to_positive(value: number): number {
  return value & 0x7fffffff;
}

function key_bytes(key: Buffer | string): Uint8Array {
  return typeof key === 'string' ? Buffer.from(key, 'utf8') : key;
}

/** The partition of a keyed message among `partition_count` partitions (Java client's rule). */
export function partition_for_key(key: Buffer | string, partition_count: number): number {
  return to_positive(murmur2(key_bytes(key))) % partition_count;
}

/**
 * The default partitioner: an explicit `partition` wins; a keyed message goes to
 * `toPositive(murmur2(key)) % partitionCount`; unkeyed messages go round-robin over the partitions
 * that have a leader (over all partitions when none has), starting at a random place per topic.
 */
export const DefaultPartitioner: CreatePartitioner = () => {
  const counters = new Map<string, number>();
  return ({ topic, partitionMetadata, message }) => {
    if (message.partition !== null && message.partition !== undefined) return message.partition;
    const count = partitionMetadata.length;
    if (message.key !== null && message.key !== undefined) return partition_for_key(message.key, count);
    const next = ((counters.get(topic) ?? randomInt(0x7fffffff)) + 1) & 0x7fffffff;
    counters.set(topic, next);
    return nth_available(partitionMetadata, next) ?? next % count;
  };
};

/**
 * The partition id of the `n`-th (modulo their count) partition with a leader, or null when none
 * has one. Counted without a filtered copy: this runs for every message without a key.
 */
function nth_available(partitions: PartitionMetadata[], n: number): number | null {
  let available = 0;
  for (let i = 0; i < partitions.length; i++) if (partitions[i]!.leader >= 0) available++;
  if (available === 0) return null;
  if (available === partitions.length) return partitions[n % available]!.partitionId;
  let skip = n % available;
  for (let i = 0; i < partitions.length; i++) {
    const partition = partitions[i]!;
    if (partition.leader < 0) continue;
    if (skip === 0) return partition.partitionId;
    skip--;
  }
  return null;
}

export const Partitioners = { DefaultPartitioner } as const;
