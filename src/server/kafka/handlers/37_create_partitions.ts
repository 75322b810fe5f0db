// CreatePartitions 0-3: raises a topic's partition count; the new partitions are placed like a new
// topic's, or as the request's assignments say (one per new partition, as many registered brokers
// as the topic's replication factor; INVALID_REPLICA_ASSIGNMENT naming what is wrong).
import { CREATE_PARTITIONS } from '../../../protocol/kafka/messages/37_create_partitions.ts';
import { audit, require_allowed } from '../authorize.ts';
import { kafka_handler } from '../handler.ts';
import { error_fields } from '../error_map.ts';

export const create_partitions_handler = kafka_handler(
  CREATE_PARTITIONS,
  { min: 0, max: 3, notes: "new partitions placed like a new topic's, or by the assignments given" },
  async (request, ctx) => {
    const results = [];
    for (const topic of request.topics) {
      try {
        require_allowed(ctx, 'alter', 'topic', topic.name);
        const given = topic.assignments ?? [];
        const assignment = given.length > 0 ? { assignment: given.map((entry) => [...entry.broker_ids]) } : {};
        await ctx.core.topics.add_partitions(topic.name, topic.count, {
          validate_only: request.validate_only,
          ...assignment,
        });
        if (!request.validate_only) audit(ctx, 'create partitions', { topic: topic.name, count: topic.count });
        results.push({ name: topic.name, error_code: 0, error_message: null });
      } catch (error) {
        results.push({ name: topic.name, ...error_fields(error) });
      }
    }
    return { throttle_time_ms: 0, results };
  },
);
