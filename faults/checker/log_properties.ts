// The properties of the partition logs: no acknowledged write lost (it is read back at the offset
// its acknowledgement named), no offset holding two different records in any read or on any
// replica, no record stored twice (idempotent producers), each producer's writes to a key in the
// order it made them, and the replicas' logs identical below the high watermark.
import type { CheckBounds, Failure, ReadOp, ReplicaEndOp, WriteOp } from './history.ts';

const partition_of = (op: { topic: string; partition: number }) => `${op.topic}/${op.partition}`;

/** Per partition, per offset, the records read there (the first, and any different one). */
export class OffsetMap {
  private readonly by_partition = new Map<string, Map<number, ReadOp[]>>();

  constructor(reads: readonly ReadOp[]) {
    for (const read of reads) {
      let offsets = this.by_partition.get(partition_of(read));
      if (!offsets) this.by_partition.set(partition_of(read), (offsets = new Map()));
      const seen = offsets.get(read.offset);
      if (!seen) offsets.set(read.offset, [read]);
      else seen.push(read);
    }
  }

  at(topic: string, partition: number, offset: number): ReadOp[] {
    return this.by_partition.get(`${topic}/${partition}`)?.get(offset) ?? [];
  }

  *partitions(): Iterable<[string, Map<number, ReadOp[]>]> {
    yield* this.by_partition;
  }
}

/** Every acknowledged write is read back at the offset it was acknowledged with, with its value. */
export function lost_writes(writes: readonly WriteOp[], offsets: OffsetMap): Failure[] {
  const failures: Failure[] = [];
  for (const write of writes) {
    if (write.outcome !== 'ok' || write.offset === undefined) continue;
    const there = offsets.at(write.topic, write.partition, write.offset);
    if (there.some((read) => read.value === write.value)) continue;
    failures.push({
      property: 'acknowledged write lost',
      detail:
        `${write.value} acknowledged at ${partition_of(write)}@${write.offset}, ` +
        (there.length === 0 ? 'never read there' : `where ${there[0]!.value} was read instead`),
      ops: [write, ...there.slice(0, 3)],
    });
  }
  return failures;
}

/** No offset holds two different records, across every consumer's reads and every replica. */
export function offset_conflicts(offsets: OffsetMap): Failure[] {
  const failures: Failure[] = [];
  for (const [partition, by_offset] of offsets.partitions()) {
    for (const [offset, reads] of by_offset) {
      const other = reads.find((read) => read.value !== reads[0]!.value || read.key !== reads[0]!.key);
      if (!other) continue;
      failures.push({
        property: 'one offset, two records',
        detail:
          `${partition}@${offset} read as ${reads[0]!.value} by ${reads[0]!.reader} ` +
          `and as ${other.value} by ${other.reader}`,
        ops: [reads[0]!, other],
      });
    }
  }
  return failures;
}

/** Second copies the checker puts down to a client's resend rather than to the broker. */
export interface Resent {
  /** Values whose write ended unknown, sent again by the client as a new write. */
  after_unknown: Set<string>;
  /** Values resent under a newer epoch of their producer after a message timeout (librdkafka). */
  under_new_epoch: Set<string>;
}

/**
 * With idempotent producers, no written value is stored at two offsets. Two kinds of second copy
 * are a client's doing, which no broker can tell from a new message, and are only counted:
 * - of a value whose write ended unknown: the client sent it again as a new write, with a new
 *   sequence number (kafkajs does, after a request timeout);
 * - under a newer epoch of the same producer id, when the first copy's batch also holds a record
 *   whose write ended unknown: librdkafka fails the messages of a request in flight that reach
 *   their `message.timeout.ms`, bumps its epoch and sends the request's other messages again
 *   with new sequence numbers, though the broker may have stored the request (its documentation,
 *   "Message timeout considerations": such messages are "possibly persisted").
 */
export function duplicates(
  offsets: OffsetMap,
  writes: readonly WriteOp[],
  bounds: CheckBounds,
  resent: Resent,
): Failure[] {
  if (!bounds.idempotent_writes) return [];
  const unknown = new Set(writes.filter((w) => w.outcome === 'unknown').map((w) => w.value));
  const failures: Failure[] = [];
  for (const [partition, by_offset] of offsets.partitions()) {
    const where = new Map<string, ReadOp>();
    const timed_out_batches = batches_holding(by_offset, unknown);
    for (const [offset, reads] of [...by_offset].sort((a, b) => a[0] - b[0])) {
      const read = reads[0]!;
      const first = where.get(read.value);
      if (!first || first.offset === offset) {
        where.set(read.value, read);
        continue;
      }
      if (unknown.has(read.value)) resent.after_unknown.add(read.value);
      else if (resent_under_new_epoch(by_offset.get(first.offset)!, reads, timed_out_batches))
        resent.under_new_epoch.add(read.value);
      else {
        failures.push({
          property: 'record stored twice',
          detail: `${read.value} at ${partition}@${first.offset} and @${offset}`,
          ops: [first, read],
        });
      }
    }
  }
  return failures;
}

/** The base offsets of the stored batches that hold a record of one of `values`. */
function batches_holding(by_offset: Map<number, ReadOp[]>, values: Set<string>): Set<number> {
  const found = new Set<number>();
  for (const reads of by_offset.values()) {
    const batch = reads.find((r) => r.batch)?.batch;
    if (batch && values.has(reads[0]!.value)) found.add(batch.base_offset);
  }
  return found;
}

function resent_under_new_epoch(first: ReadOp[], second: ReadOp[], timed_out_batches: Set<number>): boolean {
  const a = first.find((r) => r.batch)?.batch;
  const b = second.find((r) => r.batch)?.batch;
  return (
    a !== undefined &&
    b !== undefined &&
    a.producer_id === b.producer_id &&
    b.producer_epoch > a.producer_epoch &&
    timed_out_batches.has(a.base_offset)
  );
}

/**
 * A producer's acknowledged writes to one key of a partition, each made after the previous one
 * was acknowledged, sit at increasing offsets.
 */
export function key_order(writes: readonly WriteOp[]): Failure[] {
  const failures: Failure[] = [];
  const last = new Map<string, WriteOp>();
  const acknowledged = writes
    .filter((w) => w.outcome === 'ok' && w.offset !== undefined && w.key !== null)
    .sort((a, b) => a.invoked_ms - b.invoked_ms);
  for (const write of acknowledged) {
    const stream = `${write.process} ${partition_of(write)} ${write.key}`;
    const before = last.get(stream);
    if (before && before.completed_ms <= write.invoked_ms && before.offset! >= write.offset!) {
      failures.push({
        property: 'per-key order',
        detail:
          `${write.process} wrote ${before.value} then ${write.value} to key ${write.key}, ` +
          `stored at ${before.offset} and ${write.offset}`,
        ops: [before, write],
      });
    }
    if (!before || before.completed_ms <= write.invoked_ms) last.set(stream, write);
  }
  return failures;
}

/** Every replica holds the same records below the lowest high watermark any of them reported. */
export function replicas_diverge(ends: readonly ReplicaEndOp[], offsets: OffsetMap): Failure[] {
  const failures: Failure[] = [];
  const by_partition = new Map<string, ReplicaEndOp[]>();
  for (const end of ends) {
    const list = by_partition.get(partition_of(end));
    if (list) list.push(end);
    else by_partition.set(partition_of(end), [end]);
  }
  for (const [partition, replicas] of by_partition) {
    const { topic, partition: index } = replicas[0]!;
    const high_watermark = Math.min(...replicas.map((r) => r.high_watermark));
    for (let offset = 0; offset < high_watermark; offset++) {
      const held = offsets.at(topic, index, offset).filter((read) => read.reader.startsWith('replica-'));
      const missing = replicas.filter((r) => !held.some((read) => read.reader === `replica-${r.node_id}`));
      if (missing.length === 0) continue;
      failures.push({
        property: 'replicas differ below the high watermark',
        detail:
          `${partition}@${offset} (high watermark ${high_watermark}) ` +
          `missing on ${missing.map((r) => r.node_id).join(', ')}`,
        ops: [...missing, ...held],
      });
      break; // one per partition: the rest of its tail usually differs too
    }
  }
  return failures;
}
