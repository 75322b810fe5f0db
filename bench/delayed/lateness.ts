// Lateness of delayed messages as a consumer group sees them: each message's due time, its
// receipt, and the early, duplicate and unknown deliveries (which fail the benchmark).
import { Sluice } from '../../src/sdk/index.ts';
import {
  f0,
  number_in,
  PartFailed,
  percentile,
  PROGRESS_EVERY_MS,
  say,
  sleep,
  start_broker,
  with_timeout,
} from './support.ts';

const MAX_WAIT_MS = 20;

const JOIN_LIMIT_MS = 30_000;

let early_or_duplicates = false;

/** True once a part saw a message early, twice or unknown (the run then exits with 1). */
export function had_early_or_duplicates(): boolean {
  return early_or_duplicates;
}

/** Due times by message number, receipts and lateness in order of receipt. */
export class Lateness {
  readonly due: Float64Array;
  private readonly seen: Uint8Array;
  readonly lateness: Float64Array;
  /** Receipt time by message number (NaN until received). */
  readonly received_at: Float64Array;
  received = 0;
  early = 0;
  duplicates = 0;
  unknown = 0;
  last_receipt = 0;

  constructor(readonly expected: number) {
    this.due = new Float64Array(expected).fill(NaN);
    this.seen = new Uint8Array(expected);
    this.lateness = new Float64Array(expected);
    this.received_at = new Float64Array(expected).fill(NaN);
  }

  receive(i: number, now: number): void {
    if (i < 0 || i >= this.expected || Number.isNaN(this.due[i]!)) {
      this.unknown++;
      return;
    }
    if (this.seen[i]) {
      this.duplicates++;
      return;
    }
    this.seen[i] = 1;
    this.received_at[i] = now;
    const late = now - this.due[i]!;
    if (late < 0) this.early++;
    this.lateness[this.received++] = late;
    this.last_receipt = now;
  }

  sorted(): Float64Array {
    return this.lateness.slice(0, this.received).sort();
  }
}

/** A consumer group reading `topic` from the beginning into `tracker`; resolves once assigned. */
export async function start_consumer(sluice: Sluice, topic: string, tracker: Lateness) {
  let assigned!: () => void;
  const assignment = new Promise<void>((resolve) => (assigned = resolve));
  const consumer = sluice.consumer({
    groupId: `bench-delayed-${topic}`,
    maxWaitTimeInMs: MAX_WAIT_MS,
    onPartitionsAssigned: () => assigned(),
  });
  let crashed: unknown = null;
  consumer.on('consumer.crash', (event) => (crashed = event.payload.error ?? event.payload));
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => tracker.receive(number_in(message.value), Date.now()),
  });
  await with_timeout(assignment, JOIN_LIMIT_MS, 'the consumer group join');
  return { consumer, crashed: () => crashed };
}

/** Waits until every message arrived, the deadline passed or the consumer crashed. */
export async function wait_for_all(
  tracker: Lateness,
  deadline: number,
  crashed: () => unknown,
  what: string,
  sending_failed: () => unknown = () => null,
): Promise<void> {
  let next_progress = Date.now() + PROGRESS_EVERY_MS;
  while (tracker.received < tracker.expected) {
    const failure = crashed() ?? sending_failed();
    if (failure)
      throw new PartFailed(
        `${what}: ${failure instanceof Error ? failure.message : String(failure)} ` +
          `(${f0(tracker.received)} of ${f0(tracker.expected)} received)`,
      );
    if (Date.now() > deadline)
      throw new PartFailed(
        `${what}: time limit passed with ${f0(tracker.received)} of ${f0(tracker.expected)} messages received`,
      );
    if (Date.now() >= next_progress) {
      say(`  ... ${f0(tracker.received)} of ${f0(tracker.expected)} received`);
      next_progress += PROGRESS_EVERY_MS;
    }
    await sleep(20);
  }
  // A moment more, so a message delivered twice would be counted.
  await sleep(300);
}

export function lateness_figures(tracker: Lateness) {
  const sorted = tracker.sorted();
  return {
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    p999: percentile(sorted, 0.999),
    max: sorted.length > 0 ? sorted[sorted.length - 1]! : NaN,
    min: sorted.length > 0 ? sorted[0]! : NaN,
  };
}

export function check_counts(tracker: Lateness, what: string): void {
  if (tracker.early > 0 || tracker.duplicates > 0 || tracker.unknown > 0) {
    early_or_duplicates = true;
    say(
      `**${what}: ${tracker.early} early, ${tracker.duplicates} delivered twice, ` +
        `${tracker.unknown} unknown messages (all must be 0)**`,
    );
  }
}

/**
 * A part's broker, its one-partition topic, a consumer group reading it into `tracker` (joined)
 * and a connected producer.
 */
export async function open_part(topic: string, tracker: Lateness) {
  const { broker } = await start_broker();
  const sluice = new Sluice({ brokers: [broker.bootstrap], clientId: 'bench-delayed' });
  const admin = sluice.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
  await admin.disconnect();
  const { consumer, crashed } = await start_consumer(sluice, topic, tracker);
  const producer = sluice.producer();
  await producer.connect();
  return { broker, consumer, crashed, producer };
}
