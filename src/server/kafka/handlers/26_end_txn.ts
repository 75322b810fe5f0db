// EndTxn 0-5: commit or abort the producer's transaction. Answered once the outcome is durable and
// every partition of the transaction has its marker (so the next transaction can begin at once).
// v4 only adds an error code Sluice does not send (TRANSACTION_ABORTABLE); v5 (transaction version
// 2, KIP-890) ends under the next epoch and answers with the producer id and epoch to use next.
import { END_TXN } from '../../../protocol/kafka/messages/26_end_txn.ts';
import { kafka_handler } from '../handler.ts';
import { require_allowed } from '../authorize.ts';
import { kafka_error_code } from '../error_map.ts';

export const end_txn_handler = kafka_handler(
  END_TXN,
  { min: 0, max: 5, notes: 'answered once the markers are written; v5 bumps the epoch' },
  async (request, ctx) => {
    try {
      require_allowed(ctx, 'write', 'transactional_id', request.transactional_id);
      const next = await ctx.core.transactions.end(
        request.transactional_id,
        request.producer_id,
        request.producer_epoch,
        request.committed,
        ctx.version >= 5,
      );
      return { throttle_time_ms: 0, error_code: 0, ...next };
    } catch (error) {
      return { throttle_time_ms: 0, error_code: kafka_error_code(error), producer_id: -1, producer_epoch: -1 };
    }
  },
);
