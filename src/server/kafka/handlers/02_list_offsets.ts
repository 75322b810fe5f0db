// ListOffsets 1-6: earliest (-2), latest (-1: the high watermark, or for read_committed the last
// stable offset), or the first offset whose timestamp is at or after a given time. Not served: max
// timestamp (-3) and the other special timestamps (INVALID_REQUEST).
import { LIST_OFFSETS } from '../../../protocol/kafka/messages/02_list_offsets.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import type { RequestOf, ResponseIn, Row } from '../../../protocol/kafka/schema.ts';
import { kafka_handler, type RequestContext } from '../handler.ts';
import { kafka_error_code } from '../error_map.ts';
import { allowed, REFUSED } from '../authorize.ts';

const LATEST = -1;
const EARLIEST = -2;
const READ_COMMITTED = 1;

type PartitionRequest = Row<Row<RequestOf<typeof LIST_OFFSETS>['topics']>['partitions']>;
type PartitionResponse = Row<Row<ResponseIn<typeof LIST_OFFSETS>['topics']>['partitions']>;

async function list_offset(
  ctx: RequestContext,
  topic: string,
  partition: PartitionRequest,
  read_committed: boolean,
): Promise<PartitionResponse> {
  const row = {
    partition_index: partition.partition_index,
    error_code: 0,
    timestamp: -1,
    offset: -1,
    leader_epoch: 0,
    old_style_offsets: [],
  };
  if (!allowed(ctx, 'describe', 'topic', topic)) return { ...row, error_code: REFUSED.topic };
  try {
    const source = ctx.core.partitions.consumer_source(topic, partition.partition_index);
    const timestamp = partition.timestamp;
    if (timestamp === LATEST)
      row.offset = read_committed
        ? ctx.core.partitions.transactions(topic, partition.partition_index).last_stable_offset()
        : source.high_watermark;
    else if (timestamp === EARLIEST) row.offset = source.log_start_offset;
    else if (timestamp >= 0) {
      const found = await source.offset_for_timestamp(timestamp);
      if (found) {
        row.offset = found.offset;
        row.timestamp = found.timestamp_ms;
      }
    } else row.error_code = ErrorCode.INVALID_REQUEST;
  } catch (error) {
    row.error_code = kafka_error_code(error);
  }
  return row;
}

export const list_offsets_handler = kafka_handler(
  LIST_OFFSETS,
  { min: 1, max: 6, notes: 'earliest (-2), latest (-1), by timestamp' },
  async (request, ctx) => {
    const topics = await Promise.all(
      request.topics.map(async (topic) => ({
        name: topic.name,
        partitions: await Promise.all(
          topic.partitions.map((partition) =>
            list_offset(ctx, topic.name, partition, request.isolation_level === READ_COMMITTED),
          ),
        ),
      })),
    );
    return { throttle_time_ms: 0, topics };
  },
);
