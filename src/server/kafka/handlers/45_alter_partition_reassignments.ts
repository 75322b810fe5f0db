// AlterPartitionReassignments 0: moves partitions to new replica sets (null replicas cancel the
// move in progress); a single node has nowhere to move them (INVALID_REPLICA_ASSIGNMENT).
import { ALTER_PARTITION_REASSIGNMENTS } from '../../../protocol/kafka/messages/45_alter_partition_reassignments.ts';
import { kafka_handler } from '../handler.ts';
import { allowed_on_cluster, refusal } from '../authorize.ts';
import { error_fields } from '../error_map.ts';

export const alter_partition_reassignments_handler = kafka_handler(
  ALTER_PARTITION_REASSIGNMENTS,
  {
    min: 0,
    max: 0,
    notes:
      'a cluster only; null replicas cancel the reassignment in progress (NO_REASSIGNMENT_IN_PROGRESS when there is ' +
      'none)',
  },
  async (request, ctx) => {
    if (!allowed_on_cluster(ctx, 'alter'))
      return { throttle_time_ms: 0, ...refusal(ctx, 'alter', 'cluster', ''), responses: [] };
    const responses = [];
    for (const topic of request.topics) {
      const partitions = [];
      for (const partition of topic.partitions) {
        try {
          await ctx.core.cluster.reassign(topic.name, partition.partition_index, partition.replicas);
          partitions.push({ partition_index: partition.partition_index, error_code: 0, error_message: null });
        } catch (error) {
          partitions.push({ partition_index: partition.partition_index, ...error_fields(error) });
        }
      }
      responses.push({ name: topic.name, partitions });
    }
    return { throttle_time_ms: 0, error_code: 0, error_message: null, responses };
  },
);
