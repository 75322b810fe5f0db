// The transaction calls one broker makes on another: a coordinator has the leader of each of a
// transaction's partitions write its marker (WriteTxnMarkers), and a partition leader asks the
// coordinator whether a producer's first transactional batch there belongs to its ongoing
// transaction (AddPartitionsToTxn v4, verify only), so no batch opens a transaction no marker ends,
// or adds the delay log to it for the transaction's delayed records.
import { ADD_PARTITIONS_TO_TXN } from '../protocol/kafka/messages/24_add_partitions_to_txn.ts';
import { WRITE_TXN_MARKERS } from '../protocol/kafka/messages/27_write_txn_markers.ts';
import { ErrorCode } from '../protocol/kafka/error_codes.ts';
import { BrokerError, type BrokerErrorKind } from '../core/errors.ts';
import type { Clock } from '../core/clock.ts';
import type { TopicPartition, TxnMarker, TxnProducer } from '../core/types.ts';
import type { ClusterView } from './model.ts';
import { PeerConnections } from './peer_connections.ts';
import type { PeerDialer } from './peer_dialer.ts';
import { LEADERSHIP_RETRIABLE, call_leader, type LeaderAnswer } from './leader_call.ts';

const VERIFY_VERSION = 4;
const MARKERS_VERSION = 1;
/** A marker's leader is asked again until this; the coordinator then starts over. */
const MARKER_DEADLINE_MS = 30_000;
/** Less than a client's request timeout: its produce is answered, retriably, before it gives up. */
const VERIFY_DEADLINE_MS = 10_000;

/** A marker's leader is moving, or its group coordinator still loading (a marker of offsets): ask again. */
const MARKER_RETRIABLE: ReadonlySet<number> = new Set<number>([
  ...LEADERSHIP_RETRIABLE,
  ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
]);

/** The coordinator is moving or still loading, or the transaction is ending: ask again. */
const VERIFY_RETRIABLE: ReadonlySet<number> = new Set<number>([
  ...LEADERSHIP_RETRIABLE,
  ErrorCode.NOT_COORDINATOR,
  ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
  ErrorCode.COORDINATOR_NOT_AVAILABLE,
  ErrorCode.CONCURRENT_TRANSACTIONS,
]);

/** The coordinator's refusals a produce passes on to its client as they are. */
const VERIFY_REFUSALS = new Map<number, BrokerErrorKind>([
  [ErrorCode.INVALID_PRODUCER_EPOCH, 'invalid_producer_epoch'],
  [ErrorCode.PRODUCER_FENCED, 'invalid_producer_epoch'],
  [ErrorCode.INVALID_PRODUCER_ID_MAPPING, 'invalid_producer_id_mapping'],
  [ErrorCode.INVALID_TXN_STATE, 'invalid_txn_state'],
]);

export class TxnPeers {
  private readonly peers: PeerConnections;

  constructor(
    node_id: number,
    private readonly view: () => ClusterView,
    dial: PeerDialer,
    private readonly clock: Clock,
  ) {
    this.peers = new PeerConnections(view, { client_id: `sluice-broker-${node_id}-txn` }, dial);
  }

  async write_marker(where: TopicPartition, marker: TxnMarker): Promise<void> {
    const answer = await this.on_leader(where, MARKER_DEADLINE_MS, MARKER_RETRIABLE, async (connection) => {
      const response = await connection.call(WRITE_TXN_MARKERS, MARKERS_VERSION, {
        markers: [
          {
            producer_id: marker.producer_id,
            producer_epoch: marker.producer_epoch,
            transaction_result: marker.commit,
            topics: [{ name: where.topic, partition_indexes: [where.partition] }],
            coordinator_epoch: marker.coordinator_epoch,
          },
        ],
      });
      const code = response.markers[0]?.topics[0]?.partitions[0]?.error_code ?? ErrorCode.UNKNOWN_SERVER_ERROR;
      return { error_code: code, value: undefined };
    });
    if (answer.error_code !== ErrorCode.NONE) {
      throw new BrokerError(
        'request_timed_out',
        `the leader of ${where.topic}-${where.partition} did not write the marker: error ${answer.error_code}`,
      );
    }
  }

  /**
   * AddPartitionsToTxn v4 to the coordinator: whether `partition` is in the producer's ongoing
   * transaction (`verify_only`), or adding it (the delay log, for a transaction's delayed records).
   */
  async in_txn(
    coordinator: TopicPartition,
    producer: TxnProducer,
    partition: TopicPartition,
    verify_only: boolean,
  ): Promise<void> {
    const answer = await this.on_leader(coordinator, VERIFY_DEADLINE_MS, VERIFY_RETRIABLE, async (connection) => {
      const response = await connection.call(ADD_PARTITIONS_TO_TXN, VERIFY_VERSION, {
        transactions: [
          {
            ...producer,
            verify_only,
            topics: [{ name: partition.topic, partitions: [partition.partition] }],
          },
        ],
        v3_and_below_transactional_id: '',
        v3_and_below_producer_id: -1,
        v3_and_below_producer_epoch: -1,
        v3_and_below_topics: [],
      });
      const row = response.results_by_transaction[0]?.topic_results[0]?.results_by_partition[0];
      const code = response.error_code || (row?.partition_error_code ?? ErrorCode.UNKNOWN_SERVER_ERROR);
      return { error_code: code, value: undefined };
    });
    if (answer.error_code === ErrorCode.NONE) return;
    const kind = VERIFY_REFUSALS.get(answer.error_code) ?? 'invalid_txn_state';
    throw new BrokerError(
      kind,
      `the transaction coordinator refused ${partition.topic}-${partition.partition} for ` +
        `${producer.transactional_id}: error ${answer.error_code}`,
    );
  }

  private on_leader(
    where: TopicPartition,
    deadline_ms: number,
    retriable: ReadonlySet<number>,
    call: Parameters<typeof call_leader<undefined>>[0]['call'],
  ): Promise<LeaderAnswer<undefined>> {
    return call_leader({
      view: this.view,
      peers: this.peers,
      clock: this.clock,
      ...where,
      deadline_ms,
      retriable,
      call,
    });
  }

  close(): void {
    this.peers.close();
  }
}
