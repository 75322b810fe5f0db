// Share groups over the Kafka protocol (KIP-932): ShareGroupHeartbeat 1, ShareGroupDescribe 1,
// ShareFetch 1-2 and ShareAcknowledge 1-2, on the broker's ShareCoordinator. Topics travel by id.
// Renewing locks (ShareFetch/ShareAcknowledge v2 is_renew_ack, acknowledge type 4) is refused.
import { SHARE_GROUP_HEARTBEAT } from '../../../protocol/kafka/messages/76_share_group_heartbeat.ts';
import { SHARE_GROUP_DESCRIBE } from '../../../protocol/kafka/messages/77_share_group_describe.ts';
import { SHARE_FETCH } from '../../../protocol/kafka/messages/78_share_fetch.ts';
import { SHARE_ACKNOWLEDGE } from '../../../protocol/kafka/messages/79_share_acknowledge.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import { BrokerError } from '../../../broker/errors.ts';
import type { AcknowledgeBatch, FetchedPartition, TopicPartition } from '../../../broker/queues/share_coordinator.ts';
import type { AckTypeCode } from '../../../broker/queues/share_partition.ts';
import type { KafkaHandler, RequestContext } from '../handler.ts';
import { error_message, kafka_error_code } from '../error_map.ts';
import { ShareSessions } from '../share_sessions.ts';
import { type Row, rows, versions } from './util.ts';

/** A share fetch long poll never waits longer than this. */
const SHARE_FETCH_WAIT_MS_MAX = 30_000;
const SHARE_FETCH_BYTES_MAX = 64 * 1024 * 1024;
const EMPTY_RECORDS = Buffer.alloc(0);

function top_level_error(error: unknown) {
  return { error_code: kafka_error_code(error), error_message: error_message(error) };
}

export const share_group_heartbeat_handler: KafkaHandler = {
  api: SHARE_GROUP_HEARTBEAT,
  ...versions(SHARE_GROUP_HEARTBEAT, 1, 1),
  handle(request, ctx) {
    const base = { throttle_time_ms: 0, error_code: 0, error_message: null, member_id: request.member_id as string, member_epoch: -1, heartbeat_interval_ms: 0, assignment: null };
    try {
      const result = ctx.broker.shares.heartbeat(
        {
          group_id: request.group_id as string,
          member_id: request.member_id as string,
          member_epoch: request.member_epoch as number,
          subscribed_topic_names: request.subscribed_topic_names as string[] | null,
          client_id: ctx.header.client_id ?? '',
          client_host: ctx.client_host,
        },
        Date.now(),
      );
      if (result.member_epoch === -1) ctx.share_sessions.end(request.group_id as string, request.member_id as string);
      const topic_partitions = [...result.assignment].map(([name, partitions]) => ({ topic_id: ctx.broker.topics.get(name)!.id, partitions }));
      return { ...base, member_id: result.member_id, member_epoch: result.member_epoch, heartbeat_interval_ms: result.heartbeat_interval_ms, assignment: result.member_epoch === -1 ? null : { topic_partitions } };
    } catch (error) {
      return { ...base, ...top_level_error(error) };
    }
  },
};

export const share_group_describe_handler: KafkaHandler = {
  api: SHARE_GROUP_DESCRIBE,
  ...versions(SHARE_GROUP_DESCRIBE, 1, 1),
  handle(request, ctx) {
    const groups = (request.group_ids as string[]).map((group_id) => {
      const base = { error_code: 0, error_message: null, group_id, group_state: 'Dead', group_epoch: -1, assignment_epoch: -1, assignor_name: 'simple', members: [] as Row[] };
      if (!ctx.broker.is_share_coordinator) return { ...base, error_code: ErrorCode.NOT_COORDINATOR, error_message: `broker ${ctx.broker.node_id} is not the share-group coordinator` };
      const described = ctx.broker.shares.describe(group_id);
      if (!described) return { ...base, error_code: ErrorCode.GROUP_ID_NOT_FOUND, error_message: `share group ${group_id} does not exist` };
      return {
        ...base,
        group_state: described.members.length > 0 ? 'Stable' : 'Empty',
        group_epoch: described.epoch,
        assignment_epoch: described.epoch,
        members: described.members.map((m) => ({
          member_id: m.member_id,
          rack_id: null,
          member_epoch: m.member_epoch,
          client_id: m.client_id,
          client_host: m.client_host,
          subscribed_topic_names: m.topics,
          assignment: { topic_partitions: [...m.assignment].map(([name, partitions]) => ({ topic_id: ctx.broker.topics.get(name)!.id, topic_name: name, partitions })) },
        })),
      };
    });
    return { throttle_time_ms: 0, groups };
  },
};

interface PartitionAcks extends TopicPartition {
  topic_id: string;
  batches: AcknowledgeBatch[];
}

/** Topic ids to names; partitions of unknown ids are answered UNKNOWN_TOPIC_ID. */
function resolve_topics(topics: Row[], ctx: RequestContext): { known: PartitionAcks[]; unknown: Array<{ topic_id: string; partition: number }> } {
  const known: PartitionAcks[] = [];
  const unknown: Array<{ topic_id: string; partition: number }> = [];
  for (const topic of topics) {
    const topic_id = topic.topic_id as string;
    const name = ctx.broker.topics.get_by_id(topic_id)?.name;
    for (const partition of rows(topic.partitions)) {
      const index = partition.partition_index as number;
      if (!name) {
        unknown.push({ topic_id, partition: index });
        continue;
      }
      const batches = rows(partition.acknowledgement_batches).map((b) => ({
        first_offset: b.first_offset as number,
        last_offset: b.last_offset as number,
        types: b.acknowledge_types as AckTypeCode[],
        reason: (b.sluice_failure_reason as string | null | undefined) ?? null,
        release_delay_ms: (b.sluice_release_delay_ms as number | undefined) ?? -1,
      }));
      known.push({ topic: name, topic_id, partition: index, batches });
    }
  }
  return { known, unknown };
}

function check_ack_types(partitions: PartitionAcks[]): void {
  for (const p of partitions) {
    for (const b of p.batches) {
      if (b.types.some((t) => t < 0 || t > 3)) throw new BrokerError('invalid_request', `acknowledge type ${b.types.find((t) => t < 0 || t > 3)} is not supported (0 gap, 1 accept, 2 release, 3 reject)`);
    }
  }
}

async function acknowledge(ctx: RequestContext, group_id: string, member_id: string, partitions: PartitionAcks[]): Promise<Map<string, unknown>> {
  const with_acks = partitions.filter((p) => p.batches.length > 0);
  if (with_acks.length === 0) return new Map();
  return ctx.broker.shares.acknowledge(group_id, member_id, with_acks, Date.now());
}

const key_of = (p: TopicPartition) => `${p.topic}\u0000${p.partition}`;

export const share_fetch_handler: KafkaHandler = {
  api: SHARE_FETCH,
  ...versions(SHARE_FETCH, 1, 2),
  async handle(request, ctx) {
    const group_id = (request.group_id as string | null) ?? '';
    const member_id = (request.member_id as string | null) ?? '';
    const lock_ms = ctx.broker.share_settings.partition.record_lock_duration_ms;
    const answer = (error: unknown) => ({ throttle_time_ms: 0, ...top_level_error(error), acquisition_lock_timeout_ms: lock_ms, responses: [], node_endpoints: [] });
    const response_rows = new Map<string, { topic_id: string; row: Row }>();
    const row_for = (topic: string, topic_id: string, partition: number) => {
      const key = key_of({ topic, partition });
      let entry = response_rows.get(key);
      if (!entry) {
        entry = { topic_id, row: { partition_index: partition, error_code: 0, error_message: null, acknowledge_error_code: 0, acknowledge_error_message: null, current_leader: { leader_id: ctx.broker.node_id, leader_epoch: 0 }, records: EMPTY_RECORDS, acquired_records: [] } };
        response_rows.set(key, entry);
      }
      return entry.row;
    };
    try {
      if (request.is_renew_ack === true) throw new BrokerError('invalid_request', 'renewing acquisition locks is not supported');
      const epoch = request.share_session_epoch as number;
      ctx.broker.shares.check_member(group_id, member_id); // no session for strangers
      const session = ctx.share_sessions.use(group_id, member_id, epoch, true);
      const { known, unknown } = resolve_topics(rows(request.topics), ctx);
      check_ack_types(known);
      for (const u of unknown) Object.assign(row_for('', u.topic_id, u.partition), { error_code: ErrorCode.UNKNOWN_TOPIC_ID, error_message: `unknown topic id ${u.topic_id}` });
      const ack_results = await acknowledge(ctx, group_id, member_id, known);
      for (const p of known) {
        const error = ack_results.get(key_of(p));
        if (error) Object.assign(row_for(p.topic, p.topic_id, p.partition), { acknowledge_error_code: kafka_error_code(error), acknowledge_error_message: error_message(error) });
        else if (ack_results.has(key_of(p))) row_for(p.topic, p.topic_id, p.partition);
      }
      if (session) {
        ShareSessions.add(session, known);
        const forgotten = rows(request.forgotten_topics_data).flatMap((t) => {
          const name = ctx.broker.topics.get_by_id(t.topic_id as string)?.name;
          return name ? (t.partitions as number[]).map((partition) => ({ topic: name, partition })) : [];
        });
        ShareSessions.forget(session, forgotten);
        const fetched = await fetch_with_wait(ctx, group_id, member_id, [...session.partitions.values()], request);
        // A partition that failed (gone, not subscribed) is reported once and leaves the session,
        // so later fetches wait for records instead of answering the same error at once.
        ShareSessions.forget(session, fetched.filter((f) => f.error));
        for (const f of fetched) {
          if (f.acquired.length === 0 && !f.error) continue;
          const row = row_for(f.topic, ctx.broker.topics.get(f.topic)?.id ?? '', f.partition);
          if (f.error) Object.assign(row, { error_code: kafka_error_code(f.error), error_message: error_message(f.error) });
          row.records = f.batches.length > 0 ? f.batches : EMPTY_RECORDS;
          row.acquired_records = f.acquired.map((r) => ({ first_offset: r.first_offset, last_offset: r.last_offset, delivery_count: r.delivery_count }));
        }
      }
    } catch (error) {
      if (!(error instanceof BrokerError)) throw error;
      return answer(error);
    }
    const by_topic = new Map<string, Row[]>();
    for (const { topic_id, row } of response_rows.values()) {
      if (!by_topic.has(topic_id)) by_topic.set(topic_id, []);
      by_topic.get(topic_id)!.push(row);
    }
    return {
      throttle_time_ms: 0,
      error_code: 0,
      error_message: null,
      acquisition_lock_timeout_ms: lock_ms,
      responses: [...by_topic].map(([topic_id, partitions]) => ({ topic_id, partitions })),
      node_endpoints: [{ node_id: ctx.broker.node_id, host: ctx.listener.advertised_host, port: ctx.listener.advertised_port, rack: null }],
    };
  },
};

/** Fetches; when nothing was acquired, waits for new data or released records until max_wait_ms. */
async function fetch_with_wait(ctx: RequestContext, group_id: string, member_id: string, partitions: TopicPartition[], request: Row): Promise<FetchedPartition[]> {
  const deadline = Date.now() + Math.min(Math.max(0, request.max_wait_ms as number), SHARE_FETCH_WAIT_MS_MAX);
  const records_max = Math.max(1, (request.max_records as number) || 500);
  const bytes_max = Math.min(Math.max(1, request.max_bytes as number), SHARE_FETCH_BYTES_MAX);
  for (;;) {
    const fetched = await ctx.broker.shares.fetch(group_id, member_id, partitions, records_max, bytes_max, Date.now());
    const remaining = deadline - Date.now();
    if (fetched.some((f) => f.acquired.length > 0 || f.error) || remaining <= 0 || ctx.closing.raised || partitions.length === 0) return fetched;
    await wait_for_records(ctx, group_id, partitions, remaining);
  }
}

function wait_for_records(ctx: RequestContext, group_id: string, partitions: TopicPartition[], wait_ms: number): Promise<void> {
  return new Promise((resolve) => {
    const unsubscribes: Array<() => void> = [];
    const done = () => {
      clearTimeout(timer);
      for (const unsubscribe of unsubscribes) unsubscribe();
      resolve();
    };
    const timer = setTimeout(done, wait_ms);
    for (const { topic, partition } of partitions) {
      try {
        unsubscribes.push(ctx.broker.partition_reader_now(topic, partition).on_high_watermark(done));
      } catch {
        // a deleted topic: the next fetch reports it
      }
    }
    unsubscribes.push(ctx.broker.shares.on_available(group_id, done));
    unsubscribes.push(ctx.closing.on_raise(done));
  });
}

export const share_acknowledge_handler: KafkaHandler = {
  api: SHARE_ACKNOWLEDGE,
  ...versions(SHARE_ACKNOWLEDGE, 1, 2),
  async handle(request, ctx) {
    const group_id = (request.group_id as string | null) ?? '';
    const member_id = (request.member_id as string | null) ?? '';
    const lock_ms = ctx.broker.share_settings.partition.record_lock_duration_ms;
    const base = { throttle_time_ms: 0, error_code: 0, error_message: null, acquisition_lock_timeout_ms: lock_ms, responses: [] as Row[], node_endpoints: [] };
    try {
      if (request.is_renew_ack === true) throw new BrokerError('invalid_request', 'renewing acquisition locks is not supported');
      ctx.broker.shares.check_member(group_id, member_id);
      ctx.share_sessions.use(group_id, member_id, request.share_session_epoch as number, false);
      const { known, unknown } = resolve_topics(rows(request.topics), ctx);
      check_ack_types(known);
      const results = await acknowledge(ctx, group_id, member_id, known);
      const by_topic = new Map<string, Row[]>();
      const add = (topic_id: string, row: Row) => {
        if (!by_topic.has(topic_id)) by_topic.set(topic_id, []);
        by_topic.get(topic_id)!.push(row);
      };
      const leader = { leader_id: ctx.broker.node_id, leader_epoch: 0 };
      for (const u of unknown) add(u.topic_id, { partition_index: u.partition, error_code: ErrorCode.UNKNOWN_TOPIC_ID, error_message: `unknown topic id ${u.topic_id}`, current_leader: leader });
      for (const p of known) {
        const error = results.get(key_of(p));
        add(p.topic_id, { partition_index: p.partition, error_code: error ? kafka_error_code(error) : 0, error_message: error ? error_message(error) : null, current_leader: leader });
      }
      return { ...base, responses: [...by_topic].map(([topic_id, partitions]) => ({ topic_id, partitions })) };
    } catch (error) {
      if (!(error instanceof BrokerError)) throw error;
      return { ...base, ...top_level_error(error) };
    }
  },
};
