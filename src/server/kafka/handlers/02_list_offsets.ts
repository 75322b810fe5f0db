// ListOffsets 1-6: earliest (-2), latest (-1, the high watermark, which is also the last stable
// offset), or the first offset whose timestamp is at or after a given time.
import { LIST_OFFSETS } from '../../../protocol/kafka/messages/02_list_offsets.ts';
import type { KafkaHandler } from '../handler.ts';
import { kafka_error_code } from '../error_map.ts';
import { type Row, rows, versions } from './util.ts';

const LATEST = -1;
const EARLIEST = -2;

export const list_offsets_handler: KafkaHandler = {
  api: LIST_OFFSETS,
  ...versions(LIST_OFFSETS, 1, 6),
  async handle(request, ctx) {
    const topics = await Promise.all(
      rows(request.topics).map(async (topic) => ({
        name: topic.name,
        partitions: await Promise.all(
          rows(topic.partitions).map(async (partition): Promise<Row> => {
            const row: Row = { partition_index: partition.partition_index, error_code: 0, timestamp: -1, offset: -1, leader_epoch: 0, old_style_offsets: [] };
            try {
              const log = ctx.broker.read_log(topic.name as string, partition.partition_index as number);
              const timestamp = partition.timestamp as number;
              if (timestamp === LATEST) row.offset = log.high_watermark;
              else if (timestamp === EARLIEST) row.offset = log.log_start_offset;
              else if (timestamp >= 0) {
                const found = await log.offset_for_timestamp(timestamp);
                if (found) {
                  row.offset = found.offset;
                  row.timestamp = found.timestamp_ms;
                }
              } else row.error_code = 42; // INVALID_REQUEST: special timestamps beyond -1/-2 are not supported
            } catch (error) {
              row.error_code = kafka_error_code(error);
            }
            return row;
          }),
        ),
      })),
    );
    return { throttle_time_ms: 0, topics };
  },
};
