// DeleteTopics 0-6: topics by name (by name or id from v6), with their partitions and the offsets
// groups committed for them. The broker's own topics (names starting with "__") are refused.
import { DELETE_TOPICS } from '../../../protocol/kafka/messages/20_delete_topics.ts';
import { BrokerError, is_internal_topic } from '../../../core/index.ts';
import { audit, require_allowed } from '../authorize.ts';
import { kafka_handler } from '../handler.ts';
import { error_fields } from '../error_map.ts';
import { ZERO_UUID } from '../../../protocol/kafka/codec.ts';

/** Kafka's null topic id. */

export const delete_topics_handler = kafka_handler(
  DELETE_TOPICS,
  { min: 0, max: 6, notes: 'by name or topic id' },
  async (request, ctx) => {
    const wanted: Array<{ name: string | null; topic_id: string | null }> =
      ctx.version >= 6
        ? request.topics.map((t) => ({ name: t.name, topic_id: t.topic_id }))
        : request.topic_names.map((name) => ({ name, topic_id: null }));
    const responses = [];
    for (const entry of wanted) {
      const name = entry.name ?? (entry.topic_id ? (ctx.core.topics.get_by_id(entry.topic_id)?.name ?? null) : null);
      const topic_id = entry.topic_id ?? ctx.core.topics.get(name ?? '')?.id ?? ZERO_UUID;
      try {
        if (name === null) throw new BrokerError('unknown_topic_or_partition', `unknown topic id ${entry.topic_id}`);
        require_allowed(ctx, 'delete', 'topic', name);
        if (is_internal_topic(name))
          throw new BrokerError('invalid_request', `internal topic ${name} cannot be deleted`);
        await ctx.core.topics.delete(name);
        audit(ctx, 'delete topic', { topic: name });
        responses.push({ name, topic_id, error_code: 0, error_message: null });
      } catch (error) {
        responses.push({ name, topic_id, ...error_fields(error) });
      }
    }
    return { throttle_time_ms: 0, responses };
  },
);
