// DescribeProducers 0: the producers with state on each partition named, from its leader
// (NOT_LEADER_OR_FOLLOWER elsewhere): epoch, last sequence and the last batch's timestamp, and the
// start of an open transaction. Coordinator epochs are not kept (-1). Needs READ on the topic.
import { DESCRIBE_PRODUCERS } from '../../../protocol/kafka/messages/61_describe_producers.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import { kafka_handler } from '../handler.ts';
import { allowed, refusal } from '../authorize.ts';
import { error_fields } from '../error_map.ts';

export const describe_producers_handler = kafka_handler(
  DESCRIBE_PRODUCERS,
  { min: 0, max: 0, notes: 'from the partition leader; coordinator epoch -1' },
  (request, ctx) => ({
    throttle_time_ms: 0,
    topics: request.topics.map((topic) => ({
      name: topic.name,
      partitions: topic.partition_indexes.map((partition_index) => {
        if (!allowed(ctx, 'read', 'topic', topic.name))
          return { partition_index, ...refusal(ctx, 'read', 'topic', topic.name), active_producers: [] };
        try {
          const producers = ctx.core.partitions.active_producers(topic.name, partition_index);
          const active_producers = producers.map(({ last_timestamp_ms, ...producer }) => ({
            ...producer,
            last_timestamp: last_timestamp_ms,
            coordinator_epoch: -1,
          }));
          return { partition_index, error_code: ErrorCode.NONE, error_message: null, active_producers };
        } catch (error) {
          return { partition_index, ...error_fields(error), active_producers: [] };
        }
      }),
    })),
  }),
);
