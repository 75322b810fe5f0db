// ShareFetch 1-2 (KIP-932): acknowledges what the request carries, then acquires records for the
// member from the partitions of its share session (the session lists only what changed), waiting
// up to max_wait_ms when nothing is available. Records are returned as whole stored batches with
// the acquired ranges beside them.
import { SHARE_FETCH } from '../../../protocol/kafka/messages/78_share_fetch.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import type { RequestOf, ResponseIn, Row } from '../../../protocol/kafka/schema.ts';
import { BrokerError, type FetchedPartition, type TopicPartition } from '../../../core/index.ts';
import { kafka_handler, type RequestContext } from '../handler.ts';
import { require_allowed } from '../authorize.ts';
import { error_message, has_error_code, kafka_error_code } from '../error_map.ts';
import { long_poll } from '../long_poll.ts';
import { ShareSessions } from '../share_sessions.ts';
import {
  acknowledge,
  key_of,
  refuse_renewal,
  resolve_topics,
  top_level_error,
  type PartitionAcks,
} from './share_common.ts';

/** A share fetch long poll never waits longer than this. */
const SHARE_FETCH_WAIT_MS_MAX = 30_000;
const SHARE_FETCH_BYTES_MAX = 64 * 1024 * 1024;
/** Records asked for when the request says 0 (v1 clients may). */
const SHARE_FETCH_RECORDS_DEFAULT = 500;
const EMPTY_RECORDS = Buffer.alloc(0);

type Request = RequestOf<typeof SHARE_FETCH>;
type PartitionResponse = Row<Row<ResponseIn<typeof SHARE_FETCH>['responses']>['partitions']>;

/** The answer's rows, one per partition named by the acknowledgements or the fetch. */
class ResponseRows {
  private readonly rows = new Map<string, { topic_id: string; row: PartitionResponse }>();

  constructor(private readonly ctx: RequestContext) {}

  for(topic: string, topic_id: string, partition: number): PartitionResponse {
    const key = key_of({ topic, partition });
    let entry = this.rows.get(key);
    if (!entry) {
      const row = {
        partition_index: partition,
        error_code: 0,
        error_message: null,
        acknowledge_error_code: 0,
        acknowledge_error_message: null,
        current_leader: { leader_id: this.ctx.core.node_id, leader_epoch: 0 },
        records: EMPTY_RECORDS,
        acquired_records: [],
      };
      this.rows.set(key, (entry = { topic_id, row }));
    }
    return entry.row;
  }

  by_topic(): Array<{ topic_id: string; partitions: PartitionResponse[] }> {
    const topics = new Map<string, PartitionResponse[]>();
    for (const { topic_id, row } of this.rows.values()) {
      let partitions = topics.get(topic_id);
      if (!partitions) topics.set(topic_id, (partitions = []));
      partitions.push(row);
    }
    return [...topics].map(([topic_id, partitions]) => ({ topic_id, partitions }));
  }
}

async function apply_acknowledgements(
  ctx: RequestContext,
  group_id: string,
  member_id: string,
  known: PartitionAcks[],
  rows: ResponseRows,
): Promise<void> {
  const results = await acknowledge(ctx, group_id, member_id, known);
  for (const p of known) {
    const error = results.get(key_of(p));
    if (error)
      Object.assign(rows.for(p.topic, p.topic_id, p.partition), {
        acknowledge_error_code: kafka_error_code(error),
        acknowledge_error_message: error_message(error),
      });
    else if (results.has(key_of(p))) rows.for(p.topic, p.topic_id, p.partition);
  }
}

function forgotten_partitions(ctx: RequestContext, request: Request): TopicPartition[] {
  return request.forgotten_topics_data.flatMap((t) => {
    const name = ctx.core.topics.get_by_id(t.topic_id)?.name;
    return name ? t.partitions.map((partition) => ({ topic: name, partition })) : [];
  });
}

function add_fetched(ctx: RequestContext, fetched: FetchedPartition[], rows: ResponseRows): void {
  for (const f of fetched) {
    if (f.acquired.length === 0 && !f.error) continue;
    const row = rows.for(f.topic, ctx.core.topics.get(f.topic)?.id ?? '', f.partition);
    if (f.error) Object.assign(row, { error_code: kafka_error_code(f.error), error_message: error_message(f.error) });
    row.records = f.batches.length > 0 ? f.batches : EMPTY_RECORDS;
    row.acquired_records = f.acquired.map((r) => ({
      first_offset: r.first_offset,
      last_offset: r.last_offset,
      delivery_count: r.delivery_count,
    }));
  }
}

export const share_fetch_handler = kafka_handler(
  SHARE_FETCH,
  { min: 1, max: 2, notes: 'share sessions; acknowledgements piggybacked; lock renewal (v2) refused' },
  async (request, ctx) => {
    const group_id = request.group_id ?? '';
    const member_id = request.member_id ?? '';
    const lock_ms = ctx.core.shares.record_lock_duration_ms;
    const rows = new ResponseRows(ctx);
    try {
      refuse_renewal(request.is_renew_ack);
      require_allowed(ctx, 'read', 'group', group_id);
      ctx.core.shares.check_member(group_id, member_id); // no session for strangers
      const session = ctx.share_sessions.use(group_id, member_id, request.share_session_epoch, true);
      const { known, unknown } = resolve_topics(request.topics, ctx);
      for (const u of unknown)
        Object.assign(rows.for('', u.topic_id, u.partition), {
          error_code: ErrorCode.UNKNOWN_TOPIC_ID,
          error_message: `unknown topic id ${u.topic_id}`,
        });
      await apply_acknowledgements(ctx, group_id, member_id, known, rows);
      if (session) {
        ShareSessions.add(session, known);
        ShareSessions.forget(session, forgotten_partitions(ctx, request));
        const fetched = await fetch_with_wait(ctx, group_id, member_id, [...session.partitions.values()], request);
        // A partition that is gone or not subscribed is reported once and leaves the session, so
        // later fetches wait for records instead of answering the same error at once. One that
        // failed for now (a full disk, a state write refused) stays: the client keeps it in its
        // session, and leaving it out would starve the member once the fault passes.
        ShareSessions.forget(
          session,
          fetched.filter((f) => leaves_session(f.error)),
        );
        add_fetched(ctx, fetched, rows);
      }
    } catch (error) {
      if (!has_error_code(error)) throw error;
      return {
        throttle_time_ms: 0,
        ...top_level_error(error),
        acquisition_lock_timeout_ms: lock_ms,
        responses: [],
        node_endpoints: [],
      };
    }
    return {
      throttle_time_ms: 0,
      error_code: 0,
      error_message: null,
      acquisition_lock_timeout_ms: lock_ms,
      responses: rows.by_topic(),
      node_endpoints: [
        {
          node_id: ctx.core.node_id,
          host: ctx.listener.advertised_host,
          port: ctx.listener.advertised_port,
          rack: null,
        },
      ],
    };
  },
);

/** Errors that end a partition's place in the session: it is gone, or not the member's. */
function leaves_session(error: Error | null): boolean {
  return (
    error instanceof BrokerError && (error.kind === 'unknown_topic_or_partition' || error.kind === 'invalid_request')
  );
}

/** Fetches; when nothing was acquired, waits for new data or released records until max_wait_ms. */
async function fetch_with_wait(
  ctx: RequestContext,
  group_id: string,
  member_id: string,
  partitions: TopicPartition[],
  request: Request,
): Promise<FetchedPartition[]> {
  const clock = ctx.core.monotonic_clock;
  const deadline = clock.now_ms() + Math.min(Math.max(0, request.max_wait_ms), SHARE_FETCH_WAIT_MS_MAX);
  const records_max = Math.max(1, request.max_records || SHARE_FETCH_RECORDS_DEFAULT);
  const bytes_max = Math.min(Math.max(1, request.max_bytes), SHARE_FETCH_BYTES_MAX);
  for (;;) {
    const fetched = await ctx.core.shares.fetch(group_id, member_id, partitions, records_max, bytes_max);
    const remaining = deadline - clock.now_ms();
    if (
      fetched.some((f) => f.acquired.length > 0 || f.error) ||
      remaining <= 0 ||
      ctx.closing.raised ||
      partitions.length === 0
    )
      return fetched;
    await wait_for_records(ctx, group_id, partitions, remaining);
  }
}

/** Until new records arrive in a partition of the session, or the group's records come back. */
function wait_for_records(
  ctx: RequestContext,
  group_id: string,
  partitions: TopicPartition[],
  wait_ms: number,
): Promise<void> {
  return long_poll(wait_ms, ctx.closing, (wake) => {
    const unsubscribes = [ctx.core.shares.on_available(group_id, wake)];
    for (const { topic, partition } of partitions) {
      try {
        unsubscribes.push(ctx.core.partitions.reader_now(topic, partition).on_high_watermark(wake));
      } catch {
        // a deleted topic: the next fetch reports it
      }
    }
    return unsubscribes;
  });
}
