// CreateTopics 0-7: topics with a partition count (-1: the broker's default), a replication
// factor (-1: the cluster's default) and configs, or with a manual replica assignment (every
// partition, the same number of distinct registered brokers each; INVALID_REPLICA_ASSIGNMENT naming
// what is wrong); v5+ answers with the configs in force.
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
    const assignment = assignment_of(topic);
    if (!assignment && (replication_factor === 0 || replication_factor < -1))
      throw new BrokerError('invalid_replication_factor', `replication factor ${replication_factor} must be positive`);
    const partitions = assignment?.length ?? topic.num_partitions;
    const created = await ctx.core.topics.create(name, partitions, configs_of(topic.configs), {
      validate_only,
      replication_factor,
      ...(assignment ? { assignment } : {}),
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

/** The manual assignment, by partition index (which must run 0, 1, ...); null when none is given. */
function assignment_of(topic: TopicRequest): number[][] | null {
  if (topic.assignments.length === 0) return null;
  if (topic.num_partitions !== -1 || topic.replication_factor !== -1)
    throw new BrokerError(
      'invalid_request',
      'a manual assignment gives the partitions and replicas: num_partitions and replication_factor must be -1',
    );
  const by_index = [...topic.assignments].sort((a, b) => a.partition_index - b.partition_index);
  by_index.forEach((entry, index) => {
    if (entry.partition_index !== index)
      throw new BrokerError(
        'invalid_replica_assignment',
        `the assignment's partitions must be 0 to ${by_index.length - 1}, each once; found ${entry.partition_index}`,
      );
  });
  return by_index.map((entry) => [...entry.broker_ids]);
}

export const create_topics_handler = kafka_handler(
  CREATE_TOPICS,
  {
    min: 0,
    max: 7,
    notes:
      'replication factor up to the live brokers (-1: the cluster default; 1 on a single node); manual ' +
      'assignments to registered brokers; topic ids from v7',
  },
  async (request, ctx) => {
    const topics = [];
    for (const topic of request.topics) topics.push(await create_topic(ctx, topic, request.validate_only));
    return { throttle_time_ms: 0, topics };
  },
);
