// Appends the broker itself makes to partitions another broker leads (dead letters, archived
// overflow, due delayed messages, delayed batches for the delay log): sent to the leader as an
// acks=all Produce over the shared client codecs, retried while leadership moves.
import { PRODUCE } from '../protocol/kafka/messages/00_produce.ts';
import { ErrorCode } from '../protocol/kafka/error_codes.ts';
import { BrokerError } from '../core/errors.ts';
import type { Clock } from '../core/clock.ts';
import type { ClusterView } from './model.ts';
import { PeerConnections } from './peer_connections.ts';
import type { PeerDialer } from './peer_dialer.ts';
import { LEADERSHIP_RETRIABLE, call_leader } from './leader_call.ts';

const PRODUCE_VERSION = 9;
/** A forwarded append gives up after this long without an acknowledgement. */
const FORWARD_DEADLINE_MS = 30_000;

export class ProduceForwarder {
  private readonly peers: PeerConnections;

  constructor(
    node_id: number,
    private readonly view: () => ClusterView,
    dial: PeerDialer,
    private readonly clock: Clock,
  ) {
    this.peers = new PeerConnections(view, { client_id: `sluice-broker-${node_id}` }, dial);
  }

  /**
   * Appends `records` (one batch) to the partition on its leader; resolves once acknowledged there.
   * `broker_append` false: the leader takes it as a client's produce.
   */
  async append(topic: string, partition: number, records: Buffer, broker_append = true): Promise<number> {
    const answer = await call_leader({
      view: this.view,
      peers: this.peers,
      clock: this.clock,
      topic,
      partition,
      deadline_ms: FORWARD_DEADLINE_MS,
      retriable: LEADERSHIP_RETRIABLE,
      call: async (connection) => {
        const response = await connection.call(PRODUCE, PRODUCE_VERSION, {
          transactional_id: null,
          acks: -1,
          timeout_ms: FORWARD_DEADLINE_MS,
          topic_data: [{ name: topic, partition_data: [{ index: partition, records }] }],
          sluice_broker_append: broker_append,
        });
        const row = response.responses[0]!.partition_responses[0]!;
        return { error_code: row.error_code, error_message: row.error_message, value: row.base_offset };
      },
    });
    if (answer.error_code === ErrorCode.NONE) return answer.value;
    const why = `error ${answer.error_code}${answer.error_message ? `: ${answer.error_message}` : ''}`;
    throw new BrokerError('request_timed_out', `could not append to ${topic}-${partition} on its leader: ${why}`);
  }

  close(): void {
    this.peers.close();
  }
}
