// AlterReplicaLogDirs 0–2: a broker has one log directory (its data directory), so a replica can
// only be asked to stay where it is (NONE); any other directory is LOG_DIR_NOT_FOUND, a final
// answer, and a partition the broker does not hold is UNKNOWN_TOPIC_OR_PARTITION. Needs ALTER on
// the cluster.
import { ALTER_REPLICA_LOG_DIRS } from '../../../protocol/kafka/messages/34_alter_replica_log_dirs.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import { kafka_handler } from '../handler.ts';
import { allowed_on_cluster, REFUSED } from '../authorize.ts';

export const alter_replica_log_dirs_handler = kafka_handler(
  ALTER_REPLICA_LOG_DIRS,
  { min: 0, max: 2, notes: 'one log directory per broker: a move elsewhere is LOG_DIR_NOT_FOUND' },
  (request, ctx) => {
    const may = allowed_on_cluster(ctx, 'alter');
    const results = request.dirs.flatMap((dir) =>
      dir.topics.map((topic) => ({
        topic_name: topic.name,
        partitions: topic.partitions.map((partition_index) => {
          const exists = partition_index >= 0 && partition_index < (ctx.core.topics.get(topic.name)?.partitions ?? 0);
          const held = exists && ctx.core.partitions.local_state(topic.name, partition_index) !== null;
          const error_code = !may
            ? REFUSED.cluster
            : !held
              ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
              : dir.path === ctx.core.data_dir
                ? ErrorCode.NONE
                : ErrorCode.LOG_DIR_NOT_FOUND;
          return { partition_index, error_code };
        }),
      })),
    );
    return { throttle_time_ms: 0, results };
  },
);
