// Fetch 4-17: stored batches returned as they are. A long poll waits until min_bytes are available
// or max_wait_ms passes, woken by high-watermark advances. A read_committed fetch stops at the last
// stable offset and lists the aborted transactions of what it returns (the client drops their
// records); every consumer's answer carries the last stable offset, as Kafka's do (a broker's view
// of a partition it reads remotely learns it so). Consumers may fetch within a session (KIP-227,
// fetch_sessions.ts): the session holds the partitions and their offsets, a request names only
// what changed and the answer only the partitions with news. v13+ names topics by id. A fetch with
// a replica id is a follower's (never in a session): it reads up to the log end, reports its
// progress to the leader, and is woken by writes. Authorization: READ on each topic,
// CLUSTER_ACTION for a follower.
import { FETCH } from '../../../protocol/kafka/messages/01_fetch.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import type { RequestOf, ResponseIn, Row } from '../../../protocol/kafka/schema.ts';
import type { ConsumerSource, PartitionTransactions } from '../../../core/index.ts';
import { batch_base_offset, batch_last_offset } from '../../../format/batch_layout.ts';
import { kafka_handler, type RequestContext, type ShutdownSignal } from '../handler.ts';
import { kafka_error_code } from '../error_map.ts';
import { long_poll } from '../long_poll.ts';
import { allowed, allowed_on_cluster, REFUSED } from '../authorize.ts';
import { answered, session_key, session_partitions, type AskedPartition, type SessionUse } from '../fetch_sessions.ts';
import { ZERO_UUID } from '../../../protocol/kafka/codec.ts';

/** A long poll never waits longer than this, whatever the client asks. */
const FETCH_WAIT_MS_MAX = 30_000;
/** Bytes returned by one fetch at most, whatever the client asks. */
const FETCH_BYTES_MAX = 64 * 1024 * 1024;
/** No batches is an empty record set, never null: Kafka sends size 0 and librdkafka rejects -1. */
const EMPTY_RECORDS = Buffer.alloc(0);
const READ_COMMITTED = 1;

type PartitionResponse = Row<Row<ResponseIn<typeof FETCH>['responses']>['partitions']>;

interface Wanted {
  topic: string;
  topic_id: string;
  partition: number;
  offset: number;
  bytes_max: number;
  source: ConsumerSource | null;
  /** Set for a consumer's fetch (not a follower's). */
  txns: PartitionTransactions | null;
  read_committed: boolean;
  error_code: number;
}

type FetchRequest = RequestOf<typeof FETCH>;

/** A follower's replica id: in the request body before v15, in its replica state since. */
function replica_id_of(request: FetchRequest, version: number): number {
  return version >= 15 ? (request.replica_state?.replica_id ?? -1) : request.replica_id;
}

/** The partitions a request names, topics by name (v12-) or by id (v13+; an unknown id is named so). */
function asked_of(request: FetchRequest, ctx: RequestContext): AskedPartition[] {
  const by_id = ctx.version >= 13;
  return request.topics.flatMap((t) => {
    const topic = by_id ? (ctx.core.topics.get_by_id(t.topic_id)?.name ?? null) : t.topic;
    const topic_id = by_id ? t.topic_id : (ctx.core.topics.get(t.topic)?.id ?? ZERO_UUID);
    return t.partitions.map((p) => ({
      topic,
      topic_id,
      partition: p.partition,
      fetch_offset: p.fetch_offset,
      bytes_max: Math.max(0, p.partition_max_bytes),
      current_leader_epoch: p.current_leader_epoch,
    }));
  });
}

/** The forgotten partitions of an incremental request, by session key. */
function forgotten_of(request: FetchRequest, ctx: RequestContext): string[] {
  const by_id = ctx.version >= 13;
  return request.forgotten_topics_data.flatMap((t) => {
    const topic = by_id ? (ctx.core.topics.get_by_id(t.topic_id)?.name ?? t.topic_id) : t.topic;
    return t.partitions.map((p) => session_key(topic, p));
  });
}

function plan(asked: readonly AskedPartition[], request: FetchRequest, ctx: RequestContext): Wanted[] {
  const replica_id = replica_id_of(request, ctx.version);
  // A follower's fetch is a broker's (CLUSTER_ACTION); a consumer's needs READ on each topic.
  const replica_refused = replica_id >= 0 && !allowed_on_cluster(ctx, 'cluster_action');
  // Checked once per topic, not per partition (a session may hold thousands).
  const readable = new Map<string, boolean>();
  const may_read = (topic: string) => {
    let ok = readable.get(topic);
    if (ok === undefined) readable.set(topic, (ok = allowed(ctx, 'read', 'topic', topic)));
    return ok;
  };
  return asked.map((a) => {
    const entry: Wanted = {
      topic: a.topic ?? '',
      topic_id: a.topic_id,
      partition: a.partition,
      offset: a.fetch_offset,
      bytes_max: a.bytes_max,
      source: null,
      txns: null,
      read_committed: replica_id < 0 && request.isolation_level === READ_COMMITTED,
      error_code: 0,
    };
    if (a.topic === null) return { ...entry, error_code: ErrorCode.UNKNOWN_TOPIC_ID };
    const refused = replica_id >= 0 ? replica_refused : !may_read(a.topic);
    if (refused) return { ...entry, error_code: replica_id >= 0 ? REFUSED.cluster : REFUSED.topic };
    try {
      entry.source =
        replica_id >= 0
          ? ctx.core.partitions.replica_source(replica_id, a.topic, a.partition, a.fetch_offset, a.current_leader_epoch)
          : ctx.core.partitions.consumer_source(a.topic, a.partition);
      if (replica_id < 0) entry.txns = ctx.core.partitions.transactions(a.topic, a.partition);
    } catch (error) {
      entry.error_code = kafka_error_code(error);
    }
    return entry;
  });
}

async function read_once(
  wanted: Wanted[],
  total_max: number,
  replica: boolean,
): Promise<{ rows: PartitionResponse[]; bytes: number }> {
  let bytes = 0;
  const out: PartitionResponse[] = [];
  for (const entry of wanted) {
    const row: PartitionResponse = {
      partition_index: entry.partition,
      error_code: entry.error_code,
      high_watermark: -1,
      last_stable_offset: -1,
      log_start_offset: -1,
      aborted_transactions: [],
      preferred_read_replica: -1,
      records: EMPTY_RECORDS,
    };
    out.push(row);
    const source = entry.source;
    if (!source || entry.error_code !== 0) continue;
    row.high_watermark = source.high_watermark;
    row.last_stable_offset = stable_offset(entry, row.high_watermark);
    row.log_start_offset = source.log_start_offset;
    const budget = Math.min(entry.bytes_max, total_max - bytes);
    if (budget <= 0 && bytes > 0) continue;
    try {
      const result = await source.read(entry.offset, Math.max(budget, 1), replica ? 'log_end' : 'high_watermark');
      const stable = stable_offset(entry, result.high_watermark);
      row.high_watermark = result.high_watermark;
      row.last_stable_offset = stable;
      const batches =
        entry.txns && entry.read_committed
          ? committed_part(entry.txns, entry.offset, result.batches, stable, row)
          : result.batches;
      if (batches.length > 0) {
        row.records = batches;
        for (const batch of batches) bytes += batch.length;
      }
    } catch (error) {
      row.error_code = kafka_error_code(error);
    }
  }
  return { rows: out, bytes };
}

/** What an answer says of the last stable offset: never past the high watermark it reports. */
function stable_offset(entry: Wanted, high_watermark: number): number {
  return entry.txns ? Math.min(entry.txns.last_stable_offset(), high_watermark) : high_watermark;
}

/**
 * What a read_committed consumer may see of `batches`: those below the last stable offset (a
 * batch never straddles it: it is a batch's base offset or the high watermark), with the aborted
 * transactions among them listed in `row`.
 */
function committed_part(
  txns: PartitionTransactions,
  from: number,
  batches: Buffer[],
  stable: number,
  row: PartitionResponse,
) {
  const kept = batches.filter((batch) => batch_base_offset(batch, 0) < stable);
  if (kept.length > 0)
    row.aborted_transactions = txns.aborted_in(from, batch_last_offset(kept[kept.length - 1]!, 0) + 1);
  return kept;
}

/** Until a partition asked for moves (its high watermark, or for a follower any write). */
function wait_for_data(wanted: Wanted[], wait_ms: number, closing: ShutdownSignal, replica: boolean): Promise<void> {
  return long_poll(wait_ms, closing, (wake) =>
    wanted.flatMap(({ source }) =>
      source ? [replica ? source.on_progress(wake) : source.on_high_watermark(wake)] : [],
    ),
  );
}

function by_topic(
  wanted: readonly Wanted[],
  rows: readonly PartitionResponse[],
): Array<{ topic: string; topic_id: string; partitions: PartitionResponse[] }> {
  const topics = new Map<string, { topic: string; topic_id: string; partitions: PartitionResponse[] }>();
  rows.forEach((row, i) => {
    const { topic, topic_id } = wanted[i]!;
    const key = `${topic}\u0000${topic_id}`;
    let entry = topics.get(key);
    if (!entry) topics.set(key, (entry = { topic, topic_id, partitions: [] }));
    entry.partitions.push(row);
  });
  return [...topics.values()];
}

export const fetch_handler = kafka_handler(
  FETCH,
  {
    min: 4,
    max: 17,
    notes:
      'long poll within `max_wait_ms` (at most 30 s) and `min_bytes`; `read_committed` stops at the last stable ' +
      'offset and lists aborted transactions; fetch sessions (KIP-227, at most 1,000 per listener); topics by id ' +
      "from v13; a replica id marks a follower's fetch (reads to the log end, checks its leader epoch)",
  },
  async (request, ctx) => {
    const clock = ctx.core.monotonic_clock;
    const asked = asked_of(request, ctx);
    const replica = replica_id_of(request, ctx.version) >= 0;
    let use: SessionUse;
    try {
      use = replica
        ? { kind: 'none' }
        : ctx.fetch_sessions.use(request.session_id, request.session_epoch, asked.length);
    } catch (error) {
      return { throttle_time_ms: 0, error_code: kafka_error_code(error), session_id: 0, responses: [] };
    }
    const fetched = use.kind === 'none' ? asked : session_partitions(use, asked, forgotten_of(request, ctx));
    const wanted = plan(fetched, request, ctx);
    const deadline = clock.now_ms() + Math.min(Math.max(0, request.max_wait_ms), FETCH_WAIT_MS_MAX);
    const total_max = Math.min(Math.max(1, request.max_bytes), FETCH_BYTES_MAX);
    const min_bytes = Math.max(0, request.min_bytes);
    for (;;) {
      const result = await read_once(wanted, total_max, replica);
      const failed = result.rows.some((row) => row.error_code !== ErrorCode.NONE);
      const remaining = deadline - clock.now_ms();
      if (result.bytes >= min_bytes || failed || remaining <= 0 || ctx.closing.raised) {
        if (use.kind === 'none')
          return { throttle_time_ms: 0, error_code: 0, session_id: 0, responses: by_topic(wanted, result.rows) };
        const told = answered(use, wanted, result.rows);
        const rows = told.map((i) => result.rows[i]!);
        const responses = by_topic(
          told.map((i) => wanted[i]!),
          rows,
        );
        return { throttle_time_ms: 0, error_code: 0, session_id: use.session.id, responses };
      }
      await wait_for_data(wanted, remaining, ctx.closing, replica);
    }
  },
);
