// CreatePartitions 0-3: raises a topic's partition count (new partitions are placed like a new
// topic's). Manual assignments are refused.
import { CREATE_PARTITIONS } from '../../../protocol/kafka/messages/37_create_partitions.ts';
import { BrokerError } from '../../../core/index.ts';
import { audit, require_allowed } from '../authorize.ts';
import { kafka_handler } from '../handler.ts';
import { error_fields } from '../error_map.ts';

export const create_partitions_handler = kafka_handler(
  CREATE_PARTITIONS,
  { min: 0, max: 3, notes: "new partitions are placed like a new topic's; manual assignments are refused" },
  async (request, ctx) => {
    const results = [];
    for (const topic of request.topics) {
      try {
        require_allowed(ctx, 'alter', 'topic', topic.name);
        if ((topic.assignments ?? []).length > 0)
          throw new BrokerError('invalid_request', 'manual replica assignment is not supported on a single node');
        await ctx.core.topics.add_partitions(topic.name, topic.count, { validate_only: request.validate_only });
        if (!request.validate_only) audit(ctx, 'create partitions', { topic: topic.name, count: topic.count });
        results.push({ name: topic.name, error_code: 0, error_message: null });
      } catch (error) {
        results.push({ name: topic.name, ...error_fields(error) });
      }
    }
    return { throttle_time_ms: 0, results };
  },
);
