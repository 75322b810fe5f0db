// ShareGroupHeartbeat 1 (KIP-932): a member joins a share group, says it is alive, and learns the
// partitions it may fetch (every partition of its subscribed topics: consumers may outnumber
// partitions); epoch -1 leaves and ends its share session.
import { SHARE_GROUP_HEARTBEAT } from '../../../protocol/kafka/messages/76_share_group_heartbeat.ts';
import { kafka_handler } from '../handler.ts';
import { require_allowed } from '../authorize.ts';
import { top_level_error } from './share_common.ts';

export const share_group_heartbeat_handler = kafka_handler(
  SHARE_GROUP_HEARTBEAT,
  { min: 1, max: 1, notes: 'every member is assigned every partition of its subscribed topics' },
  (request, ctx) => {
    const base = {
      throttle_time_ms: 0,
      error_code: 0,
      error_message: null,
      member_id: request.member_id,
      member_epoch: -1,
      heartbeat_interval_ms: 0,
      assignment: null,
    };
    try {
      require_allowed(ctx, 'read', 'group', request.group_id);
      for (const topic of request.subscribed_topic_names ?? []) require_allowed(ctx, 'read', 'topic', topic);
      const result = ctx.core.shares.heartbeat({
        group_id: request.group_id,
        member_id: request.member_id,
        member_epoch: request.member_epoch,
        subscribed_topic_names: request.subscribed_topic_names,
        client_id: ctx.header.client_id ?? '',
        client_host: ctx.client_host,
      });
      if (result.member_epoch === -1) ctx.share_sessions.end(request.group_id, request.member_id);
      const topic_partitions = [...result.assignment].map(([name, partitions]) => ({
        topic_id: ctx.core.topics.get(name)!.id,
        partitions,
      }));
      return {
        ...base,
        member_id: result.member_id,
        member_epoch: result.member_epoch,
        heartbeat_interval_ms: result.heartbeat_interval_ms,
        assignment: result.member_epoch === -1 ? null : { topic_partitions },
      };
    } catch (error) {
      return { ...base, ...top_level_error(error) };
    }
  },
);
