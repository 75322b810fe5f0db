// The fault suite's compaction workload: an idempotent kafkajs producer writes keyed records (a
// tombstone now and then, each record's id in a header) to a compacted topic of small segments,
// whose cleaners (every second on the lab's brokers) compact every replica while the faults
// happen. At the end a fresh reader reads the topic from its start; the checker holds each key to
// a subsequence of its writes that reaches its latest acknowledged one
// (faults/checker/compaction_properties.ts).
import { setTimeout as sleep } from 'node:timers/promises';
import type { Kafka } from 'kafkajs';
import type { Sluice } from '../src/sdk/index.ts';
import type { CompactReadOp, CompactWriteOp, HistoryOp } from './checker/history.ts';
import { connect_idempotent, PARTITIONS, within } from './workload.ts';

export const COMPACTED_TOPIC = 'faults-compacted';
/** Small segments and a low dirty ratio: the cleaners rewrite segments all through the run. */
export const COMPACTED_CONFIGS: Readonly<Record<string, string>> = {
  'cleanup.policy': 'compact',
  'segment.bytes': String(16 * 1024),
  'min.cleanable.dirty.ratio': '0.05',
};
const KEYS = 60;
/** One write in this many is a tombstone (kept: delete.retention.ms outlasts the run). */
const TOMBSTONE_EVERY = 7;
const PACE_MS = 40;
/** The final reader gives up after this long. */
const READ_LIMIT_MS = 60_000;

export function compaction_workload(
  kafka: Kafka,
  sdk: Sluice,
  started_ms: number,
  until: () => boolean,
  history: HistoryOp[],
) {
  const writing = write_keys(kafka, started_ms, until, history);
  return {
    writing,
    /** Reads the whole topic back; returns how many partitions it could not read to their end. */
    async drain(): Promise<number> {
      await writing;
      const { reads, unread } = await read_back(sdk);
      history.push(...reads);
      return unread;
    },
  };
}

async function write_keys(kafka: Kafka, started_ms: number, until: () => boolean, history: HistoryOp[]) {
  let producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  if (!(await connect_idempotent(producer, until))) return;
  try {
    for (let n = 0; until(); n++) {
      const key_index = (n * 17) % KEYS;
      const op: CompactWriteOp = {
        kind: 'compact_write',
        key: `key-${key_index}`,
        id: `c-${n}`,
        tombstone: n % TOMBSTONE_EVERY === 0,
        outcome: 'unknown',
        invoked_ms: Date.now() - started_ms,
      };
      // Each key to one partition, one partition per send (kafkajs: workload.ts).
      const message = {
        key: op.key,
        value: op.tombstone ? null : op.id,
        headers: { id: op.id },
        partition: key_index % PARTITIONS,
      };
      try {
        await within(producer.send({ topic: COMPACTED_TOPIC, acks: -1, messages: [message] }));
        op.outcome = 'ok';
      } catch {
        await producer.disconnect().catch(() => undefined);
        producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
        if (!(await connect_idempotent(producer, until))) break;
      } finally {
        history.push(op);
      }
      await sleep(PACE_MS);
    }
  } finally {
    await producer.disconnect().catch(() => undefined);
  }
}

/** Every record of the topic, from its start to each partition's end as the read began. */
async function read_back(sdk: Sluice): Promise<{ reads: CompactReadOp[]; unread: number }> {
  const admin = sdk.admin();
  await admin.connect();
  const ends = new Map((await admin.fetchTopicOffsets(COMPACTED_TOPIC)).map((o) => [o.partition, Number(o.high)]));
  await admin.disconnect();
  const reads: CompactReadOp[] = [];
  const reached = new Map<number, number>();
  const done = () => [...ends].every(([partition, end]) => end === 0 || (reached.get(partition) ?? -1) >= end - 1);
  const reader = sdk.consumer({ maxWaitTimeInMs: 200 });
  await reader.subscribe({ topic: COMPACTED_TOPIC, fromBeginning: true });
  await reader.run({
    eachMessage: async ({ partition, message }) => {
      const offset = Number(message.offset);
      if (offset >= (ends.get(partition) ?? 0)) return;
      reached.set(partition, offset);
      const id = message.headers?.id?.toString() ?? '';
      reads.push({ kind: 'compact_read', partition, offset, key: message.key?.toString() ?? '', id });
    },
  });
  const deadline = Date.now() + READ_LIMIT_MS;
  while (!done() && Date.now() < deadline) await sleep(200);
  await reader.disconnect().catch(() => undefined);
  const unread = [...ends].filter(([partition, end]) => end > 0 && (reached.get(partition) ?? -1) < end - 1).length;
  return { reads, unread };
}
