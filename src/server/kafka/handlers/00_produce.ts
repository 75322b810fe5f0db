// Produce 3-12: one record batch per partition, appended through the core (idempotence and
// transaction checks included). acks=0 gets no response; acks=1 and -1 are answered once the append
// is acknowledged under the storage durability policy. v11 only adds an error code Sluice does not
// send (TRANSACTION_ABORTABLE); from v12 (transaction version 2, KIP-890) a transactional batch's
// partition joins the producer's transaction without AddPartitionsToTxn. Not served: topic ids (v13).
// Authorization: WRITE on each topic and on the transactional id; CLUSTER_ACTION for a broker's append.
import { PRODUCE } from '../../../protocol/kafka/messages/00_produce.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import type { ResponseIn, Row } from '../../../protocol/kafka/schema.ts';
import { CloseConnection, kafka_handler, type RequestContext } from '../handler.ts';
import { allowed, allowed_on_cluster, refusal } from '../authorize.ts';
import { error_fields } from '../error_map.ts';

type PartitionResponse = Row<Row<ResponseIn<typeof PRODUCE>['responses']>['partition_responses']>;

const is_acks = (acks: number): acks is -1 | 0 | 1 => acks === 0 || acks === 1 || acks === -1;

/** A broker's own forwarded append (its delay headers already served). */
const BROKER_APPEND = { broker_append: true } as const;

export const produce_handler = kafka_handler(
  PRODUCE,
  {
    min: 3,
    max: 12,
    notes: 'one batch per partition; acks 0, 1, -1; v12: partitions join transactions; advertised from v0 (see below)',
  },
  async (request, ctx) => {
    const acks = request.acks;
    // A transactional produce names its transactional id: a leader may verify it with the coordinator.
    const options = request.transactional_id
      ? {
          broker_append: request.sluice_broker_append,
          transactional_id: request.transactional_id,
          join_txn: ctx.version >= 12,
        }
      : request.sluice_broker_append
        ? BROKER_APPEND
        : undefined;
    const refused_request = produce_refusal(request.transactional_id, request.sluice_broker_append, ctx);
    const responses = await Promise.all(
      request.topic_data.map(async (topic) => {
        const refused =
          refused_request ??
          (allowed(ctx, 'write', 'topic', topic.name) ? null : refusal(ctx, 'write', 'topic', topic.name));
        const partitions = await Promise.all(
          topic.partition_data.map(async (partition): Promise<PartitionResponse & { error_code: number }> => {
            const base = {
              index: partition.index,
              base_offset: -1,
              log_append_time_ms: -1,
              log_start_offset: -1,
              record_errors: [],
              error_message: null,
            };
            if (refused) return { ...base, ...refused };
            if (!is_acks(acks)) return { ...base, error_code: ErrorCode.INVALID_REQUIRED_ACKS };
            const records = partition.records;
            if (records === null || records.length === 0)
              return { ...base, error_code: ErrorCode.INVALID_RECORD, error_message: 'no records' };
            try {
              const result = await ctx.core.partitions.produce(topic.name, partition.index, records, acks, options);
              return { ...base, error_code: 0, ...result };
            } catch (error) {
              return { ...base, ...error_fields(error) };
            }
          }),
        );
        return { name: topic.name, partition_responses: partitions };
      }),
    );
    if (acks === 0) {
      // No response to carry the error: like Kafka, close the connection so the client notices.
      const refused = responses.some((t) => t.partition_responses.some((p) => p.error_code !== 0));
      if (refused) throw new CloseConnection('a produce with acks=0 was refused');
      return null;
    }
    return { responses, throttle_time_ms: 0 };
  },
);

/** Why the whole request is refused: a transactional id it may not write, or a broker's append from a client. */
function produce_refusal(transactional_id: string | null, broker_append: boolean, ctx: RequestContext) {
  if (broker_append && !allowed_on_cluster(ctx, 'cluster_action')) return refusal(ctx, 'cluster_action', 'cluster', '');
  if (transactional_id !== null && !allowed(ctx, 'write', 'transactional_id', transactional_id))
    return refusal(ctx, 'write', 'transactional_id', transactional_id);
  return null;
}
