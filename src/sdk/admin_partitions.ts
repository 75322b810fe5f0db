// Admin: partitions. CreatePartitions (raising a topic's partition count, at the controller) and
// partition reassignments: AlterPartitionReassignments (moving partitions to new replica sets, or
// cancelling a move) and ListPartitionReassignments (the moves in progress), which any broker of
// a cluster takes. Topics themselves are admin_topics.ts's; routing and retries admin_requests.ts's.
import { check_code } from './errors.ts';
import type { PartitionReassignments, TopicPartitionConfig } from './admin_types.ts';
import { TIMEOUT_MS_DEFAULT, invalid, topic_label, topic_outcomes, type AdminRequests } from './admin_requests.ts';
import { CREATE_PARTITIONS } from '../protocol/kafka/messages/37_create_partitions.ts';
import { ALTER_PARTITION_REASSIGNMENTS } from '../protocol/kafka/messages/45_alter_partition_reassignments.ts';
import { LIST_PARTITION_REASSIGNMENTS } from '../protocol/kafka/messages/46_list_partition_reassignments.ts';

type ReassignmentTopics = Array<{ topic: string; partitions: Array<{ partition: number; replicas: number[] | null }> }>;

/** Raises the partition count of topics to `count`. */
export async function create_partitions(
  admin: AdminRequests,
  options: { topicPartitions: TopicPartitionConfig[]; validateOnly?: boolean; timeout?: number },
): Promise<void> {
  const list = options?.topicPartitions;
  if (!Array.isArray(list) || list.length === 0) {
    throw invalid('createPartitions: topicPartitions must be a non-empty array');
  }
  if (list.some((t) => typeof t?.topic !== 'string' || !Number.isInteger(t.count))) {
    throw invalid('createPartitions: each entry needs a topic name and an integer count');
  }
  const by_name = new Map(list.map((t) => [t.topic, t]));
  if (by_name.size < list.length) throw invalid('createPartitions: a topic is listed more than once');
  const timeout = options.timeout ?? TIMEOUT_MS_DEFAULT;
  await admin.retry_pending(
    'CreatePartitions',
    [...by_name.keys()],
    async (pending) => {
      const controller = await admin.cluster.controller();
      const { response } = await controller.send(CREATE_PARTITIONS, 0, 3, {
        topics: pending.map((name) => {
          const t = by_name.get(name)!;
          return {
            name,
            count: t.count,
            assignments: t.assignments ? t.assignments.map((broker_ids) => ({ broker_ids })) : null,
          };
        }),
        timeout_ms: timeout,
        validate_only: Boolean(options.validateOnly),
      });
      return topic_outcomes(response.results);
    },
    topic_label,
  );
  for (const name of by_name.keys()) admin.cluster.topics.delete(name);
}

function check_reassignments(topics: ReassignmentTopics): void {
  if (!Array.isArray(topics) || topics.length === 0) {
    throw invalid('alterPartitionReassignments: topics must be a non-empty array');
  }
  for (const t of topics) {
    if (typeof t?.topic !== 'string' || !Array.isArray(t.partitions)) {
      throw invalid('alterPartitionReassignments: each entry needs a topic and partitions');
    }
    for (const p of t.partitions) {
      const replicas_valid =
        p?.replicas === null || (Array.isArray(p?.replicas) && p.replicas.every((id) => Number.isInteger(id)));
      if (!Number.isInteger(p?.partition) || !replicas_valid) {
        throw invalid(
          `alterPartitionReassignments: ${t.topic}: each partition needs a partition number and replicas ` +
            '(node ids, or null to cancel)',
        );
      }
    }
  }
}

/**
 * Moves partitions to new replica sets, preferred leader first (AlterPartitionReassignments). The
 * new replicas copy the partition; it switches to them once all are in sync. `replicas: null`
 * cancels a move in progress. Any broker of a cluster takes the request.
 */
export async function alter_partition_reassignments(
  admin: AdminRequests,
  options: { topics: ReassignmentTopics },
): Promise<void> {
  const topics = options?.topics;
  check_reassignments(topics);
  await admin.cluster.with_retry('AlterPartitionReassignments', async () => {
    const connection = await admin.cluster.any();
    const { response } = await connection.send(ALTER_PARTITION_REASSIGNMENTS, 0, 0, {
      timeout_ms: 60_000,
      topics: topics.map((t) => ({
        name: t.topic,
        partitions: t.partitions.map((p) => ({ partition_index: p.partition, replicas: p.replicas })),
      })),
    });
    check_code(response.error_code, 'AlterPartitionReassignments', response.error_message);
    for (const t of response.responses) {
      for (const p of t.partitions) {
        check_code(p.error_code, `reassigning ${t.name}-${p.partition_index}`, p.error_message);
      }
    }
  });
}

/**
 * The reassignments in progress (ListPartitionReassignments): for the partitions given, or for
 * all when `topics` is left out. Partitions not being moved are not listed.
 */
export async function list_partition_reassignments(
  admin: AdminRequests,
  options: { topics?: Array<{ topic: string; partitions: number[] }> },
): Promise<PartitionReassignments> {
  const topics = options.topics ?? null;
  if (
    topics !== null &&
    (!Array.isArray(topics) ||
      topics.some(
        (t) =>
          typeof t?.topic !== 'string' ||
          !Array.isArray(t.partitions) ||
          t.partitions.some((p) => !Number.isInteger(p)),
      ))
  ) {
    throw invalid('listPartitionReassignments: topics must be an array of { topic, partitions: [numbers] }');
  }
  return admin.cluster.with_retry('ListPartitionReassignments', async () => {
    const connection = await admin.cluster.any();
    const { response } = await connection.send(LIST_PARTITION_REASSIGNMENTS, 0, 0, {
      timeout_ms: 60_000,
      topics: topics === null ? null : topics.map((t) => ({ name: t.topic, partition_indexes: t.partitions })),
    });
    check_code(response.error_code, 'ListPartitionReassignments', response.error_message);
    return {
      topics: response.topics.map((t) => ({
        topic: t.name,
        partitions: t.partitions.map((p) => ({
          partition: p.partition_index,
          replicas: p.replicas,
          addingReplicas: p.adding_replicas,
          removingReplicas: p.removing_replicas,
        })),
      })),
    };
  });
}
