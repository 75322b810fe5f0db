// The fault suite's produce workload: kafkajs idempotent producers (acks=all) writing unique values
// to a replicated topic while faults happen, every send recorded with its outcome; and at the end
// the whole topic read back by a fresh consumer, every record recorded as a read.
import { setTimeout as sleep } from 'node:timers/promises';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import type { HistoryOp, ReadOp, WriteOp } from './checker/history.ts';

export const TOPIC = 'faults';
export const PARTITIONS = 3;
const KEYS = 8;
/** A send not answered within this long is recorded as unknown (it may still be stored). */
const SEND_TIMEOUT_MS = 10_000;
const ISR_TIMEOUT_MS = 60_000;

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';

export function lab_kafka(bootstrap: string[], client_id: string): Kafka {
  return new Kafka({
    clientId: client_id,
    brokers: bootstrap,
    logLevel: logLevel.NOTHING,
    connectionTimeout: 1000,
    requestTimeout: 5000,
    retry: { initialRetryTime: 100, maxRetryTime: 1000, retries: 10 },
  });
}

/** A topic on all three brokers, acknowledged writes on at least two. */
export async function create_topic(
  kafka: Kafka,
  topic = TOPIC,
  partitions = PARTITIONS,
  configs: Readonly<Record<string, string>> = {},
): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  const entries = Object.entries({ 'min.insync.replicas': '2', ...configs }).map(([name, value]) => ({ name, value }));
  try {
    await admin.createTopics({
      topics: [{ topic, numPartitions: partitions, replicationFactor: 3, configEntries: entries }],
      waitForLeaders: true,
    });
  } finally {
    await admin.disconnect();
  }
}

/** `sent`, or a rejection once SEND_TIMEOUT_MS passed without an answer. */
export async function within<T>(sent: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${SEND_TIMEOUT_MS} ms`)), SEND_TIMEOUT_MS);
  });
  try {
    return await Promise.race([sent, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** An error's name, message and cause, shortened for the history. */
function error_text(error: unknown): string {
  if (!(error instanceof Error)) return String(error).slice(0, 200);
  const cause = error.cause instanceof Error ? ` (${error.cause.name}: ${error.cause.message})` : '';
  return `${error.name}: ${error.message}${cause}`.slice(0, 200);
}

/** A producer whose connect failed is connected again after this pause. */
const RECONNECT_PAUSE_MS = 500;

/**
 * Connects an idempotent kafkajs producer, trying again until it is connected; false when `until()`
 * ended first. A kafkajs 2.2.4 producer whose connect() failed at InitProducerId sends without a
 * producer id, no longer idempotent, and its retried sends are stored twice (finding 38): such a
 * producer must not send.
 */
export async function connect_idempotent(producer: Producer, until: () => boolean): Promise<boolean> {
  for (;;) {
    try {
      await producer.connect();
      return true;
    } catch {
      if (!until()) return false;
      await sleep(RECONNECT_PAUSE_MS);
    }
  }
}

/** Writes until `until()` is false, one send at a time, recording each in `history`. */
export async function produce_loop(
  kafka: Kafka,
  process_name: string,
  started_ms: number,
  until: () => boolean,
  history: HistoryOp[],
): Promise<void> {
  let producer: Producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  let n = 0;
  let sequence_broken = false;
  try {
    while (until()) {
      // kafkajs 2.2.4 takes a failed send's sequence numbers back and gives them to the next one;
      // a broker that stored the failed send refuses the reuse (OUT_OF_ORDER_SEQUENCE_NUMBER), and
      // every later send to that partition again. That error is fatal to an idempotent producer
      // (Kafka's own client needs a new one): as an application would, start a new producer.
      if (sequence_broken) {
        await producer.disconnect().catch(() => undefined);
        producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
        sequence_broken = false;
        if (!(await connect_idempotent(producer, until))) break;
      }
      const value = `${process_name}-${n}`;
      const key = `k${n % KEYS}`;
      n++;
      const invoked_ms = Date.now() - started_ms;
      const op: WriteOp = {
        kind: 'write',
        process: process_name,
        topic: TOPIC,
        partition: -1,
        key,
        value,
        outcome: 'unknown',
        invoked_ms,
        completed_ms: 0,
      };
      try {
        const [meta] = await within(producer.send({ topic: TOPIC, acks: -1, messages: [{ key, value }] }));
        op.outcome = 'ok';
        op.partition = meta!.partition;
        op.offset = Number(meta!.baseOffset);
      } catch (error) {
        op.outcome = 'unknown'; // refused after retries or timed out: it may still have been stored
        op.error = error_text(error);
        sequence_broken = (error as { type?: string }).type === 'OUT_OF_ORDER_SEQUENCE_NUMBER';
      } finally {
        op.completed_ms = Date.now() - started_ms;
        history.push(op);
      }
    }
  } finally {
    await producer.disconnect().catch(() => undefined);
  }
}

/** Reads every partition of the topic from the start to its high watermark, as reads by `reader`. */
export async function read_all(kafka: Kafka, reader: string, started_ms: number): Promise<ReadOp[]> {
  const admin = kafka.admin();
  await admin.connect();
  const ends = await admin.fetchTopicOffsets(TOPIC);
  await admin.disconnect();
  const wanted = new Map(ends.map((e) => [e.partition, Number(e.high)]));
  const reads: ReadOp[] = [];
  const consumer = kafka.consumer({ groupId: `faults-check-${Date.now()}` });
  await consumer.connect();
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
  const done = new Promise<void>((resolve) => {
    const check = () => {
      if ([...wanted.values()].every((high) => high === 0)) resolve();
    };
    check();
    void consumer.run({
      eachMessage: async ({ partition, message }) => {
        const offset = Number(message.offset);
        reads.push({
          kind: 'read',
          reader,
          topic: TOPIC,
          partition,
          offset,
          key: message.key?.toString() ?? null,
          value: message.value!.toString(),
          at_ms: Date.now() - started_ms,
        });
        if (offset + 1 >= (wanted.get(partition) ?? 0)) wanted.set(partition, 0);
        check();
      },
    });
  });
  await done;
  await consumer.disconnect();
  return reads;
}

/** Waits until every partition of the topic has all brokers in its ISR again. */
export async function wait_for_full_isr(kafka: Kafka, brokers: number): Promise<void> {
  if (!(await isr_whole_within(kafka, brokers, ISR_TIMEOUT_MS)))
    throw new Error(`ISR not whole after ${ISR_TIMEOUT_MS} ms`);
}

/** Whether every partition of the fault topic has all `brokers` in its ISR within `wait_ms`. */
export async function isr_whole_within(kafka: Kafka, brokers: number, wait_ms: number): Promise<boolean> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const deadline_ms = Date.now() + wait_ms;
    for (;;) {
      const { topics } = await admin.fetchTopicMetadata({ topics: [TOPIC] }).catch(() => ({ topics: [] }));
      const partitions = topics[0]?.partitions ?? [];
      if (partitions.length === PARTITIONS && partitions.every((p) => p.isr.length === brokers)) return true;
      if (Date.now() > deadline_ms) return false;
      await sleep(500);
    }
  } finally {
    await admin.disconnect();
  }
}

/** Each partition's high watermark. */
export async function high_watermarks(kafka: Kafka): Promise<Map<number, number>> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    return new Map((await admin.fetchTopicOffsets(TOPIC)).map((o) => [o.partition, Number(o.high)]));
  } finally {
    await admin.disconnect();
  }
}

/** A drain gives up once this long passes with nothing more received... */
export const DRAIN_STALL_MS = 60_000;
/** ...or after this long in all, so a run stays bounded. */
export const DRAIN_MAX_MS = 600_000;

/**
 * Waits until every one of `wanted` is in `received`, for as long as more keep arriving: a
 * backlog built while faults slowed the consumers is read to its end, a stalled one given up
 * after DRAIN_STALL_MS. Returns how many never came.
 */
export async function drain_until_received(wanted: readonly string[], received: ReadonlySet<string>): Promise<number> {
  const missing = () => {
    let n = 0;
    for (const value of wanted) if (!received.has(value)) n++;
    return n;
  };
  const started_ms = Date.now();
  let left = missing();
  let progress_ms = started_ms;
  while (left > 0 && Date.now() - progress_ms < DRAIN_STALL_MS && Date.now() - started_ms < DRAIN_MAX_MS) {
    await sleep(500);
    const now_left = missing();
    if (now_left < left) progress_ms = Date.now();
    left = now_left;
  }
  return left;
}
