// ShareAcknowledge 1-2 (KIP-932): accepts, releases or rejects acquired records, within the
// member's share session (epoch -1 closes it). Each partition is answered with its own error.
import { SHARE_ACKNOWLEDGE } from '../../../protocol/kafka/messages/79_share_acknowledge.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import type { ResponseIn, Row } from '../../../protocol/kafka/schema.ts';
import { kafka_handler } from '../handler.ts';
import { require_allowed } from '../authorize.ts';
import { error_message, has_error_code, kafka_error_code } from '../error_map.ts';
import { acknowledge, key_of, refuse_renewal, resolve_topics, top_level_error } from './share_common.ts';

type PartitionResponse = Row<Row<ResponseIn<typeof SHARE_ACKNOWLEDGE>['responses']>['partitions']>;

export const share_acknowledge_handler = kafka_handler(
  SHARE_ACKNOWLEDGE,
  { min: 1, max: 2, notes: 'lock renewal (v2) refused' },
  async (request, ctx) => {
    const group_id = request.group_id ?? '';
    const member_id = request.member_id ?? '';
    const lock_ms = ctx.core.shares.record_lock_duration_ms;
    const base = {
      throttle_time_ms: 0,
      error_code: 0,
      error_message: null,
      acquisition_lock_timeout_ms: lock_ms,
      responses: [],
      node_endpoints: [],
    };
    try {
      refuse_renewal(request.is_renew_ack);
      require_allowed(ctx, 'read', 'group', group_id);
      ctx.core.shares.check_member(group_id, member_id);
      ctx.share_sessions.use(group_id, member_id, request.share_session_epoch, false);
      const { known, unknown } = resolve_topics(request.topics, ctx);
      const results = await acknowledge(ctx, group_id, member_id, known);
      const by_topic = new Map<string, PartitionResponse[]>();
      const add = (topic_id: string, row: PartitionResponse) => {
        let rows = by_topic.get(topic_id);
        if (!rows) by_topic.set(topic_id, (rows = []));
        rows.push(row);
      };
      const leader = { leader_id: ctx.core.node_id, leader_epoch: 0 };
      for (const u of unknown)
        add(u.topic_id, {
          partition_index: u.partition,
          error_code: ErrorCode.UNKNOWN_TOPIC_ID,
          error_message: `unknown topic id ${u.topic_id}`,
          current_leader: leader,
        });
      for (const p of known) {
        const error = results.get(key_of(p));
        add(p.topic_id, {
          partition_index: p.partition,
          error_code: error ? kafka_error_code(error) : 0,
          error_message: error ? error_message(error) : null,
          current_leader: leader,
        });
      }
      return { ...base, responses: [...by_topic].map(([topic_id, partitions]) => ({ topic_id, partitions })) };
    } catch (error) {
      if (!has_error_code(error)) throw error;
      return { ...base, ...top_level_error(error) };
    }
  },
);
