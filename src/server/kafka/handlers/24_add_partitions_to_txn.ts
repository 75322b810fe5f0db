// AddPartitionsToTxn: up to v3 a transactional producer adds the partitions it is about to write to
// its ongoing transaction (the first begins it); all or none, so with a partition refused (unknown)
// nothing is added. v4+ is the brokers' form, several transactions at once: with verify_only a
// partition leader asks whether a producer's first batch there belongs to its ongoing transaction.
// v5 only adds an error code Sluice does not send (TRANSACTION_ABORTABLE).
import { ADD_PARTITIONS_TO_TXN } from '../../../protocol/kafka/messages/24_add_partitions_to_txn.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import type { BrokerError, Core, TopicPartition } from '../../../core/index.ts';
import { kafka_handler, type RequestContext } from '../handler.ts';
import { allowed, allowed_on_cluster, refusal, REFUSED } from '../authorize.ts';
import { kafka_error_code } from '../error_map.ts';

type Topics = Array<{ name: string; partitions: number[] }>;
type Results = Array<TopicPartition & { error: BrokerError | null }>;

interface Transaction {
  transactional_id: string;
  producer_id: number;
  producer_epoch: number;
  verify_only: boolean;
  topics: Topics;
}

export const add_partitions_to_txn_handler = kafka_handler(
  ADD_PARTITIONS_TO_TXN,
  { min: 0, max: 5, notes: 'v4+ (brokers): verify only, or add, for several transactions' },
  async (request, ctx) => {
    if (ctx.version <= 3) {
      const transaction = {
        transactional_id: request.v3_and_below_transactional_id,
        producer_id: request.v3_and_below_producer_id,
        producer_epoch: request.v3_and_below_producer_epoch,
        verify_only: false,
        topics: request.v3_and_below_topics,
      };
      const refused = client_refusals(ctx, transaction);
      const results = refused ? by_partition(transaction.topics, refused) : await topic_results(ctx.core, transaction);
      return { throttle_time_ms: 0, results_by_topic_v3_and_below: results };
    }
    // v4+ is a broker's request (a leader verifying, or joining a partition for a v12 produce).
    if (!allowed_on_cluster(ctx, 'cluster_action'))
      return { throttle_time_ms: 0, ...refusal(ctx, 'cluster_action', 'cluster', ''), results_by_transaction: [] };
    if (!ctx.core.transactions.is_coordinator) {
      return { throttle_time_ms: 0, error_code: ErrorCode.NOT_COORDINATOR, results_by_transaction: [] };
    }
    const results_by_transaction = await Promise.all(
      request.transactions.map(async (transaction) => ({
        transactional_id: transaction.transactional_id,
        topic_results: await topic_results(ctx.core, transaction),
      })),
    );
    return { throttle_time_ms: 0, error_code: ErrorCode.NONE, results_by_transaction };
  },
);

/** One transaction's partitions added (or verified), with each one's error code in the request's order. */
async function topic_results(core: Core, transaction: Transaction) {
  const { topics } = transaction;
  const wanted: TopicPartition[] = topics.flatMap((t) =>
    t.partitions.map((partition) => ({ topic: t.name, partition })),
  );
  let errors: number[];
  try {
    const results = await added_or_verified(core, transaction, wanted);
    // Adding is all or none: with any partition refused, the others were not attempted.
    const refused = !transaction.verify_only && results.some((r) => r.error !== null);
    errors = results.map((r) =>
      r.error ? kafka_error_code(r.error) : refused ? ErrorCode.OPERATION_NOT_ATTEMPTED : ErrorCode.NONE,
    );
  } catch (error) {
    const code = kafka_error_code(error);
    errors = wanted.map(() => code);
  }
  let i = 0;
  return by_partition(topics, () => errors[i++]!);
}

/** Each partition of `topics` with the error code `code_of` gives it, in the request's order. */
function by_partition(topics: Topics, code_of: (topic: string) => number) {
  return topics.map((t) => ({
    name: t.name,
    results_by_partition: t.partitions.map((partition_index) => ({
      partition_index,
      partition_error_code: code_of(t.name),
    })),
  }));
}

/**
 * A client's request refused by the ACLs: the transactional id it may not write, or the topics it
 * may not write (the others not attempted, as adding is all or none); null when allowed.
 */
function client_refusals(ctx: RequestContext, transaction: Transaction): ((topic: string) => number) | null {
  if (!allowed(ctx, 'write', 'transactional_id', transaction.transactional_id)) return () => REFUSED.transactional_id;
  const refused = new Set(transaction.topics.filter((t) => !allowed(ctx, 'write', 'topic', t.name)).map((t) => t.name));
  if (refused.size === 0) return null;
  return (topic) => (refused.has(topic) ? REFUSED.topic : ErrorCode.OPERATION_NOT_ATTEMPTED);
}

function added_or_verified(core: Core, transaction: Transaction, wanted: TopicPartition[]): Promise<Results> | Results {
  const { transactional_id, producer_id, producer_epoch } = transaction;
  if (transaction.verify_only) {
    return core.transactions.verify({ transactional_id, producer_id, producer_epoch }, wanted);
  }
  return core.transactions.add_partitions(transactional_id, producer_id, producer_epoch, wanted);
}
