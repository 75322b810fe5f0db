// ListPartitionReassignments 0: the moves in progress, from the cluster's view (any broker
// answers). Null topics ask for every partition; unknown topics and partitions are left out.
import { LIST_PARTITION_REASSIGNMENTS } from '../../../protocol/kafka/messages/46_list_partition_reassignments.ts';
import { kafka_handler } from '../handler.ts';
import { allowed_on_cluster, refusal } from '../authorize.ts';

export const list_partition_reassignments_handler = kafka_handler(
  LIST_PARTITION_REASSIGNMENTS,
  {
    min: 0,
    max: 0,
    notes:
      "any broker answers from the cluster's view; partitions not being moved, unknown topics and unknown " +
      'partitions are left out; a single broker lists nothing',
  },
  (request, ctx) => {
    if (!allowed_on_cluster(ctx, 'describe'))
      return { throttle_time_ms: 0, ...refusal(ctx, 'describe', 'cluster', ''), topics: [] };
    const asked: Array<{ name: string; partitions: number[] | null }> =
      request.topics === null
        ? ctx.core.topics.list().map((topic) => ({ name: topic.name, partitions: null }))
        : request.topics.map((topic) => ({ name: topic.name, partitions: topic.partition_indexes }));
    const topics = [];
    for (const { name, partitions: indexes } of asked) {
      const topic = ctx.core.topics.get(name);
      if (!topic) continue;
      const partitions = [];
      for (const p of indexes ?? Array.from({ length: topic.partitions }, (_, i) => i)) {
        if (p < 0 || p >= topic.partitions) continue;
        const moving = ctx.core.cluster.partition_reassignment(name, p);
        if (moving)
          partitions.push({
            partition_index: p,
            replicas: moving.replicas,
            adding_replicas: moving.adding,
            removing_replicas: moving.removing,
          });
      }
      if (partitions.length > 0) topics.push({ name, partitions });
    }
    return { throttle_time_ms: 0, error_code: 0, error_message: null, topics };
  },
);
