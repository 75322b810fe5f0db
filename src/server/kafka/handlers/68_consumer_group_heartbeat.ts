// ConsumerGroupHeartbeat 0-1 (KIP-848): a consumer joins, stays in and leaves its group, and hears
// the partitions it owns now, one reconciliation step at a time (the coordinator's assignors). A v1
// member generates its own id; a v0 one is given one.
import { CONSUMER_GROUP_HEARTBEAT } from '../../../protocol/kafka/messages/68_consumer_group_heartbeat.ts';
import { BrokerError } from '../../../core/index.ts';
import { kafka_handler, type RequestContext } from '../handler.ts';
import { allowed, require_allowed } from '../authorize.ts';
import { top_level_error } from './share_common.ts';

type TopicIds = ReadonlyArray<{ topic_id: string; partitions: readonly number[] }>;

/** The partitions a member says it owns, by topic name (ids of topics gone are left out). */
function owned_by_name(ctx: RequestContext, owned: TopicIds | null): Map<string, number[]> | null {
  if (owned === null) return null;
  const named = new Map<string, number[]>();
  for (const { topic_id, partitions } of owned) {
    const topic = ctx.core.topics.get_by_id(topic_id);
    if (topic) named.set(topic.name, [...partitions]);
  }
  return named;
}

export const consumer_group_heartbeat_handler = kafka_handler(
  CONSUMER_GROUP_HEARTBEAT,
  { min: 0, max: 1, notes: 'server-side assignors uniform (default) and range; regex subscriptions (v1)' },
  (request, ctx) => {
    const base = {
      throttle_time_ms: 0,
      error_code: 0,
      error_message: null,
      member_id: null,
      member_epoch: -1,
      heartbeat_interval_ms: 0,
      assignment: null,
    };
    try {
      require_allowed(ctx, 'read', 'group', request.group_id);
      for (const topic of request.subscribed_topic_names ?? []) require_allowed(ctx, 'describe', 'topic', topic);
      if (ctx.version >= 1 && request.member_id === '')
        throw new BrokerError('invalid_request', 'from version 1 the consumer generates its member id');
      const result = ctx.core.groups.consumer_heartbeat({
        group_id: request.group_id,
        member_id: request.member_id,
        member_epoch: request.member_epoch,
        instance_id: request.instance_id,
        rack_id: request.rack_id,
        rebalance_timeout_ms: request.rebalance_timeout_ms,
        subscribed_topic_names: request.subscribed_topic_names,
        subscribed_topic_regex: request.subscribed_topic_regex ?? null,
        server_assignor: request.server_assignor,
        owned: owned_by_name(ctx, request.topic_partitions),
        client_id: ctx.header.client_id ?? '',
        client_host: ctx.client_host,
        // A regex matches only topics the member's principal may describe, as in Kafka.
        may_describe: (topic) => allowed(ctx, 'describe', 'topic', topic),
      });
      const assignment = result.assignment && {
        topic_partitions: [...result.assignment]
          .filter(([name]) => ctx.core.topics.get(name) !== undefined)
          .map(([name, partitions]) => ({ topic_id: ctx.core.topics.get(name)!.id, partitions })),
      };
      return {
        ...base,
        member_id: result.member_id,
        member_epoch: result.member_epoch,
        heartbeat_interval_ms: result.heartbeat_interval_ms,
        assignment,
      };
    } catch (error) {
      return { ...base, ...top_level_error(error) };
    }
  },
);
