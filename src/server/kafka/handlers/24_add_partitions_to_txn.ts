// AddPartitionsToTxn 0-3: a transactional producer adds the partitions it is about to write to its
// ongoing transaction (the first begins it). All or none: with a partition refused (unknown, or in
// a cluster led by another broker) nothing is added. v4+ is the brokers' own verification form,
// not served.
import { ADD_PARTITIONS_TO_TXN } from '../../../protocol/kafka/messages/24_add_partitions_to_txn.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import type { TopicPartition } from '../../../core/index.ts';
import { kafka_handler } from '../handler.ts';
import { kafka_error_code } from '../error_map.ts';

export const add_partitions_to_txn_handler = kafka_handler(
  ADD_PARTITIONS_TO_TXN,
  { min: 0, max: 3, notes: 'where the transaction coordinator runs (on a single node, this broker)' },
  async (request, ctx) => {
    const topics = request.v3_and_below_topics;
    const wanted: TopicPartition[] = topics.flatMap((t) =>
      t.partitions.map((partition) => ({ topic: t.name, partition })),
    );
    let errors: Array<number>;
    try {
      const results = await ctx.core.transactions.add_partitions(
        request.v3_and_below_transactional_id,
        request.v3_and_below_producer_id,
        request.v3_and_below_producer_epoch,
        wanted,
      );
      // All or none: with any partition refused, the others were not attempted.
      const refused = results.some((r) => r.error !== null);
      errors = results.map((r) =>
        r.error ? kafka_error_code(r.error) : refused ? ErrorCode.OPERATION_NOT_ATTEMPTED : ErrorCode.NONE,
      );
    } catch (error) {
      const code = kafka_error_code(error);
      errors = wanted.map(() => code);
    }
    let i = 0;
    return {
      throttle_time_ms: 0,
      results_by_topic_v3_and_below: topics.map((t) => ({
        name: t.name,
        results_by_partition: t.partitions.map((partition_index) => ({
          partition_index,
          partition_error_code: errors[i++]!,
        })),
      })),
    };
  },
);
