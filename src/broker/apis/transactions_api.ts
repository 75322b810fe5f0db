// The core API's transactions (TransactionsApi) over the transaction coordinator, which runs on
// the leader of __transaction_state-0; elsewhere the calls answer not_coordinator (but for
// TxnOffsetCommit, served by the group's coordinator, and the markers a partition leader writes). A group's
// offsets live in __consumer_offsets-0, so that is the partition AddOffsetsToTxn adds and the
// one whose marker applies a transaction's offset commits.
import type { TransactionsApi } from '../../core/api.ts';
import type { TransactionDescription } from '../../core/types.ts';
import type { CoreInternals } from './internals.ts';
import { OFFSETS_TOPIC } from '../offset_store.ts';
import { TXN_COORDINATOR_PARTITION, type TxnMetadata, type TxnState } from '../txn/txn_log.ts';
import { BrokerError } from '../../core/errors.ts';
import { rethrow_invariant } from '../../core/invariants.ts';

const OFFSETS_PARTITION = { topic: OFFSETS_TOPIC, partition: 0 };

/** Kafka's names of the states, as DescribeTransactions and ListTransactions give them. */
const STATE_NAMES: Record<TxnState, string> = {
  empty: 'Empty',
  ongoing: 'Ongoing',
  prepare_commit: 'PrepareCommit',
  prepare_abort: 'PrepareAbort',
  complete_commit: 'CompleteCommit',
  complete_abort: 'CompleteAbort',
};

function description(meta: TxnMetadata): TransactionDescription {
  return {
    transactional_id: meta.transactional_id,
    producer_id: meta.producer_id,
    producer_epoch: meta.producer_epoch,
    state: STATE_NAMES[meta.state],
    timeout_ms: meta.timeout_ms,
    start_ms: meta.started_ms,
    partitions: meta.partitions.map(({ topic, partition }) => ({ topic, partition })),
  };
}

export function transactions_api(broker: CoreInternals): TransactionsApi {
  const coordinators = broker.coordinators;
  return {
    get is_coordinator() {
      return coordinators.txn_host !== null;
    },
    version: broker.settings.transactions.version,
    init_producer_id: (id, timeout_ms, expected) => coordinators.txns.init_producer_id(id, timeout_ms, expected),
    async add_partitions(id, producer_id, epoch, partitions) {
      const results = await coordinators.txns.add_partitions(id, producer_id, epoch, partitions);
      return results.map(({ partition, error }) => ({ ...partition, error }));
    },
    add_offsets: (id, producer_id, epoch) => coordinators.txns.add_offsets(id, producer_id, epoch, OFFSETS_PARTITION),
    async commit_offsets(id, group_id, producer_id, epoch, entries, join_txn) {
      // The group's coordinator and the transaction's may run on different brokers.
      const txns = coordinators.txn_host;
      const producer = { transactional_id: id, producer_id, producer_epoch: epoch };
      if (txns && join_txn) await txns.join(id, producer_id, epoch, OFFSETS_PARTITION);
      else if (txns) txns.check_in_txn(id, producer_id, epoch, OFFSETS_PARTITION);
      else if (join_txn) await broker.placement.add_to_txn(TXN_COORDINATOR_PARTITION, producer, OFFSETS_PARTITION);
      else await broker.placement.verify_in_txn(TXN_COORDINATOR_PARTITION, producer, OFFSETS_PARTITION);
      await coordinators.offsets.commit_in_txn(group_id, { producer_id, producer_epoch: epoch }, entries);
    },
    verify(producer, partitions) {
      const txns = coordinators.txns;
      return partitions.map((partition) => {
        try {
          txns.check_in_txn(producer.transactional_id, producer.producer_id, producer.producer_epoch, partition);
          return { ...partition, error: null };
        } catch (error) {
          if (!(error instanceof BrokerError)) throw error;
          return { ...partition, error };
        }
      });
    },
    write_markers(marker, partitions) {
      const now_ms = broker.clock.now_ms();
      return Promise.all(
        partitions.map(async (partition) => {
          try {
            await broker.write_marker_here(partition, { ...marker, timestamp_ms: now_ms });
            return { ...partition, error: null };
          } catch (error) {
            rethrow_invariant(error);
            return { ...partition, error: error as Error };
          }
        }),
      );
    },
    end: (id, producer_id, epoch, commit, bump_epoch) =>
      coordinators.txns.end(id, producer_id, epoch, commit, bump_epoch),
    describe(id) {
      const meta = coordinators.txns.describe(id);
      return meta ? description(meta) : null;
    },
    list: () => coordinators.txns.list().map(description),
  };
}
