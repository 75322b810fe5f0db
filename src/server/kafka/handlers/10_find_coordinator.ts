// FindCoordinator 0-4: the broker coordinating consumer groups (on a single node this one, in a
// cluster the leader of __consumer_offsets-0); v4 answers several keys at once. Transaction
// coordinators do not exist yet: COORDINATOR_NOT_AVAILABLE.
import { FIND_COORDINATOR } from '../../../protocol/kafka/messages/10_find_coordinator.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import { kafka_handler } from '../handler.ts';

/** key_type 0: a consumer group. */
const GROUP_KEY_TYPE = 0;

export const find_coordinator_handler = kafka_handler(
  FIND_COORDINATOR,
  { min: 0, max: 4, notes: 'group coordinator only (key type 0): in a cluster, the leader of `__consumer_offsets-0`' },
  (request, ctx) => {
    const self = { host: ctx.listener.advertised_host, port: ctx.listener.advertised_port };
    const node_id = ctx.core.cluster.coordinator_node('group');
    const found = ctx.core.cluster.brokers(self).find((b) => b.node_id === node_id);
    const node = found ? { node_id, host: found.host, port: found.port } : { node_id: -1, host: '', port: -1 };
    const supported = request.key_type === GROUP_KEY_TYPE;
    // COORDINATOR_NOT_AVAILABLE for transaction coordinators (not yet) and while no broker leads the group partition.
    const error_code = supported && found ? 0 : ErrorCode.COORDINATOR_NOT_AVAILABLE;
    const message = !supported
      ? 'transactions are not supported yet'
      : found
        ? null
        : 'no group coordinator is available yet';
    if (ctx.version >= 4) {
      return {
        throttle_time_ms: 0,
        coordinators: request.coordinator_keys.map((key) => ({ key, ...node, error_code, error_message: message })),
      };
    }
    return { throttle_time_ms: 0, error_code, error_message: message, ...node };
  },
);
