// JoinGroup 0-7: a member joins (or re-joins) a consumer group and waits for the rebalance; the
// leader gets every member's metadata to compute the assignment. v4+ without a member id is told
// its id (MEMBER_ID_REQUIRED) and joins again with it.
import { JOIN_GROUP } from '../../../protocol/kafka/messages/11_join_group.ts';
import { MemberIdRequiredError } from '../../../core/index.ts';
import { require_allowed } from '../authorize.ts';
import { kafka_handler } from '../handler.ts';
import { kafka_error_code } from '../error_map.ts';

export const join_group_handler = kafka_handler(
  JOIN_GROUP,
  { min: 0, max: 7, notes: 'MEMBER_ID_REQUIRED from v4; static membership from v5' },
  async (request, ctx) => {
    try {
      require_allowed(ctx, 'read', 'group', request.group_id);
      const result = await ctx.core.groups.join({
        group_id: request.group_id,
        member_id: request.member_id,
        group_instance_id: request.group_instance_id,
        client_id: ctx.header.client_id ?? '',
        client_host: ctx.client_host,
        session_timeout_ms: request.session_timeout_ms,
        rebalance_timeout_ms: ctx.version >= 1 ? request.rebalance_timeout_ms : request.session_timeout_ms,
        protocol_type: request.protocol_type,
        protocols: request.protocols.map((p) => ({ name: p.name, metadata: Buffer.from(p.metadata) })),
        require_known_member_id: ctx.version >= 4,
      });
      return { throttle_time_ms: 0, error_code: 0, ...result };
    } catch (error) {
      return {
        throttle_time_ms: 0,
        error_code: kafka_error_code(error),
        generation_id: -1,
        protocol_type: null,
        protocol_name: ctx.version >= 7 ? null : '',
        leader: '',
        member_id: error instanceof MemberIdRequiredError ? error.member_id : request.member_id,
        members: [],
      };
    }
  },
);
