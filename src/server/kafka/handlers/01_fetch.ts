// Fetch 4-12: stored batches returned as they are. A long poll waits until min_bytes are available
// or max_wait_ms passes, woken by high-watermark advances. The last stable offset is the high
// watermark (no transactions yet); no fetch sessions (session id 0). A fetch with a replica id is a
// follower's: it reads up to the log end, reports its progress to the leader, and is woken by writes.
import { FETCH } from '../../../protocol/kafka/messages/01_fetch.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import type { PartitionLog } from '../../../storage/index.ts';
import type { KafkaHandler, RequestContext, ShutdownSignal } from '../handler.ts';
import { kafka_error_code } from '../error_map.ts';
import { type Row, rows, versions } from './util.ts';

/** A long poll never waits longer than this, whatever the client asks. */
const FETCH_WAIT_MS_MAX = 30_000;
/** Bytes returned by one fetch at most, whatever the client asks. */
const FETCH_BYTES_MAX = 64 * 1024 * 1024;
/** No batches is an empty record set, never null: Kafka sends size 0 and librdkafka rejects -1. */
const EMPTY_RECORDS = Buffer.alloc(0);

interface Wanted {
  topic: string;
  partition: number;
  offset: number;
  bytes_max: number;
  log: PartitionLog | null;
  error_code: number;
}

function plan(request: Row, ctx: RequestContext): Wanted[] {
  const wanted: Wanted[] = [];
  const replica_id = (request.replica_id as number | undefined) ?? -1;
  for (const topic of rows(request.topics)) {
    for (const partition of rows(topic.partitions)) {
      const entry: Wanted = {
        topic: topic.topic as string,
        partition: partition.partition as number,
        offset: partition.fetch_offset as number,
        bytes_max: Math.max(0, partition.partition_max_bytes as number),
        log: null,
        error_code: 0,
      };
      try {
        entry.log =
          replica_id >= 0
            ? ctx.broker.replica_fetch(replica_id, entry.topic, entry.partition, entry.offset, (partition.current_leader_epoch as number | undefined) ?? -1)
            : ctx.broker.read_log(entry.topic, entry.partition);
      } catch (error) {
        entry.error_code = kafka_error_code(error);
      }
      wanted.push(entry);
    }
  }
  return wanted;
}

async function read_once(wanted: Wanted[], total_max: number, isolation: 'high_watermark' | 'log_end'): Promise<{ rows: Row[]; bytes: number }> {
  let bytes = 0;
  const out: Row[] = [];
  for (const entry of wanted) {
    const row: Row = { partition_index: entry.partition, error_code: entry.error_code, high_watermark: -1, last_stable_offset: -1, log_start_offset: -1, aborted_transactions: [], preferred_read_replica: -1, records: EMPTY_RECORDS };
    out.push(row);
    const log = entry.log;
    if (!log || entry.error_code !== 0) continue;
    row.high_watermark = row.last_stable_offset = log.high_watermark;
    row.log_start_offset = log.log_start_offset;
    const budget = Math.min(entry.bytes_max, total_max - bytes);
    if (budget <= 0 && bytes > 0) continue;
    try {
      const result = await log.read(entry.offset, Math.max(budget, 1), isolation);
      row.high_watermark = row.last_stable_offset = result.high_watermark;
      if (result.batches.length > 0) {
        row.records = result.batches;
        bytes += result.bytes;
      }
    } catch (error) {
      row.error_code = kafka_error_code(error);
    }
  }
  return { rows: out, bytes };
}

function wait_for_data(wanted: Wanted[], wait_ms: number, closing: ShutdownSignal, replica: boolean): Promise<void> {
  return new Promise((resolve) => {
    const unsubscribes: Array<() => void> = [];
    const done = () => {
      clearTimeout(timer);
      for (const unsubscribe of unsubscribes) unsubscribe();
      resolve();
    };
    const timer = setTimeout(done, wait_ms);
    for (const entry of wanted) {
      if (entry.log) unsubscribes.push(replica ? entry.log.on_progress(done) : entry.log.on_high_watermark(done));
    }
    unsubscribes.push(closing.on_raise(done));
  });
}

export const fetch_handler: KafkaHandler = {
  api: FETCH,
  ...versions(FETCH, 4, 12),
  async handle(request, ctx) {
    const wanted = plan(request, ctx);
    const deadline = Date.now() + Math.min(Math.max(0, request.max_wait_ms as number), FETCH_WAIT_MS_MAX);
    const total_max = Math.min(Math.max(1, request.max_bytes as number), FETCH_BYTES_MAX);
    const min_bytes = Math.max(0, request.min_bytes as number);
    const replica = ((request.replica_id as number | undefined) ?? -1) >= 0;
    for (;;) {
      const result = await read_once(wanted, total_max, replica ? 'log_end' : 'high_watermark');
      const failed = result.rows.some((row) => row.error_code !== ErrorCode.NONE);
      const remaining = deadline - Date.now();
      if (result.bytes >= min_bytes || failed || remaining <= 0 || ctx.closing.raised) {
        const by_topic = new Map<string, Row[]>();
        result.rows.forEach((row, i) => {
          const topic = wanted[i]!.topic;
          if (!by_topic.has(topic)) by_topic.set(topic, []);
          by_topic.get(topic)!.push(row);
        });
        return {
          throttle_time_ms: 0,
          error_code: 0,
          session_id: 0,
          responses: [...by_topic].map(([topic, partitions]) => ({ topic, partitions })),
        };
      }
      await wait_for_data(wanted, remaining, ctx.closing, replica);
    }
  },
};
