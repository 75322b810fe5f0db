// Metadata 0-12: the brokers, the controller and each partition's leader, replicas and ISR (on a
// single node, this node for all); topic ids from v10. Auto-creates requested topics when the
// request and the broker both allow it.
import { METADATA } from '../../../protocol/kafka/messages/03_metadata.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import { is_internal_topic } from '../../../broker/topics.ts';
import type { KafkaHandler, RequestContext } from '../handler.ts';
import { kafka_error_code } from '../error_map.ts';
import { type Row, rows, versions } from './util.ts';

export function describe_topic(ctx: RequestContext, name: string): Row {
  const topic = ctx.broker.topics.get(name)!;
  return {
    error_code: 0,
    name,
    topic_id: topic.id,
    is_internal: is_internal_topic(name),
    partitions: Array.from({ length: topic.partitions }, (_, p) => {
      const info = ctx.broker.partition_info(name, p);
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
    topic_authorized_operations: -2147483648,
  };
}

export const metadata_handler: KafkaHandler = {
  api: METADATA,
  ...versions(METADATA, 0, 12),
  async handle(request, ctx) {
    const requested = request.topics as Row[] | null;
    const all = requested === null || (ctx.version === 0 && requested.length === 0);
    const allow_auto_create = ctx.version < 4 ? true : Boolean(request.allow_auto_topic_creation);
    const topics: Row[] = [];
    if (all) {
      for (const topic of ctx.broker.topics.list()) topics.push(describe_topic(ctx, topic.name));
    } else {
      for (const entry of rows(requested)) {
        let name = entry.name as string | null;
        if (name === null && entry.topic_id) name = ctx.broker.topics.get_by_id(entry.topic_id as string)?.name ?? null;
        if (name === null) {
          topics.push({ error_code: ErrorCode.UNKNOWN_TOPIC_ID, name: null, topic_id: entry.topic_id, is_internal: false, partitions: [] });
          continue;
        }
        try {
          await ctx.broker.ensure_topic(name, allow_auto_create);
          topics.push(describe_topic(ctx, name));
        } catch (error) {
          topics.push({ error_code: kafka_error_code(error), name, is_internal: false, partitions: [] });
        }
      }
    }
    const self = { host: ctx.listener.advertised_host, port: ctx.listener.advertised_port };
    return {
      throttle_time_ms: 0,
      brokers: ctx.broker.brokers(self).map((b) => ({ ...b, rack: null })),
      cluster_id: ctx.broker.cluster_id,
      controller_id: ctx.broker.controller_id,
      topics,
      cluster_authorized_operations: -2147483648,
    };
  },
};
