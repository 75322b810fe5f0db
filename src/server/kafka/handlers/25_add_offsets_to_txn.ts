// AddOffsetsToTxn 0-4: the producer will commit a consumer group's offsets in its transaction
// (TxnOffsetCommit), so the partition holding the group's offsets joins the transaction. v4 only
// adds an error code Sluice does not send (TRANSACTION_ABORTABLE).
import { ADD_OFFSETS_TO_TXN } from '../../../protocol/kafka/messages/25_add_offsets_to_txn.ts';
import { kafka_handler } from '../handler.ts';
import { require_allowed } from '../authorize.ts';
import { kafka_error_code } from '../error_map.ts';

export const add_offsets_to_txn_handler = kafka_handler(
  ADD_OFFSETS_TO_TXN,
  { min: 0, max: 4, notes: "the group's offsets partition joins the transaction" },
  async (request, ctx) => {
    try {
      require_allowed(ctx, 'write', 'transactional_id', request.transactional_id);
      require_allowed(ctx, 'read', 'group', request.group_id);
      await ctx.core.transactions.add_offsets(
        request.transactional_id,
        request.producer_id,
        request.producer_epoch,
        request.group_id,
      );
      return { throttle_time_ms: 0, error_code: 0 };
    } catch (error) {
      return { throttle_time_ms: 0, error_code: kafka_error_code(error) };
    }
  },
);
