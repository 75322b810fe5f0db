// Produce 3-10: one record batch per partition, appended through the broker core (idempotence
// checks included). acks=0 gets no response; acks=1 and -1 are answered once the append is
// acknowledged under the storage durability policy.
import { PRODUCE } from '../../../protocol/kafka/messages/00_produce.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import { CloseConnection, type KafkaHandler } from '../handler.ts';
import { kafka_error_code, error_message } from '../error_map.ts';
import { type Row, rows, versions } from './util.ts';

export const produce_handler: KafkaHandler = {
  api: PRODUCE,
  ...versions(PRODUCE, 3, 10),
  async handle(request, ctx) {
    const acks = request.acks as number;
    const topics = rows(request.topic_data);
    const responses = await Promise.all(
      topics.map(async (topic) => {
        const name = topic.name as string;
        const partitions = await Promise.all(
          rows(topic.partition_data).map(async (partition): Promise<Row> => {
            const index = partition.index as number;
            const base = { index, base_offset: -1, log_append_time_ms: -1, log_start_offset: -1, record_errors: [], error_message: null };
            if (acks !== 0 && acks !== 1 && acks !== -1) return { ...base, error_code: ErrorCode.INVALID_REQUIRED_ACKS };
            const records = partition.records as Buffer | null;
            if (records === null || records.length === 0) return { ...base, error_code: ErrorCode.INVALID_RECORD, error_message: 'no records' };
            try {
              const result = await ctx.broker.produce(name, index, records, acks);
              return { ...base, error_code: 0, ...result };
            } catch (error) {
              return { ...base, error_code: kafka_error_code(error), error_message: error_message(error) };
            }
          }),
        );
        return { name, partition_responses: partitions };
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
};
