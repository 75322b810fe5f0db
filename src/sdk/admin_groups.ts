// Admin: consumer groups. ListGroups (asked of every broker), DescribeGroups, ConsumerGroupDescribe
// (KIP-848 groups) and DeleteGroups (asked of each group's coordinator). Their committed offsets are
// admin_offsets.ts's; finding coordinators, routing and retries admin_requests.ts's.
import {
  AdminError,
  type ConsumerGroupDescription,
  type DeleteGroupsResult,
  type GroupDescription,
  type GroupOverview,
  type GroupState,
} from './admin_types.ts';
import { coded_failure, group_label, invalid, type AdminRequests, type Outcomes } from './admin_requests.ts';
import type { ResponseOf, Row } from '../protocol/kafka/schema.ts';
import { ErrorCode } from '../protocol/kafka/error_codes.ts';
import { DESCRIBE_GROUPS } from '../protocol/kafka/messages/15_describe_groups.ts';
import { LIST_GROUPS } from '../protocol/kafka/messages/16_list_groups.ts';
import { DELETE_GROUPS } from '../protocol/kafka/messages/42_delete_groups.ts';
import { CONSUMER_GROUP_DESCRIBE } from '../protocol/kafka/messages/69_consumer_group_describe.ts';

type DescribedGroup = Row<ResponseOf<typeof DESCRIBE_GROUPS>['groups']>;

export function check_group_ids(operation: string, group_ids: string[]): void {
  if (!Array.isArray(group_ids) || group_ids.some((g) => typeof g !== 'string' || g === '')) {
    throw invalid(`${operation}: groupIds must be an array of group ids`);
  }
}

/** Every group of every broker. */
export async function list_groups(admin: AdminRequests): Promise<{ groups: GroupOverview[] }> {
  const cluster = admin.cluster;
  await cluster.with_retry('metadata', () => cluster.refresh_metadata([]));
  const nodes = [...cluster.brokers.keys()].sort((a, b) => a - b);
  const lists = await Promise.all(
    nodes.map((node_id) =>
      cluster.with_retry('ListGroups', async () => {
        const connection = await cluster.node(node_id);
        const { response } = await connection.send(LIST_GROUPS, 0, 5, { states_filter: [], types_filter: [] });
        const code = response.error_code;
        if (code !== ErrorCode.NONE) {
          throw new AdminError('ListGroups', [coded_failure(`broker ${node_id}`, code, null)]);
        }
        return response.groups.map((g) => ({ groupId: g.group_id, protocolType: g.protocol_type }));
      }),
    ),
  );
  return { groups: lists.flat() };
}

function description_of(g: DescribedGroup): GroupDescription {
  return {
    groupId: g.group_id,
    members: g.members.map((m) => ({
      memberId: m.member_id,
      groupInstanceId: m.group_instance_id ?? null,
      clientId: m.client_id,
      clientHost: m.client_host,
      memberMetadata: Buffer.from(m.member_metadata),
      memberAssignment: Buffer.from(m.member_assignment),
    })),
    protocol: g.protocol_data,
    protocolType: g.protocol_type,
    // Passed on as the broker names it: a newer broker may name states GroupState does not list.
    state: g.group_state as GroupState,
    errorCode: g.error_code,
  };
}

/**
 * State, protocol and members (with their metadata and assignment bytes) of each group; a group
 * that does not exist is described as state Dead without members.
 */
export async function describe_groups(
  admin: AdminRequests,
  group_ids: string[],
): Promise<{ groups: GroupDescription[] }> {
  check_group_ids('describeGroups', group_ids);
  const found = new Map<string, GroupDescription>();
  await admin.on_coordinators('DescribeGroups', [...new Set(group_ids)], async (connection, groups) => {
    const { response } = await connection.send(DESCRIBE_GROUPS, 0, 6, { groups, include_authorized_operations: false });
    const outcomes: Outcomes<string> = new Map();
    for (const g of response.groups) {
      const group_id = g.group_id;
      const code = g.error_code;
      if (code === ErrorCode.GROUP_ID_NOT_FOUND) {
        // DescribeGroups v6 (Kafka 4) reports an unknown group so; earlier versions as state Dead.
        outcomes.set(group_id, null);
        found.set(group_id, {
          groupId: group_id,
          members: [],
          protocol: '',
          protocolType: '',
          state: 'Dead',
          errorCode: ErrorCode.NONE,
        });
        continue;
      }
      if (code !== ErrorCode.NONE) {
        outcomes.set(group_id, coded_failure(group_label(group_id), code, g.error_message ?? null));
        continue;
      }
      outcomes.set(group_id, null);
      found.set(group_id, description_of(g));
    }
    return outcomes;
  });
  return { groups: group_ids.map((id) => found.get(id)!) };
}

/**
 * Deletes groups and their committed offsets. A group with members fails with NON_EMPTY_GROUP, an
 * unknown one with GROUP_ID_NOT_FOUND; the others are deleted and the error names each failure.
 */
export async function delete_groups(admin: AdminRequests, group_ids: string[]): Promise<DeleteGroupsResult[]> {
  check_group_ids('deleteGroups', group_ids);
  const ids = [...new Set(group_ids)];
  await admin.on_coordinators('DeleteGroups', ids, async (connection, groups) => {
    const { response } = await connection.send(DELETE_GROUPS, 0, 2, { groups_names: groups });
    const outcomes: Outcomes<string> = new Map();
    for (const r of response.results) {
      const code = r.error_code;
      outcomes.set(r.group_id, code === ErrorCode.NONE ? null : coded_failure(group_label(r.group_id), code, null));
    }
    return outcomes;
  });
  for (const id of ids) admin.forget_coordinator(id);
  return ids.map((groupId) => ({ groupId, errorCode: ErrorCode.NONE }));
}

type ConsumerGroupRow = Row<ResponseOf<typeof CONSUMER_GROUP_DESCRIBE>['groups']>;

function consumer_group_of(g: ConsumerGroupRow): ConsumerGroupDescription {
  const by_topic = (a: { topic_partitions: Array<{ topic_name: string; partitions: number[] }> }) =>
    a.topic_partitions.map((t) => ({ topic: t.topic_name, partitions: [...t.partitions] }));
  return {
    groupId: g.group_id,
    state: g.group_state,
    groupEpoch: g.group_epoch,
    assignmentEpoch: g.assignment_epoch,
    assignor: g.assignor_name,
    members: g.members.map((m) => ({
      memberId: m.member_id,
      instanceId: m.instance_id ?? null,
      rackId: m.rack_id ?? null,
      memberEpoch: m.member_epoch,
      clientId: m.client_id,
      clientHost: m.client_host,
      subscribedTopics: [...m.subscribed_topic_names],
      subscribedTopicRegex: m.subscribed_topic_regex ?? null,
      assignment: by_topic(m.assignment),
      targetAssignment: by_topic(m.target_assignment),
    })),
  };
}

/** KIP-848 consumer groups: state, epochs, assignor and members; an unknown group is state Dead. */
export async function describe_consumer_groups(
  admin: AdminRequests,
  group_ids: string[],
): Promise<{ groups: ConsumerGroupDescription[] }> {
  check_group_ids('describeConsumerGroups', group_ids);
  const found = new Map<string, ConsumerGroupDescription>();
  await admin.on_coordinators('ConsumerGroupDescribe', [...new Set(group_ids)], async (connection, groups) => {
    const { response } = await connection.send(CONSUMER_GROUP_DESCRIBE, 0, 0, {
      group_ids: groups,
      include_authorized_operations: false,
    });
    const outcomes: Outcomes<string> = new Map();
    for (const g of response.groups) {
      const code = g.error_code;
      if (code !== ErrorCode.NONE && code !== ErrorCode.GROUP_ID_NOT_FOUND) {
        outcomes.set(g.group_id, coded_failure(group_label(g.group_id), code, g.error_message ?? null));
        continue;
      }
      outcomes.set(g.group_id, null);
      found.set(
        g.group_id,
        code === ErrorCode.NONE ? consumer_group_of(g) : { ...consumer_group_of(g), state: 'Dead' },
      );
    }
    return outcomes;
  });
  return { groups: group_ids.map((id) => found.get(id)!) };
}
