// OffsetForLeaderEpoch 0-4: where a leader epoch ends in a partition's log on its leader; followers
// ask it before fetching, to cut what diverges (on a single node: one epoch, 0).
import { OFFSET_FOR_LEADER_EPOCH } from '../../../protocol/kafka/messages/23_offset_for_leader_epoch.ts';
import { kafka_handler } from '../handler.ts';
import { allowed_on_cluster, refused, require_allowed } from '../authorize.ts';
import { kafka_error_code } from '../error_map.ts';

export const offset_for_leader_epoch_handler = kafka_handler(
  OFFSET_FOR_LEADER_EPOCH,
  {
    min: 0,
    max: 4,
    notes: 'from the leader epoch cache (a single node has only epoch 0); checks the current leader epoch',
  },
  (request, ctx) => ({
    throttle_time_ms: 0,
    topics: request.topics.map((topic) => ({
      topic: topic.topic,
      partitions: topic.partitions.map((partition) => {
        const row = { error_code: 0, partition: partition.partition, leader_epoch: -1, end_offset: -1 };
        try {
          // A follower (replica id >= 0, v3+) needs CLUSTER_ACTION; a consumer DESCRIBE on the topic.
          if (request.replica_id >= 0) {
            if (!allowed_on_cluster(ctx, 'cluster_action')) throw refused(ctx, 'cluster_action', 'cluster', '');
          } else require_allowed(ctx, 'describe', 'topic', topic.topic);
          const end = ctx.core.partitions.end_offset_for_epoch(
            topic.topic,
            partition.partition,
            partition.leader_epoch,
            partition.current_leader_epoch,
          );
          row.leader_epoch = end.epoch;
          row.end_offset = end.end_offset;
        } catch (error) {
          row.error_code = kafka_error_code(error);
        }
        return row;
      }),
    })),
  }),
);
