// Metadata 0-12: the brokers, the controller and each partition's leader, replicas and ISR (on a
// single node, this node for all); topic ids from v10. Auto-creates requested topics when the
// request and the broker both allow it. A partition with no leader yet is LEADER_NOT_AVAILABLE.
// Authorization: topics a client may not DESCRIBE are left out of a listing of all, and refused
// when named; auto-creation needs CREATE on the cluster or the topic.
import { METADATA } from '../../../protocol/kafka/messages/03_metadata.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import type { ResponseIn, Row } from '../../../protocol/kafka/schema.ts';
import { is_internal_topic } from '../../../core/index.ts';
import { NO_AUTHORIZED_OPERATIONS, kafka_handler, type RequestContext } from '../handler.ts';
import { kafka_error_code } from '../error_map.ts';
import { allowed, allowed_on_cluster, authorized_operations, REFUSED } from '../authorize.ts';

type TopicResponse = Row<ResponseIn<typeof METADATA>['topics']>;

function describe_topic(ctx: RequestContext, name: string): TopicResponse {
  const topic = ctx.core.topics.get(name)!;
  return {
    error_code: 0,
    name,
    topic_id: topic.id,
    is_internal: is_internal_topic(name),
    partitions: Array.from({ length: topic.partitions }, (_, p) => {
      const info = ctx.core.cluster.partition_info(name, p);
      return {
        error_code: info.leader < 0 ? ErrorCode.LEADER_NOT_AVAILABLE : 0,
        partition_index: p,
        leader_id: info.leader,
        leader_epoch: info.leader_epoch,
        replica_nodes: info.replicas,
        isr_nodes: info.isr,
        offline_replicas: [],
      };
    }),
    topic_authorized_operations: NO_AUTHORIZED_OPERATIONS,
  };
}

async function requested_topic(
  ctx: RequestContext,
  entry: { topic_id: string; name: string | null },
  allow_auto_create: boolean,
): Promise<TopicResponse> {
  const name = entry.name ?? ctx.core.topics.get_by_id(entry.topic_id)?.name ?? null;
  if (name === null)
    return {
      error_code: ErrorCode.UNKNOWN_TOPIC_ID,
      name: null,
      topic_id: entry.topic_id,
      is_internal: false,
      partitions: [],
    };
  if (!allowed(ctx, 'describe', 'topic', name))
    return { error_code: REFUSED.topic, name, topic_id: entry.topic_id, is_internal: false, partitions: [] };
  // Creating it takes CREATE on the cluster or the topic; without, an unknown topic stays unknown.
  const may_create = allowed_on_cluster(ctx, 'create') || allowed(ctx, 'create', 'topic', name);
  try {
    await ctx.core.topics.ensure(name, allow_auto_create && may_create);
    return describe_topic(ctx, name);
  } catch (error) {
    return { error_code: kafka_error_code(error), name, is_internal: false, partitions: [] };
  }
}

export const metadata_handler = kafka_handler(
  METADATA,
  { min: 0, max: 12, notes: 'topic ids from v10; auto-creation when the request and the broker allow it' },
  async (request, ctx) => {
    const requested = request.topics;
    const all = requested === null || (ctx.version === 0 && requested.length === 0);
    const allow_auto_create = ctx.version < 4 ? true : request.allow_auto_topic_creation;
    const topics: TopicResponse[] = [];
    if (all) {
      for (const topic of ctx.core.topics.list())
        if (allowed(ctx, 'describe', 'topic', topic.name)) topics.push(describe_topic(ctx, topic.name));
    } else {
      for (const entry of requested) topics.push(await requested_topic(ctx, entry, allow_auto_create));
    }
    if (request.include_topic_authorized_operations)
      for (const topic of topics)
        if (topic.error_code === 0 && topic.name)
          topic.topic_authorized_operations = authorized_operations(ctx, 'topic', topic.name);
    const self = { host: ctx.listener.advertised_host, port: ctx.listener.advertised_port };
    return {
      throttle_time_ms: 0,
      brokers: ctx.core.cluster.brokers(self, ctx.listener.name).map((b) => ({ ...b, rack: null })),
      cluster_id: ctx.core.cluster_id,
      controller_id: ctx.core.cluster.controller_id(),
      topics,
      cluster_authorized_operations: request.include_cluster_authorized_operations
        ? authorized_operations(ctx, 'cluster', '')
        : NO_AUTHORIZED_OPERATIONS,
    };
  },
);
