// Consumer-group handlers: FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
// DescribeGroups, ListGroups, DeleteGroups. One broker coordinates every group: on a single node
// this one, in a cluster the leader of __consumer_offsets-0; the others answer NOT_COORDINATOR.
import { FIND_COORDINATOR } from '../../../protocol/kafka/messages/10_find_coordinator.ts';
import { JOIN_GROUP } from '../../../protocol/kafka/messages/11_join_group.ts';
import { HEARTBEAT } from '../../../protocol/kafka/messages/12_heartbeat.ts';
import { LEAVE_GROUP } from '../../../protocol/kafka/messages/13_leave_group.ts';
import { SYNC_GROUP } from '../../../protocol/kafka/messages/14_sync_group.ts';
import { DESCRIBE_GROUPS } from '../../../protocol/kafka/messages/15_describe_groups.ts';
import { LIST_GROUPS } from '../../../protocol/kafka/messages/16_list_groups.ts';
import { DELETE_GROUPS } from '../../../protocol/kafka/messages/42_delete_groups.ts';
import type { GroupState } from '../../../broker/group_coordinator.ts';
import type { KafkaHandler } from '../handler.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import { kafka_error_code } from '../error_map.ts';
import { rows, versions } from './util.ts';

const STATE_NAMES: Record<GroupState, string> = {
  empty: 'Empty',
  preparing_rebalance: 'PreparingRebalance',
  completing_rebalance: 'CompletingRebalance',
  stable: 'Stable',
  dead: 'Dead',
};

export const find_coordinator_handler: KafkaHandler = {
  api: FIND_COORDINATOR,
  ...versions(FIND_COORDINATOR, 0, 4),
  handle(request, ctx) {
    const key_type = (request.key_type as number | undefined) ?? 0;
    const self = { host: ctx.listener.advertised_host, port: ctx.listener.advertised_port };
    const node_id = ctx.broker.coordinator_node('group');
    const found = ctx.broker.brokers(self).find((b) => b.node_id === node_id);
    const node = found ? { node_id, host: found.host, port: found.port } : { node_id: -1, host: '', port: -1 };
    const supported = key_type === 0;
    // COORDINATOR_NOT_AVAILABLE for transaction coordinators (not yet) and while no broker leads the group partition.
    const error_code = supported && found ? 0 : ErrorCode.COORDINATOR_NOT_AVAILABLE;
    const message = !supported ? 'transactions are not supported yet' : found ? null : 'no group coordinator is available yet';
    if (ctx.version >= 4) {
      return {
        throttle_time_ms: 0,
        coordinators: (request.coordinator_keys as string[]).map((key) => ({ key, ...node, error_code, error_message: message })),
      };
    }
    return { throttle_time_ms: 0, error_code, error_message: message, ...node };
  },
};

export const join_group_handler: KafkaHandler = {
  api: JOIN_GROUP,
  ...versions(JOIN_GROUP, 0, 7),
  async handle(request, ctx) {
    const failure = (error: unknown, member_id = '') => ({
      throttle_time_ms: 0,
      error_code: kafka_error_code(error),
      generation_id: -1,
      protocol_type: null,
      protocol_name: ctx.version >= 7 ? null : '',
      leader: '',
      member_id: (error as { member_id?: string }).member_id ?? member_id,
      members: [],
    });
    try {
      const result = await ctx.broker.groups.join({
        group_id: request.group_id as string,
        member_id: request.member_id as string,
        group_instance_id: (request.group_instance_id as string | null | undefined) ?? null,
        client_id: ctx.header.client_id ?? '',
        client_host: ctx.client_host,
        session_timeout_ms: request.session_timeout_ms as number,
        rebalance_timeout_ms: ctx.version >= 1 ? (request.rebalance_timeout_ms as number) : (request.session_timeout_ms as number),
        protocol_type: request.protocol_type as string,
        protocols: rows(request.protocols).map((p) => ({ name: p.name as string, metadata: Buffer.from(p.metadata as Buffer) })),
        require_known_member_id: ctx.version >= 4,
      });
      return { throttle_time_ms: 0, error_code: 0, ...result };
    } catch (error) {
      return failure(error, request.member_id as string);
    }
  },
};

export const sync_group_handler: KafkaHandler = {
  api: SYNC_GROUP,
  ...versions(SYNC_GROUP, 0, 5),
  async handle(request, ctx) {
    try {
      const result = await ctx.broker.groups.sync(
        request.group_id as string,
        request.member_id as string,
        request.generation_id as number,
        (request.group_instance_id as string | null | undefined) ?? null,
        rows(request.assignments).map((a) => ({ member_id: a.member_id as string, assignment: Buffer.from(a.assignment as Buffer) })),
      );
      return { throttle_time_ms: 0, error_code: 0, ...result };
    } catch (error) {
      return { throttle_time_ms: 0, error_code: kafka_error_code(error), protocol_type: null, protocol_name: null, assignment: Buffer.alloc(0) };
    }
  },
};

export const heartbeat_handler: KafkaHandler = {
  api: HEARTBEAT,
  ...versions(HEARTBEAT, 0, 4),
  handle(request, ctx) {
    try {
      ctx.broker.groups.heartbeat(
        request.group_id as string,
        request.member_id as string,
        request.generation_id as number,
        (request.group_instance_id as string | null | undefined) ?? null,
      );
      return { throttle_time_ms: 0, error_code: 0 };
    } catch (error) {
      return { throttle_time_ms: 0, error_code: kafka_error_code(error) };
    }
  },
};

export const leave_group_handler: KafkaHandler = {
  api: LEAVE_GROUP,
  ...versions(LEAVE_GROUP, 0, 4),
  handle(request, ctx) {
    const group_id = request.group_id as string;
    if (!ctx.broker.is_group_coordinator) return { throttle_time_ms: 0, error_code: ErrorCode.NOT_COORDINATOR, members: [] };
    if (ctx.version < 3) {
      const [error] = ctx.broker.groups.leave(group_id, [{ member_id: request.member_id as string, group_instance_id: null }]);
      return { throttle_time_ms: 0, error_code: error ? kafka_error_code(error) : 0 };
    }
    const leavers = rows(request.members).map((m) => ({ member_id: m.member_id as string, group_instance_id: (m.group_instance_id as string | null) ?? null }));
    const errors = ctx.broker.groups.leave(group_id, leavers);
    return {
      throttle_time_ms: 0,
      error_code: 0,
      members: leavers.map((m, i) => ({ ...m, error_code: errors[i] ? kafka_error_code(errors[i]) : 0 })),
    };
  },
};

export const describe_groups_handler: KafkaHandler = {
  api: DESCRIBE_GROUPS,
  ...versions(DESCRIBE_GROUPS, 0, 5),
  handle(request, ctx) {
    return {
      throttle_time_ms: 0,
      groups: (request.groups as string[]).map((group_id) => {
        if (!ctx.broker.is_group_coordinator) {
          return { error_code: ErrorCode.NOT_COORDINATOR, error_message: null, group_id, group_state: '', protocol_type: '', protocol_data: '', members: [], authorized_operations: -2147483648 };
        }
        const summary = ctx.broker.groups.describe(group_id);
        return {
          error_code: 0,
          error_message: null,
          group_id,
          group_state: STATE_NAMES[summary.state],
          protocol_type: summary.protocol_type,
          protocol_data: summary.protocol_name,
          members: summary.members.map((m) => ({
            member_id: m.member_id,
            group_instance_id: m.group_instance_id,
            client_id: m.client_id,
            client_host: m.client_host,
            member_metadata: m.metadata,
            member_assignment: m.assignment,
          })),
          authorized_operations: -2147483648,
        };
      }),
    };
  },
};

export const list_groups_handler: KafkaHandler = {
  api: LIST_GROUPS,
  ...versions(LIST_GROUPS, 0, 4),
  handle(request, ctx) {
    const filter = ((request.states_filter as string[] | undefined) ?? []).map((s) => s.toLowerCase());
    // Clients ask every broker and merge; only the coordinator has groups to list.
    if (!ctx.broker.is_group_coordinator) return { throttle_time_ms: 0, error_code: 0, groups: [] };
    const groups = ctx.broker.groups
      .list()
      .map((g) => ({ group_id: g.group_id, protocol_type: g.protocol_type, group_state: STATE_NAMES[g.state], group_type: 'classic' }))
      .filter((g) => filter.length === 0 || filter.includes(g.group_state.toLowerCase()));
    return { throttle_time_ms: 0, error_code: 0, groups };
  },
};

export const delete_groups_handler: KafkaHandler = {
  api: DELETE_GROUPS,
  ...versions(DELETE_GROUPS, 0, 2),
  async handle(request, ctx) {
    const results = [];
    for (const group_id of request.groups_names as string[]) {
      try {
        await ctx.broker.groups.delete(group_id);
        results.push({ group_id, error_code: 0 });
      } catch (error) {
        results.push({ group_id, error_code: kafka_error_code(error) });
      }
    }
    return { throttle_time_ms: 0, results };
  },
};

