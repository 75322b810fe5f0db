// Admin: topics. CreateTopics (optionally waiting until every partition has a leader), DeleteTopics
// (both sent to the controller), and the topic list and partition metadata (Metadata). Partition
// counts are admin_partitions.ts's; offsets and records admin_offsets.ts's; routing and retries
// admin_requests.ts's.
import { KafkaProtocolError } from './errors.ts';
import type { TopicConfig, TopicMetadata } from './admin_types.ts';
import {
  TIMEOUT_MS_DEFAULT,
  ZERO_UUID,
  coded_failure,
  invalid,
  sleep,
  topic_label,
  topic_outcomes,
  type AdminRequests,
  type Outcomes,
} from './admin_requests.ts';
import { ErrorCode } from '../protocol/kafka/error_codes.ts';
import { METADATA } from '../protocol/kafka/messages/03_metadata.ts';
import { CREATE_TOPICS } from '../protocol/kafka/messages/19_create_topics.ts';
import { DELETE_TOPICS } from '../protocol/kafka/messages/20_delete_topics.ts';

const WAIT_POLL_MS = 100;
/** While waiting for leaders: the topic is not known everywhere yet, or its leaders not elected. */
const NOT_READY_CODES = new Set<number>([ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, ErrorCode.LEADER_NOT_AVAILABLE]);

function check_topic_configs(topics: TopicConfig[]): void {
  if (!Array.isArray(topics)) throw invalid('createTopics: topics must be an array');
  if (topics.some((t) => typeof t?.topic !== 'string')) throw invalid('createTopics: each topic needs a name (topic)');
  if (new Set(topics.map((t) => t.topic)).size < topics.length) {
    throw invalid('createTopics: a topic is listed more than once');
  }
  for (const t of topics) {
    const entries = t.configEntries;
    if (
      entries !== undefined &&
      (!Array.isArray(entries) || entries.some((e) => typeof e?.name !== 'string' || typeof e?.value !== 'string'))
    ) {
      throw invalid(
        `createTopics: configEntries of topic ${JSON.stringify(t.topic)} must be an array of { name, value } strings`,
      );
    }
  }
}

/**
 * Creates topics. Resolves true when every topic was created, false when some already existed
 * (the others are created); other failures throw an AdminError naming each topic. With
 * `waitForLeaders` (the default) it waits, at most `timeout` ms, until metadata shows a leader for
 * every partition.
 */
export async function create_topics(
  admin: AdminRequests,
  options: { topics: TopicConfig[]; validateOnly?: boolean; waitForLeaders?: boolean; timeout?: number },
): Promise<boolean> {
  const topics = options?.topics;
  check_topic_configs(topics);
  if (topics.length === 0) return true;
  const timeout = options.timeout ?? TIMEOUT_MS_DEFAULT;
  const by_name = new Map(topics.map((t) => [t.topic, t]));
  let existed = false;
  await admin.retry_pending(
    'CreateTopics',
    [...by_name.keys()],
    async (pending) => {
      const controller = await admin.cluster.controller();
      const { response } = await controller.send(CREATE_TOPICS, 0, 7, {
        topics: pending.map((name) => {
          const t = by_name.get(name)!;
          return {
            name,
            num_partitions: t.numPartitions ?? -1,
            replication_factor: t.replicationFactor ?? -1,
            assignments: (t.replicaAssignment ?? []).map((a) => ({
              partition_index: a.partition,
              broker_ids: a.replicas,
            })),
            configs: (t.configEntries ?? []).map((e) => ({ name: e.name, value: e.value })),
          };
        }),
        timeout_ms: timeout,
        validate_only: Boolean(options.validateOnly),
      });
      const outcomes: Outcomes<string> = new Map();
      for (const result of response.topics) {
        const name = result.name;
        const code = result.error_code;
        if (code === ErrorCode.TOPIC_ALREADY_EXISTS) existed = true;
        const done = code === ErrorCode.NONE || code === ErrorCode.TOPIC_ALREADY_EXISTS;
        const failure = done
          ? null
          : coded_failure(topic_label(name), code, result.error_message, [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]);
        outcomes.set(name, failure);
      }
      return outcomes;
    },
    topic_label,
  );
  for (const name of by_name.keys()) admin.cluster.topics.delete(name);
  if (options.waitForLeaders !== false && !options.validateOnly) {
    await wait_for_leaders(admin, [...by_name.keys()], timeout);
  }
  return !existed;
}

/** Names of every topic in the cluster (internal ones included, as kafkajs lists them). */
export async function list_topics(admin: AdminRequests): Promise<string[]> {
  const topics = await metadata(admin, null);
  return topics.map((t) => t.name);
}

/** Partitions, leaders and replicas of `topics` (of every topic when absent or empty). */
export async function fetch_topic_metadata(
  admin: AdminRequests,
  options: { topics?: string[] },
): Promise<{ topics: TopicMetadata[] }> {
  const wanted = options.topics ?? [];
  if (!Array.isArray(wanted) || wanted.some((t) => typeof t !== 'string' || t === '')) {
    throw invalid('fetchTopicMetadata: topics must be an array of topic names');
  }
  return { topics: await metadata(admin, wanted.length === 0 ? null : wanted) };
}

/** Deletes topics; a topic that does not exist fails with UNKNOWN_TOPIC_OR_PARTITION. */
export async function delete_topics(
  admin: AdminRequests,
  options: { topics: string[]; timeout?: number },
): Promise<void> {
  const topics = options?.topics;
  if (!Array.isArray(topics) || topics.some((t) => typeof t !== 'string')) {
    throw invalid('deleteTopics: topics must be an array of topic names');
  }
  if (topics.length === 0) return;
  const timeout = options.timeout ?? TIMEOUT_MS_DEFAULT;
  await admin.retry_pending(
    'DeleteTopics',
    [...new Set(topics)],
    async (pending) => {
      const controller = await admin.cluster.controller();
      const { response } = await controller.send(DELETE_TOPICS, 0, 6, (version) =>
        version >= 6
          ? { topics: pending.map((name) => ({ name, topic_id: ZERO_UUID })), timeout_ms: timeout }
          : { topic_names: pending, timeout_ms: timeout },
      );
      // A name is null only for a topic deleted by id (v6+); these are deleted by name.
      return topic_outcomes(response.responses.filter((r): r is typeof r & { name: string } => r.name !== null));
    },
    topic_label,
  );
  for (const name of topics) admin.cluster.topics.delete(name);
}

/** Metadata of `topics` (all when null), with per-topic errors thrown together. */
async function metadata(admin: AdminRequests, topics: string[] | null): Promise<TopicMetadata[]> {
  const found = new Map<string, TopicMetadata>();
  const all: TopicMetadata[] = [];
  const keys = topics === null ? ['*'] : [...new Set(topics)];
  await admin.retry_pending(
    'Metadata',
    keys,
    async (pending) => {
      const connection = await admin.cluster.any();
      const { response } = await connection.send(METADATA, 1, 12, {
        topics: topics === null ? null : pending.map((name) => ({ name, topic_id: ZERO_UUID })),
        allow_auto_topic_creation: false,
        include_cluster_authorized_operations: false,
        include_topic_authorized_operations: false,
      });
      const outcomes: Outcomes<string> = new Map();
      if (topics === null) outcomes.set('*', null);
      for (const t of response.topics) {
        // Null only for a topic asked for by id (v12+); these are asked for by name.
        if (t.name === null) continue;
        const name = t.name;
        const code = t.error_code;
        if (code !== ErrorCode.NONE) {
          outcomes.set(name, coded_failure(topic_label(name), code, null, [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]));
          continue;
        }
        const metadata: TopicMetadata = {
          name,
          partitions: t.partitions
            .map((p) => ({
              partitionErrorCode: p.error_code,
              partitionId: p.partition_index,
              leader: p.leader_id,
              replicas: p.replica_nodes,
              isr: p.isr_nodes,
              offlineReplicas: p.offline_replicas,
            }))
            .sort((a, b) => a.partitionId - b.partitionId),
        };
        if (topics === null) all.push(metadata);
        else {
          found.set(name, metadata);
          outcomes.set(name, null);
        }
      }
      return outcomes;
    },
    topic_label,
  );
  return topics === null ? all : keys.map((name) => found.get(name)!);
}

/** Polls metadata until every partition of `topics` has a leader, at most `timeout_ms`. */
async function wait_for_leaders(admin: AdminRequests, topics: string[], timeout_ms: number): Promise<void> {
  const deadline = Date.now() + timeout_ms;
  for (;;) {
    let waiting: string | null = null;
    try {
      const found = await metadata(admin, topics);
      const unled = found.find((t) => t.partitions.length === 0 || t.partitions.some((p) => p.leader < 0));
      if (!unled) return;
      waiting = `topic ${JSON.stringify(unled.name)} has partitions without a leader`;
    } catch (error) {
      if (!(error instanceof KafkaProtocolError) || !NOT_READY_CODES.has(error.code)) throw error;
      waiting = error.message;
    }
    if (Date.now() + WAIT_POLL_MS > deadline) {
      throw new KafkaProtocolError(
        ErrorCode.LEADER_NOT_AVAILABLE,
        'CreateTopics',
        `timed out after ${timeout_ms} ms waiting for topic leaders (${waiting})`,
      );
    }
    await sleep(WAIT_POLL_MS);
  }
}
