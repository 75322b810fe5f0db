// DescribeTransactions 0: the state of transactional ids this broker coordinates.
import { DESCRIBE_TRANSACTIONS } from '../../../protocol/kafka/messages/65_describe_transactions.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import type { TopicPartition } from '../../../core/index.ts';
import { kafka_handler } from '../handler.ts';
import { require_allowed } from '../authorize.ts';
import { kafka_error_code } from '../error_map.ts';

export const describe_transactions_handler = kafka_handler(
  DESCRIBE_TRANSACTIONS,
  { min: 0, max: 0, notes: 'on the transaction coordinator' },
  (request, ctx) => ({
    throttle_time_ms: 0,
    transaction_states: request.transactional_ids.map((transactional_id) => {
      const none = {
        transactional_id,
        transaction_state: '',
        transaction_timeout_ms: 0,
        transaction_start_time_ms: -1,
        producer_id: -1,
        producer_epoch: -1,
        topics: [],
      };
      try {
        require_allowed(ctx, 'describe', 'transactional_id', transactional_id);
        const found = ctx.core.transactions.describe(transactional_id);
        if (!found) return { ...none, error_code: ErrorCode.TRANSACTIONAL_ID_NOT_FOUND };
        return {
          error_code: 0,
          transactional_id,
          transaction_state: found.state,
          transaction_timeout_ms: found.timeout_ms,
          transaction_start_time_ms: found.start_ms,
          producer_id: found.producer_id,
          producer_epoch: found.producer_epoch,
          topics: by_topic(found.partitions),
        };
      } catch (error) {
        return { ...none, error_code: kafka_error_code(error) };
      }
    }),
  }),
);

function by_topic(partitions: TopicPartition[]): Array<{ topic: string; partitions: number[] }> {
  const topics = new Map<string, number[]>();
  for (const { topic, partition } of partitions) topics.set(topic, [...(topics.get(topic) ?? []), partition]);
  return [...topics].map(([topic, list]) => ({ topic, partitions: list }));
}
