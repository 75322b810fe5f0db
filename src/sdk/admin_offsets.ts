// Admin: offsets. A topic's offsets (ListOffsets at each partition's leader: high watermark, log
// start, by timestamp), deleting records below an offset (DeleteRecords), and a consumer group's
// committed offsets (OffsetFetch; resetOffsets and setOffsets commit with OffsetCommit, refused
// while the group has members). Groups themselves are admin_groups.ts's; routing and retries
// admin_requests.ts's.
import { KafkaProtocolError } from './errors.ts';
import {
  AdminError,
  type AdminFailure,
  type FetchOffsetsPartition,
  type SeekEntry,
  type SeekInput,
  type TopicOffsets,
} from './admin_types.ts';
import {
  EARLIEST,
  LATEST,
  TIMEOUT_MS_DEFAULT,
  coded_failure,
  group_label,
  invalid,
  no_answer,
  parse_offset,
  partition_label,
  partition_outcomes,
  thrown_failure,
  type AdminRequests,
} from './admin_requests.ts';
import { describe_groups } from './admin_groups.ts';
import type { BrokerConnection } from './cluster.ts';
import { ErrorCode } from '../protocol/kafka/error_codes.ts';
import { LIST_OFFSETS } from '../protocol/kafka/messages/02_list_offsets.ts';
import { OFFSET_COMMIT } from '../protocol/kafka/messages/08_offset_commit.ts';
import { OFFSET_FETCH } from '../protocol/kafka/messages/09_offset_fetch.ts';
import { DELETE_RECORDS } from '../protocol/kafka/messages/21_delete_records.ts';

type TopicCommitted = { topic: string; partitions: FetchOffsetsPartition[] };

function check_topic(operation: string, topic: string): void {
  if (typeof topic !== 'string' || topic === '') throw invalid(`${operation}: invalid topic ${JSON.stringify(topic)}`);
}

function check_group_id(operation: string, group_id: string): void {
  if (typeof group_id !== 'string' || group_id === '') {
    throw invalid(`${operation}: invalid groupId ${JSON.stringify(group_id)}`);
  }
}

/** ListOffsets for `partitions` of `topic` (timestamp per partition; -1 latest, -2 earliest). */
async function list_offsets(
  admin: AdminRequests,
  topic: string,
  partitions: number[],
  timestamp: (partition: number) => number,
): Promise<Map<number, number>> {
  const offsets = new Map<number, number>();
  await admin.on_leaders('ListOffsets', topic, partitions, async (connection, list) => {
    const { response } = await connection.send(LIST_OFFSETS, 1, 10, {
      replica_id: -1,
      isolation_level: 0,
      topics: [
        {
          name: topic,
          partitions: list.map((partition_index) => ({
            partition_index,
            current_leader_epoch: -1,
            timestamp: timestamp(partition_index),
            max_num_offsets: 1,
          })),
        },
      ],
      timeout_ms: 30_000,
    });
    return partition_outcomes(topic, response.topics, (p) => offsets.set(p.partition_index, p.offset));
  });
  return offsets;
}

/** Each partition's high watermark (`offset` and `high`) and log start offset (`low`). */
export async function fetch_topic_offsets(admin: AdminRequests, topic: string): Promise<TopicOffsets[]> {
  check_topic('fetchTopicOffsets', topic);
  const partitions = (await admin.topic_info(topic)).partitions.map((p) => p.partition);
  const [high, low] = await Promise.all([
    list_offsets(admin, topic, partitions, () => LATEST),
    list_offsets(admin, topic, partitions, () => EARLIEST),
  ]);
  return partitions.map((partition) => {
    const h = String(high.get(partition)!);
    return { partition, offset: h, high: h, low: String(low.get(partition)!) };
  });
}

/**
 * Each partition's first offset whose timestamp is at or after `timestamp` (ms), or its high
 * watermark when there is none; without a timestamp, the high watermark.
 */
export async function fetch_topic_offsets_by_timestamp(
  admin: AdminRequests,
  topic: string,
  timestamp?: number,
): Promise<SeekEntry[]> {
  check_topic('fetchTopicOffsetsByTimestamp', topic);
  if (timestamp !== undefined && (!Number.isSafeInteger(timestamp) || timestamp < 0)) {
    throw invalid(`fetchTopicOffsetsByTimestamp: invalid timestamp ${timestamp}`);
  }
  const partitions = (await admin.topic_info(topic)).partitions.map((p) => p.partition);
  const high = await list_offsets(admin, topic, partitions, () => LATEST);
  const found = timestamp === undefined ? high : await list_offsets(admin, topic, partitions, () => timestamp);
  return partitions.map((partition) => {
    const offset = found.get(partition)!;
    return { partition, offset: String(offset >= 0 ? offset : high.get(partition)!) };
  });
}

/**
 * Deletes the records before `offset` in each partition (moves its log start offset); offset -1
 * means the high watermark (everything written so far).
 */
export async function delete_topic_records(
  admin: AdminRequests,
  options: { topic: string; partitions: SeekInput[]; timeout?: number },
): Promise<void> {
  const topic = options?.topic;
  check_topic('deleteTopicRecords', topic);
  if (!Array.isArray(options.partitions) || options.partitions.length === 0) {
    throw invalid('deleteTopicRecords: partitions must be a non-empty array');
  }
  const offsets = new Map<number, number>();
  for (const { partition, offset } of options.partitions) {
    const what = `deleteTopicRecords ${partition_label(topic, partition)}`;
    const value = parse_offset(offset, what);
    if (value === EARLIEST) throw invalid(`${what}: offset -2 is not valid here (-1 means the high watermark)`);
    offsets.set(partition, value);
  }
  await admin.check_partitions('DeleteRecords', topic, [...offsets.keys()]);
  const timeout = options.timeout ?? TIMEOUT_MS_DEFAULT;
  await admin.on_leaders('DeleteRecords', topic, [...offsets.keys()], async (connection, partitions) => {
    const { response } = await connection.send(DELETE_RECORDS, 0, 2, {
      topics: [
        {
          name: topic,
          partitions: partitions.map((partition_index) => ({ partition_index, offset: offsets.get(partition_index)! })),
        },
      ],
      timeout_ms: timeout,
    });
    return partition_outcomes(topic, response.topics);
  });
}

/** One OffsetFetch of a group at its coordinator: every topic's partitions, sorted by partition. */
async function offset_fetch(
  connection: BrokerConnection,
  group_id: string,
  wanted: Array<{ name: string; partition_indexes: number[] }> | null,
): Promise<TopicCommitted[]> {
  const { version, response } = await connection.send(OFFSET_FETCH, wanted === null ? 2 : 1, 9, (v) =>
    v >= 8
      ? { groups: [{ group_id, member_id: null, member_epoch: -1, topics: wanted }], require_stable: false }
      : { group_id, topics: wanted, require_stable: false },
  );
  const group = version >= 8 ? response.groups.find((g) => g.group_id === group_id) : response;
  if (!group) throw new AdminError('OffsetFetch', [no_answer(group_label(group_id))]);
  const code = group.error_code;
  if (code !== ErrorCode.NONE) throw new AdminError('OffsetFetch', [coded_failure(group_label(group_id), code, null)]);
  const failures: AdminFailure[] = [];
  const out = group.topics.map((t) => ({
    topic: t.name,
    partitions: t.partitions
      .map((p) => {
        const partition_code = p.error_code;
        if (partition_code !== ErrorCode.NONE) {
          failures.push(coded_failure(partition_label(t.name, p.partition_index), partition_code, null));
        }
        return { partition: p.partition_index, offset: String(p.committed_offset), metadata: p.metadata || null };
      })
      .sort((a, b) => a.partition - b.partition),
  }));
  if (failures.length > 0) throw new AdminError('OffsetFetch', failures);
  return out;
}

/**
 * A group's committed offsets: for each topic in `topics`, every partition ('-1' where nothing is
 * committed); without `topics`, every partition the group has committed.
 */
export async function fetch_offsets(
  admin: AdminRequests,
  options: { groupId: string; topics?: string[] },
): Promise<TopicCommitted[]> {
  const group_id = options?.groupId;
  check_group_id('fetchOffsets', group_id);
  const topics = options.topics ?? [];
  if (!Array.isArray(topics) || topics.some((t) => typeof t !== 'string' || t === '')) {
    throw invalid('fetchOffsets: topics must be an array of topic names');
  }
  const wanted =
    topics.length === 0
      ? null
      : await Promise.all(
          [...new Set(topics)].map(async (name) => ({
            name,
            partition_indexes: (await admin.topic_info(name)).partitions.map((p) => p.partition),
          })),
        );
  const result = await admin.on_coordinator('OffsetFetch', group_id, (connection) =>
    offset_fetch(connection, group_id, wanted),
  );
  if (wanted === null) return result.sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0));
  return wanted.map(({ name }) => result.find((t) => t.topic === name) ?? { topic: name, partitions: [] });
}

/**
 * Commits each partition of `topic` for `groupId` at its log start offset (`earliest`) or high
 * watermark: concrete offsets, read with ListOffsets. Refused while the group has members.
 */
export async function reset_offsets(
  admin: AdminRequests,
  options: { groupId: string; topic: string; earliest?: boolean },
): Promise<void> {
  const group_id = options?.groupId;
  const topic = options?.topic;
  check_group_id('resetOffsets', group_id);
  check_topic('resetOffsets', topic);
  await refuse_if_active(admin, 'resetOffsets', group_id);
  const partitions = (await admin.topic_info(topic)).partitions.map((p) => p.partition);
  const offsets = await list_offsets(admin, topic, partitions, () => (options.earliest ? EARLIEST : LATEST));
  await commit_offsets(admin, group_id, topic, offsets);
}

/**
 * Commits the given offsets for `groupId` (-1 and -2 are resolved to the high watermark and the
 * log start offset first, so the committed offsets are concrete). Refused while the group has
 * members.
 */
export async function set_offsets(
  admin: AdminRequests,
  options: { groupId: string; topic: string; partitions: SeekInput[] },
): Promise<void> {
  const group_id = options?.groupId;
  const topic = options?.topic;
  const partitions = options?.partitions;
  check_group_id('setOffsets', group_id);
  check_topic('setOffsets', topic);
  if (!Array.isArray(partitions) || partitions.length === 0) {
    throw invalid('setOffsets: partitions must be a non-empty array');
  }
  const offsets = new Map<number, number>();
  for (const { partition, offset } of partitions) {
    offsets.set(partition, parse_offset(offset, `setOffsets ${partition_label(topic, partition)}`));
  }
  await refuse_if_active(admin, 'setOffsets', group_id);
  await admin.check_partitions('OffsetCommit', topic, [...offsets.keys()]);
  const special = [...offsets].filter(([, offset]) => offset < 0).map(([partition]) => partition);
  if (special.length > 0) {
    const resolved = await list_offsets(admin, topic, special, (partition) => offsets.get(partition)!);
    for (const [partition, offset] of resolved) offsets.set(partition, offset);
  }
  await commit_offsets(admin, group_id, topic, offsets);
}

/** Refuses offset changes while `group_id` has members (their commits would race ours). */
async function refuse_if_active(admin: AdminRequests, operation: string, group_id: string): Promise<void> {
  const [group] = (await describe_groups(admin, [group_id])).groups;
  if (group && group.members.length > 0) {
    throw new KafkaProtocolError(
      ErrorCode.NON_EMPTY_GROUP,
      `${operation} for ${group_label(group_id)}`,
      'the consumer group must have no running instances; ' +
        `it has ${group.members.length} member(s), state ${group.state}`,
    );
  }
}

/** Commits `offsets` for a group without members (generation -1, empty member id). */
async function commit_offsets(
  admin: AdminRequests,
  group_id: string,
  topic: string,
  offsets: Map<number, number>,
): Promise<void> {
  await admin.retry_pending(
    'OffsetCommit',
    [...offsets.keys()],
    async (pending) => {
      let connection: BrokerConnection;
      try {
        connection = await admin.coordinator(group_id);
      } catch (error) {
        return new Map(pending.map((p) => [p, thrown_failure(partition_label(topic, p), error)]));
      }
      const { response } = await connection.send(OFFSET_COMMIT, 2, 9, {
        group_id,
        generation_id_or_member_epoch: -1,
        member_id: '',
        group_instance_id: null,
        retention_time_ms: -1,
        topics: [
          {
            name: topic,
            partitions: pending.map((partition_index) => ({
              partition_index,
              committed_offset: offsets.get(partition_index)!,
              committed_leader_epoch: -1,
              commit_timestamp: -1,
              committed_metadata: null,
            })),
          },
        ],
      });
      const outcomes = partition_outcomes(topic, response.topics, undefined, [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
      for (const outcome of outcomes.values()) {
        if (outcome?.code === ErrorCode.UNKNOWN_MEMBER_ID || outcome?.code === ErrorCode.ILLEGAL_GENERATION) {
          outcome.message = 'the group has members now; stop its consumers before changing its offsets';
        }
      }
      return outcomes;
    },
    (p) => partition_label(topic, p),
  );
}
