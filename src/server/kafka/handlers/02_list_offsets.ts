// ListOffsets 1-10: earliest (-2, and -4, earliest-local: there is no tiered storage), latest (-1:
// the high watermark, or for read_committed the last stable offset), max timestamp (-3, v7+: the
// first record with the largest timestamp below the high watermark), latest-tiered (-5, v9+:
// offset -1, nothing is tiered), or the first offset whose timestamp is at or after a given time.
// Other negative timestamps are INVALID_REQUEST.
import { LIST_OFFSETS } from '../../../protocol/kafka/messages/02_list_offsets.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import type { RequestOf, ResponseIn, Row } from '../../../protocol/kafka/schema.ts';
import { decode_record_batch } from '../../../protocol/record_batch.ts';
import { decompress_record_batch } from '../../../protocol/compression.ts';
import { ATTRIBUTE_LOG_APPEND_TIME, batch_attributes } from '../../../format/batch_layout.ts';
import { MAX_TIMESTAMP_LOOKUP, type ConsumerSource } from '../../../core/index.ts';
import { kafka_handler, type RequestContext } from '../handler.ts';
import { kafka_error_code } from '../error_map.ts';
import { allowed, REFUSED } from '../authorize.ts';

const LATEST = -1;
const EARLIEST = -2;
const MAX_TIMESTAMP = MAX_TIMESTAMP_LOOKUP;
const EARLIEST_LOCAL = -4;
const LATEST_TIERED = -5;
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
    else if (timestamp === EARLIEST || timestamp === EARLIEST_LOCAL) row.offset = source.log_start_offset;
    else if (timestamp === LATEST_TIERED) row.leader_epoch = -1;
    else if (timestamp === MAX_TIMESTAMP || timestamp >= 0) {
      const found = await source.offset_for_timestamp(timestamp);
      if (found) Object.assign(row, await first_record(source, found));
    } else row.error_code = ErrorCode.INVALID_REQUEST;
  } catch (error) {
    row.error_code = kafka_error_code(error);
  }
  return row;
}

/**
 * What a lookup found, made exact: the first record from `found.offset` on, in the batch holding
 * it, with a timestamp at or after `found.timestamp_ms` (the time asked for, or the largest one),
 * and its own timestamp. A batch stamped LogAppendTime has none of its own on its records: then
 * what the lookup found.
 */
async function first_record(
  source: ConsumerSource,
  found: { offset: number; timestamp_ms: number },
): Promise<{ offset: number; timestamp: number }> {
  const [batch] = (await source.read(found.offset, 1)).batches;
  const own_times = batch !== undefined && (batch_attributes(batch, 0) & ATTRIBUTE_LOG_APPEND_TIME) === 0;
  const records = own_times ? decode_record_batch(await decompress_record_batch(batch)) : [];
  const record = records.find((r) => r.offset >= found.offset && r.timestamp_ms >= found.timestamp_ms);
  return record
    ? { offset: record.offset, timestamp: record.timestamp_ms }
    : { offset: found.offset, timestamp: found.timestamp_ms };
}

export const list_offsets_handler = kafka_handler(
  LIST_OFFSETS,
  {
    min: 1,
    max: 10,
    notes:
      'earliest (-2, and earliest-local -4), latest (-1), max timestamp (-3), latest-tiered (-5: -1, nothing is ' +
      'tiered), by timestamp',
  },
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
