// One request to the broker that leads a partition now, retried while leadership moves or the
// leader is briefly unable to answer, up to a deadline. Shared by the appends a broker forwards and
// the transaction calls it makes on other brokers (markers, verification).
import type { Connection } from '../protocol/kafka/client_connection.ts';
import type { Clock } from '../core/clock.ts';
import { BrokerError } from '../core/errors.ts';
import { ErrorCode } from '../protocol/kafka/error_codes.ts';
import { rethrow_invariant } from '../core/invariants.ts';
import { type ClusterView, partition_key } from './model.ts';
import type { PeerConnections } from './peer_connections.ts';

const RETRY_BACKOFF_MS = 200;

/** What the leader may answer while leadership moves or its replicas catch up: worth asking again. */
export const LEADERSHIP_RETRIABLE: ReadonlySet<number> = new Set<number>([
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.LEADER_NOT_AVAILABLE,
  ErrorCode.NOT_ENOUGH_REPLICAS,
  ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
  ErrorCode.REQUEST_TIMED_OUT,
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
]);

/** The leader's answer: its value, or its error code (NONE with a value). */
export interface LeaderAnswer<T> {
  error_code: number;
  error_message?: string | null;
  value: T;
}

export interface LeaderCall<T> {
  view: () => ClusterView;
  peers: PeerConnections;
  clock: Clock;
  topic: string;
  partition: number;
  deadline_ms: number;
  retriable: ReadonlySet<number>;
  call: (connection: Connection) => Promise<LeaderAnswer<T>>;
}

/**
 * The leader's answer once it is not retriable: success, or a refusal the caller maps. A leader
 * that cannot be reached or keeps answering retriable errors until the deadline: request_timed_out.
 */
export async function call_leader<T>(c: LeaderCall<T>): Promise<LeaderAnswer<T>> {
  const deadline = c.clock.now_ms() + c.deadline_ms;
  let last = 'no leader';
  while (c.clock.now_ms() < deadline) {
    const leader = c.view().partitions.get(partition_key(c.topic, c.partition))?.value.leader ?? -1;
    if (leader >= 0 && c.view().brokers.has(leader)) {
      try {
        const answer = await c.call(await c.peers.get(leader));
        if (answer.error_code === ErrorCode.NONE || !c.retriable.has(answer.error_code)) return answer;
        last = `error ${answer.error_code}${answer.error_message ? `: ${answer.error_message}` : ''}`;
      } catch (error) {
        rethrow_invariant(error);
        last = String(error);
        c.peers.drop(leader);
      }
    }
    await new Promise((resolve) => setTimeout(resolve, RETRY_BACKOFF_MS));
  }
  throw new BrokerError('request_timed_out', `no answer from the leader of ${c.topic}-${c.partition}: ${last}`);
}
