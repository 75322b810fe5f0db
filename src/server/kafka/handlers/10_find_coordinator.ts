// FindCoordinator 0-6: the broker coordinating consumer groups (key type 0; on a single node this
// one, in a cluster the leader of __consumer_offsets-0), transactions (key type 1: the leader of
// __transaction_state-0) or share-group state (key type 2, v6, a key `group:topic id:partition`:
// the leader of __share_group_state-0); v4 answers several keys at once. Other key types:
// INVALID_REQUEST.
import { FIND_COORDINATOR } from '../../../protocol/kafka/messages/10_find_coordinator.ts';
import { ErrorCode } from '../../../protocol/kafka/error_codes.ts';
import { kafka_handler } from '../handler.ts';
import { allowed, refusal } from '../authorize.ts';

/** key_type 0: a consumer group; 1: a transactional id; 2: a share partition's state. */
const KINDS = { 0: 'group', 1: 'transaction', 2: 'share' } as const;

export const find_coordinator_handler = kafka_handler(
  FIND_COORDINATOR,
  {
    min: 0,
    max: 6,
    notes:
      'groups (key type 0: in a cluster, the leader of `__consumer_offsets-0`), transactions (key type 1: the ' +
      'leader of `__transaction_state-0`) and share-group state (key type 2, v6)',
  },
  (request, ctx) => {
    const self = { host: ctx.listener.advertised_host, port: ctx.listener.advertised_port };
    const kind = KINDS[request.key_type as keyof typeof KINDS] as (typeof KINDS)[keyof typeof KINDS] | undefined;
    const node_id = kind ? ctx.core.cluster.coordinator_node(kind) : -1;
    const found = ctx.core.cluster.brokers(self, ctx.listener.name).find((b) => b.node_id === node_id);
    const node = found ? { node_id, host: found.host, port: found.port } : { node_id: -1, host: '', port: -1 };
    // COORDINATOR_NOT_AVAILABLE while no broker leads the coordinator's partition (retriable).
    const error_code = !kind ? ErrorCode.INVALID_REQUEST : found ? 0 : ErrorCode.COORDINATOR_NOT_AVAILABLE;
    const message = !kind
      ? `key type ${request.key_type} is not served`
      : found
        ? null
        : `no ${kind} coordinator is available yet`;
    // A key the client may not describe is refused (and its coordinator not told).
    const resource = kind === 'transaction' ? 'transactional_id' : 'group';
    // A share key is `group:topic id:partition`: its group is what the client must be allowed to describe.
    const name_of = (key: string) => (kind === 'share' ? key.slice(0, key.indexOf(':')) : key);
    const answer = (key: string) =>
      !kind || allowed(ctx, 'describe', resource, name_of(key))
        ? { ...node, error_code, error_message: message }
        : { node_id: -1, host: '', port: -1, ...refusal(ctx, 'describe', resource, name_of(key)) };
    if (ctx.version >= 4) {
      return { throttle_time_ms: 0, coordinators: request.coordinator_keys.map((key) => ({ key, ...answer(key) })) };
    }
    return { throttle_time_ms: 0, ...answer(request.key) };
  },
);
