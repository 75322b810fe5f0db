// Committed offsets: OffsetCommit and OffsetFetch, checked against group membership first.
import { OFFSET_COMMIT } from '../../../protocol/kafka/messages/08_offset_commit.ts';
import { OFFSET_FETCH } from '../../../protocol/kafka/messages/09_offset_fetch.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import { BrokerError } from '../../../broker/errors.ts';
import type { OffsetCommitEntry } from '../../../broker/offset_store.ts';
import type { KafkaHandler } from '../handler.ts';
import { kafka_error_code } from '../error_map.ts';
import { type Row, rows, versions } from './util.ts';

/** Longest metadata string stored with a committed offset. */
const OFFSET_METADATA_BYTES_MAX = 4096;

export const offset_commit_handler: KafkaHandler = {
  api: OFFSET_COMMIT,
  ...versions(OFFSET_COMMIT, 2, 8),
  async handle(request, ctx) {
    const group_id = request.group_id as string;
    const generation = (request.generation_id_or_member_epoch ?? request.generation_id) as number;
    const topics = rows(request.topics);
    const answer = (code_of: (topic: string, partition: number) => number) => ({
      throttle_time_ms: 0,
      topics: topics.map((t) => ({
        name: t.name,
        partitions: rows(t.partitions).map((p) => ({ partition_index: p.partition_index, error_code: code_of(t.name as string, p.partition_index as number) })),
      })),
    });
    try {
      ctx.broker.groups.validate_commit(group_id, request.member_id as string, generation, (request.group_instance_id as string | null | undefined) ?? null);
    } catch (error) {
      const code = kafka_error_code(error);
      return answer(() => code);
    }
    const errors = new Map<string, number>();
    const entries: OffsetCommitEntry[] = [];
    for (const topic of topics) {
      for (const partition of rows(topic.partitions)) {
        const key = `${topic.name as string}:${partition.partition_index as number}`;
        const metadata = (partition.committed_metadata as string | null) ?? null;
        if (!ctx.broker.topics.get(topic.name as string)) errors.set(key, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
        else if (metadata !== null && Buffer.byteLength(metadata) > OFFSET_METADATA_BYTES_MAX) errors.set(key, ErrorCode.OFFSET_METADATA_TOO_LARGE);
        else {
          entries.push({
            topic: topic.name as string,
            partition: partition.partition_index as number,
            offset: partition.committed_offset as number,
            metadata,
            leader_epoch: (partition.committed_leader_epoch as number | undefined) ?? -1,
          });
        }
      }
    }
    try {
      await ctx.broker.offsets.commit(group_id, entries);
    } catch (error) {
      const code = kafka_error_code(error);
      return answer((t, p) => errors.get(`${t}:${p}`) ?? code);
    }
    return answer((t, p) => errors.get(`${t}:${p}`) ?? 0);
  },
};

export const offset_fetch_handler: KafkaHandler = {
  api: OFFSET_FETCH,
  ...versions(OFFSET_FETCH, 1, 7),
  handle(request, ctx) {
    const group_id = request.group_id as string;
    const requested = request.topics as Row[] | null;
    if (!ctx.broker.is_group_coordinator) return { throttle_time_ms: 0, topics: [], error_code: ErrorCode.NOT_COORDINATOR };
    let topics: Array<{ name: string; partitions: number[] }>;
    if (requested === null) {
      const by_topic = new Map<string, number[]>();
      for (const entry of ctx.broker.offsets.all(group_id)) {
        if (!by_topic.has(entry.topic)) by_topic.set(entry.topic, []);
        by_topic.get(entry.topic)!.push(entry.partition);
      }
      topics = [...by_topic].map(([name, partitions]) => ({ name, partitions }));
    } else {
      topics = requested.map((t) => ({ name: t.name as string, partitions: (t.partition_indexes as number[]) ?? [] }));
    }
    const error_code = group_id === '' ? kafka_error_code(new BrokerError('invalid_group_id', 'empty group id')) : 0;
    return {
      throttle_time_ms: 0,
      topics: topics.map((t) => ({
        name: t.name,
        partitions: t.partitions.map((partition_index) => {
          const committed = ctx.broker.offsets.get(group_id, t.name, partition_index);
          return {
            partition_index,
            committed_offset: committed?.offset ?? -1,
            committed_leader_epoch: committed?.leader_epoch ?? -1,
            metadata: committed?.metadata ?? '',
            error_code: 0,
          };
        }),
      })),
      error_code,
    };
  },
};
