// Appends the broker itself makes to partitions another broker leads (dead letters, archived
// overflow, due delayed messages, delayed batches for the delay log): sent to the leader as an
// acks=all Produce over the shared client codecs, retried while leadership moves.
import { PRODUCE } from '../protocol/kafka/messages/00_produce.ts';
import { ErrorCode } from '../protocol/kafka/error_codes.ts';
import { BrokerError } from '../core/errors.ts';
import type { Clock } from '../core/clock.ts';
import { type ClusterView, partition_key } from './model.ts';
import { PeerConnections } from './peer_connections.ts';
import type { PeerDialer } from './peer_dialer.ts';
import { rethrow_invariant } from '../core/invariants.ts';

const PRODUCE_VERSION = 9;
/** A forwarded append gives up after this long without an acknowledgement. */
const FORWARD_DEADLINE_MS = 30_000;
const RETRY_BACKOFF_MS = 200;
const RETRIABLE = new Set<number>([
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.LEADER_NOT_AVAILABLE,
  ErrorCode.NOT_ENOUGH_REPLICAS,
  ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
  ErrorCode.REQUEST_TIMED_OUT,
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
]);

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
    const deadline = this.clock.now_ms() + FORWARD_DEADLINE_MS;
    let last = 'no leader';
    while (this.clock.now_ms() < deadline) {
      const leader = this.view().partitions.get(partition_key(topic, partition))?.value.leader ?? -1;
      if (leader < 0 || !this.view().brokers.has(leader)) {
        await sleep(RETRY_BACKOFF_MS);
        continue;
      }
      try {
        const connection = await this.peers.get(leader);
        const response = await connection.call(PRODUCE, PRODUCE_VERSION, {
          transactional_id: null,
          acks: -1,
          timeout_ms: FORWARD_DEADLINE_MS,
          topic_data: [{ name: topic, partition_data: [{ index: partition, records }] }],
          sluice_broker_append: broker_append,
        });
        const row = response.responses[0]!.partition_responses[0]!;
        if (row.error_code === ErrorCode.NONE) return row.base_offset;
        last = `error ${row.error_code}${row.error_message ? `: ${row.error_message}` : ''}`;
        if (!RETRIABLE.has(row.error_code)) break;
      } catch (error) {
        rethrow_invariant(error);
        last = String(error);
        this.peers.drop(leader);
      }
      await sleep(RETRY_BACKOFF_MS);
    }
    throw new BrokerError('request_timed_out', `could not append to ${topic}-${partition} on its leader: ${last}`);
  }

  close(): void {
    this.peers.close();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
