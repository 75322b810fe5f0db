// DeleteRecords 0-2: moves partitions' log start forward (offset -1: to the high watermark);
// OFFSET_OUT_OF_RANGE past the high watermark.
import { DELETE_RECORDS } from '../../../protocol/kafka/messages/21_delete_records.ts';
import { audit, require_allowed } from '../authorize.ts';
import { kafka_handler } from '../handler.ts';
import { kafka_error_code } from '../error_map.ts';

export const delete_records_handler = kafka_handler(
  DELETE_RECORDS,
  { min: 0, max: 2, notes: 'moves the log start offset durably' },
  async (request, ctx) => {
    const topics = [];
    for (const topic of request.topics) {
      const partitions = [];
      for (const partition of topic.partitions) {
        const row = { partition_index: partition.partition_index, low_watermark: -1, error_code: 0 };
        try {
          require_allowed(ctx, 'delete', 'topic', topic.name);
          row.low_watermark = await ctx.core.partitions.delete_records(
            topic.name,
            partition.partition_index,
            partition.offset,
          );
          audit(ctx, 'delete records', {
            topic: topic.name,
            partition: partition.partition_index,
            before: row.low_watermark,
          });
        } catch (error) {
          row.error_code = kafka_error_code(error);
        }
        partitions.push(row);
      }
      topics.push({ name: topic.name, partitions });
    }
    return { throttle_time_ms: 0, topics };
  },
);
