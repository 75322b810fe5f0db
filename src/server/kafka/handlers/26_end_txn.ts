// EndTxn 0-3: commit or abort the producer's transaction. Answered once the outcome is durable and
// every partition of the transaction has its marker (so the next transaction can begin at once).
// v4 and v5 (KIP-890's epoch bump per transaction) are not served.
import { END_TXN } from '../../../protocol/kafka/messages/26_end_txn.ts';
import { kafka_handler } from '../handler.ts';
import { kafka_error_code } from '../error_map.ts';

export const end_txn_handler = kafka_handler(
  END_TXN,
  { min: 0, max: 3, notes: 'answered once the markers are written' },
  async (request, ctx) => {
    try {
      await ctx.core.transactions.end(
        request.transactional_id,
        request.producer_id,
        request.producer_epoch,
        request.committed,
      );
      return { throttle_time_ms: 0, error_code: 0, producer_id: -1, producer_epoch: -1 };
    } catch (error) {
      return { throttle_time_ms: 0, error_code: kafka_error_code(error), producer_id: -1, producer_epoch: -1 };
    }
  },
);
