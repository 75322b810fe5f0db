// CreateTopics 0-7: topics with a partition count (-1: the broker's default), a replication
// factor (-1: the cluster's default) and configs; v5+ answers with the configs in force. Manual
// replica assignments are refused (move partitions with sluice topic reassign).
import { CREATE_TOPICS } from '../../../protocol/kafka/messages/19_create_topics.ts';
import type { RequestOf, ResponseIn, Row } from '../../../protocol/kafka/schema.ts';
import { BrokerError } from '../../../core/index.ts';
import { allowed_on_cluster, audit, require_allowed } from '../authorize.ts';
import { kafka_handler, type RequestContext } from '../handler.ts';
import { error_fields } from '../error_map.ts';
import { CONFIG_SOURCE_DEFAULT, CONFIG_SOURCE_TOPIC, configs_of } from './configs.ts';

type TopicRequest = Row<RequestOf<typeof CREATE_TOPICS>['topics']>;
type TopicResponse = Row<ResponseIn<typeof CREATE_TOPICS>['topics']>;

async function create_topic(ctx: RequestContext, topic: TopicRequest, validate_only: boolean): Promise<TopicResponse> {
  const { name, replication_factor } = topic;
  try {
    if (!allowed_on_cluster(ctx, 'create')) require_allowed(ctx, 'create', 'topic', name);
    if (topic.assignments.length > 0)
      throw new BrokerError('invalid_request', 'manual replica assignment is not supported; use sluice topic reassign');
    if (replication_factor === 0 || replication_factor < -1)
      throw new BrokerError('invalid_replication_factor', `replication factor ${replication_factor} must be positive`);
    const created = await ctx.core.topics.create(name, topic.num_partitions, configs_of(topic.configs), {
      validate_only,
      replication_factor,
    });
    if (!validate_only) audit(ctx, 'create topic', { topic: name, partitions: created.partitions });
    return {
      name,
      topic_id: created.id,
      error_code: 0,
      error_message: null,
      num_partitions: created.partitions,
      replication_factor:
        ctx.core.cluster.partition_info(name, 0).replicas.length ||
        (replication_factor === -1 ? 1 : replication_factor),
      configs: ctx.core.topics.config_entries(created).map((entry) => ({
        name: entry.name,
        value: entry.value,
        read_only: false,
        config_source: entry.is_set ? CONFIG_SOURCE_TOPIC : CONFIG_SOURCE_DEFAULT,
        is_sensitive: false,
      })),
    };
  } catch (error) {
    return { name, ...error_fields(error), num_partitions: -1, replication_factor: -1, configs: [] };
  }
}

export const create_topics_handler = kafka_handler(
  CREATE_TOPICS,
  {
    min: 0,
    max: 7,
    notes:
      'replication factor up to the live brokers (-1: the cluster default; 1 on a single node); no manual ' +
      'assignment; topic ids from v7',
  },
  async (request, ctx) => {
    const topics = [];
    for (const topic of request.topics) topics.push(await create_topic(ctx, topic, request.validate_only));
    return { throttle_time_ms: 0, topics };
  },
);
