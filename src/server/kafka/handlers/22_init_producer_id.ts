// InitProducerId 0-5: a producer id for an idempotent producer, from blocks reserved in the
// metadata store (unique across brokers and restarts); an idempotent producer bumping its epoch
// after an error keeps its id. With a transactional id, the transaction coordinator's id and a new
// epoch, which fences the id's earlier instances (their open transaction is aborted). v5 only adds
// an error code Sluice does not send (TRANSACTION_ABORTABLE).
import { INIT_PRODUCER_ID } from '../../../protocol/kafka/messages/22_init_producer_id.ts';
import { kafka_handler, type RequestContext } from '../handler.ts';
import { allowed, allowed_on_cluster, refusal, require_allowed } from '../authorize.ts';
import { kafka_error_code } from '../error_map.ts';

/** Producer epochs are int16 and wrap within the positive range. */
const EPOCH_MASK = 0x7fff;

export const init_producer_id_handler = kafka_handler(
  INIT_PRODUCER_ID,
  { min: 0, max: 5, notes: 'idempotent and transactional producers (on the transaction coordinator)' },
  async (request, ctx) => {
    if (request.transactional_id !== null) {
      try {
        require_allowed(ctx, 'write', 'transactional_id', request.transactional_id);
        const expected =
          request.producer_id >= 0
            ? { producer_id: request.producer_id, producer_epoch: request.producer_epoch }
            : null;
        const given = await ctx.core.transactions.init_producer_id(
          request.transactional_id,
          request.transaction_timeout_ms,
          expected,
        );
        return { throttle_time_ms: 0, error_code: 0, ...given };
      } catch (error) {
        return { throttle_time_ms: 0, error_code: kafka_error_code(error), producer_id: -1, producer_epoch: -1 };
      }
    }
    // An idempotent producer: IDEMPOTENT_WRITE on the cluster, or WRITE on some topic (as Kafka).
    if (!allowed_on_cluster(ctx, 'idempotent_write') && !may_write_some_topic(ctx))
      return {
        throttle_time_ms: 0,
        ...refusal(ctx, 'idempotent_write', 'cluster', ''),
        producer_id: -1,
        producer_epoch: -1,
      };
    if (request.producer_id >= 0) {
      // Logged: batches a client resends under the new epoch cannot be told from new ones, so a
      // duplicate a fault run finds is traced to this.
      const producer_epoch = (request.producer_epoch + 1) & EPOCH_MASK;
      ctx.core.logger.info(
        { producer_id: request.producer_id, producer_epoch },
        'idempotent producer bumped its epoch',
      );
      return { throttle_time_ms: 0, error_code: 0, producer_id: request.producer_id, producer_epoch };
    }
    return {
      throttle_time_ms: 0,
      error_code: 0,
      producer_id: await ctx.core.partitions.allocate_producer_id(),
      producer_epoch: 0,
    };
  },
);

function may_write_some_topic(ctx: RequestContext): boolean {
  return ctx.core.topics.list().some((topic) => allowed(ctx, 'write', 'topic', topic.name));
}
