// Consume-transform-produce, exactly once: each batch a consumer hands out is processed inside a
// transaction of a transactional producer, and the batch's input offsets commit in that same
// transaction. A crash anywhere leaves either the batch's output and its offsets, or neither: the
// next owner of the partition starts from the last committed offset, and read_committed readers of
// the output never see the records of an aborted attempt.
import type { Producer } from './producer.ts';
import type { ConsumerGroupMetadata, Transaction } from './producer_transaction.ts';
import type { EachBatchPayload } from './consumer_types.ts';

export interface EachTransactionPayload extends EachBatchPayload {
  /** The batch's transaction: send the output with it; the helper sends the offsets and commits. */
  transaction: Transaction;
}

export interface TransactionalRunConfig {
  /** A producer with a transactionalId (one per consumer instance); connected here if it is not yet. */
  producer: Producer;
  eachBatch: (payload: EachTransactionPayload) => Promise<void>;
}

/**
 * The eachBatch handler that wraps `config.eachBatch` in a transaction: a batch committed is
 * resolved; a failure aborts, and the consumer fetches the batch again from its committed start.
 */
export function transactional_each_batch(
  config: TransactionalRunConfig,
  consumer: { groupMetadata(): ConsumerGroupMetadata },
): (payload: EachBatchPayload) => Promise<void> {
  const { producer, eachBatch } = config;
  return async (payload) => {
    const { batch } = payload;
    if (batch.isEmpty()) return;
    const transaction = await producer.transaction();
    try {
      await eachBatch({ ...payload, transaction });
      // Revoked, sought or stopping meanwhile: the offsets would be refused or wrong; the new
      // owner (or the new position) reads the batch again.
      if (payload.isStale()) return await transaction.abort();
      const next = String(Number(batch.lastOffset()) + 1);
      await transaction.sendOffsets({
        consumer,
        topics: [{ topic: batch.topic, partitions: [{ partition: batch.partition, offset: next }] }],
      });
      await transaction.commit();
    } catch (error) {
      if (transaction.isActive()) await transaction.abort().catch(() => undefined);
      throw error;
    }
    payload.resolveOffset(batch.lastOffset());
  };
}
