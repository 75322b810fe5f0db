// ListTransactions 0-1: the transactional ids this broker coordinates, filtered by state, producer
// id and (v1) how long the transaction has been running.
import { LIST_TRANSACTIONS } from '../../../protocol/kafka/messages/66_list_transactions.ts';
import { kafka_handler } from '../handler.ts';
import { allowed } from '../authorize.ts';
import { kafka_error_code } from '../error_map.ts';

const STATES = ['Empty', 'Ongoing', 'PrepareCommit', 'PrepareAbort', 'CompleteCommit', 'CompleteAbort'];

export const list_transactions_handler = kafka_handler(
  LIST_TRANSACTIONS,
  { min: 0, max: 1, notes: 'on the transaction coordinator' },
  (request, ctx) => {
    const unknown_state_filters = request.state_filters.filter((s) => !STATES.includes(s));
    try {
      const now = ctx.core.clock.now_ms();
      const listed = ctx.core.transactions
        .list()
        .filter(
          (t) =>
            (request.state_filters.length === 0 || request.state_filters.includes(t.state)) &&
            (request.producer_id_filters.length === 0 || request.producer_id_filters.includes(t.producer_id)) &&
            (request.duration_filter < 0 || (t.start_ms >= 0 && now - t.start_ms >= request.duration_filter)) &&
            allowed(ctx, 'describe', 'transactional_id', t.transactional_id),
        );
      return {
        throttle_time_ms: 0,
        error_code: 0,
        unknown_state_filters,
        transaction_states: listed.map((t) => ({
          transactional_id: t.transactional_id,
          producer_id: t.producer_id,
          transaction_state: t.state,
        })),
      };
    } catch (error) {
      return {
        throttle_time_ms: 0,
        error_code: kafka_error_code(error),
        unknown_state_filters,
        transaction_states: [],
      };
    }
  },
);
