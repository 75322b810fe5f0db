// The properties of delivery: consumer groups' committed offsets never go back, every message of
// a queue (share group) is accepted and none more often than the bound, delayed messages are
// delivered, none early, and every confirmed AMQP publish is delivered, none too often.
import type {
  AcceptOp,
  AmqpAckOp,
  AmqpPublishOp,
  CheckBounds,
  ClockFaultOp,
  CommitOp,
  DelayedReadOp,
  DelayedWriteOp,
  Failure,
  WriteOp,
} from './history.ts';

/** A group's acknowledged commits of one partition, in the order acknowledged, never decrease. */
export function commits_backwards(commits: readonly CommitOp[]): Failure[] {
  const failures: Failure[] = [];
  const last = new Map<string, CommitOp>();
  for (const commit of [...commits].sort((a, b) => a.at_ms - b.at_ms)) {
    const key = `${commit.group} ${commit.topic}/${commit.partition}`;
    const before = last.get(key);
    if (before && commit.offset < before.offset) {
      failures.push({
        property: 'committed offset went back',
        detail: `${key}: ${before.offset} then ${commit.offset}`,
        ops: [before, commit],
      });
    }
    if (!before || commit.offset >= before.offset) last.set(key, commit);
  }
  return failures;
}

/**
 * For each share group, every acknowledged write to a topic it reads is accepted at least once,
 * and no message (partition and offset) more often than `queue_accepts_max`.
 */
export function queue_delivery(
  writes: readonly WriteOp[],
  accepts: readonly AcceptOp[],
  bounds: CheckBounds,
): Failure[] {
  const failures: Failure[] = [];
  const by_group = new Map<string, AcceptOp[]>();
  for (const accept of accepts) {
    const list = by_group.get(accept.group);
    if (list) list.push(accept);
    else by_group.set(accept.group, [accept]);
  }
  for (const [group, list] of by_group) {
    const topics = new Set(list.map((a) => a.topic));
    const times = new Map<string, AcceptOp[]>();
    for (const accept of list) {
      const key = `${accept.topic}/${accept.partition}@${accept.offset}`;
      const seen = times.get(key);
      if (seen) seen.push(accept);
      else times.set(key, [accept]);
    }
    for (const [key, seen] of times) {
      if (seen.length <= bounds.queue_accepts_max) continue;
      failures.push({
        property: 'queue message accepted too often',
        detail: `${group}: ${key} accepted ${seen.length} times (at most ${bounds.queue_accepts_max})`,
        ops: seen,
      });
    }
    const accepted_values = new Set(list.map((a) => a.value));
    for (const write of writes) {
      if (write.outcome !== 'ok' || !topics.has(write.topic) || accepted_values.has(write.value)) continue;
      failures.push({
        property: 'queue message lost',
        detail: `${group}: ${write.value} (${write.topic}/${write.partition}@${write.offset}) never accepted`,
        ops: [write],
      });
    }
  }
  return failures;
}

/** The largest clock error of any fault that overlapped `from_ms`..`to_ms`. */
function clock_error_within(faults: readonly ClockFaultOp[], from_ms: number, to_ms: number): number {
  let error_ms = 0;
  for (const fault of faults) {
    if (fault.from_ms <= to_ms && fault.to_ms >= from_ms) error_ms = Math.max(error_ms, fault.error_ms);
  }
  return error_ms;
}

/**
 * Every acknowledged delayed message is delivered, and not before its time less the bound, and
 * less the error of any broker clock set wrong while it was pending (delays are measured on the
 * brokers' wall clocks).
 */
export function delayed_delivery(
  writes: readonly DelayedWriteOp[],
  reads: readonly DelayedReadOp[],
  clock_faults: readonly ClockFaultOp[],
  bounds: CheckBounds,
): Failure[] {
  const failures: Failure[] = [];
  const first_read = new Map<string, DelayedReadOp>();
  for (const read of reads) {
    const seen = first_read.get(read.value);
    if (!seen || read.at_ms < seen.at_ms) first_read.set(read.value, read);
  }
  for (const write of writes) {
    const read = first_read.get(write.value);
    if (!read) {
      if (write.outcome === 'ok') {
        failures.push({ property: 'delayed message lost', detail: `${write.value} never delivered`, ops: [write] });
      }
      continue;
    }
    const skew_ms = clock_error_within(clock_faults, write.invoked_ms, read.at_ms);
    if (read.at_ms < write.deliver_at_ms - bounds.delayed_early_ms - skew_ms) {
      failures.push({
        property: 'delayed message early',
        detail:
          `${write.value} due at ${write.deliver_at_ms} ms, delivered at ${read.at_ms} ms ` +
          `(clocks wrong by up to ${skew_ms} ms meanwhile)`,
        ops: [write, read],
      });
    }
  }
  return failures;
}

/**
 * Every confirmed AMQP publish is delivered and acknowledged at least once, none more often than
 * `queue_accepts_max`, and nothing is delivered that no one published.
 */
export function amqp_delivery(
  publishes: readonly AmqpPublishOp[],
  acks: readonly AmqpAckOp[],
  bounds: CheckBounds,
): Failure[] {
  const failures: Failure[] = [];
  const by_value = new Map<string, AmqpAckOp[]>();
  for (const ack of acks) {
    const seen = by_value.get(ack.value);
    if (seen) seen.push(ack);
    else by_value.set(ack.value, [ack]);
  }
  const published = new Set(publishes.map((p) => p.value));
  for (const publish of publishes) {
    if (publish.outcome === 'ok' && !by_value.has(publish.value))
      failures.push({
        property: 'AMQP confirmed message lost',
        detail: `${publish.queue}: ${publish.value} never delivered`,
        ops: [publish],
      });
  }
  for (const [value, seen] of by_value) {
    if (!published.has(value))
      failures.push({ property: 'AMQP message never published delivered', detail: value, ops: seen.slice(0, 3) });
    else if (seen.length > bounds.queue_accepts_max)
      failures.push({
        property: 'AMQP message acknowledged too often',
        detail: `${value} acknowledged ${seen.length} times (at most ${bounds.queue_accepts_max})`,
        ops: seen,
      });
  }
  return failures;
}
