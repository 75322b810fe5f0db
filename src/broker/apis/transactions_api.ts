// The core API's transactions (TransactionsApi) over the transaction coordinator, which runs on
// the leader of __transaction_state-0; elsewhere the calls answer not_coordinator. A group's
// offsets live in __consumer_offsets-0, so that is the partition AddOffsetsToTxn adds and the
// one whose marker applies a transaction's offset commits.
import type { TransactionsApi } from '../../core/api.ts';
import type { TransactionDescription } from '../../core/types.ts';
import type { CoreInternals } from './internals.ts';
import { OFFSETS_TOPIC } from '../offset_store.ts';
import type { TxnMetadata, TxnState } from '../txn/txn_log.ts';

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
    init_producer_id: (id, timeout_ms, expected) => coordinators.txns.init_producer_id(id, timeout_ms, expected),
    async add_partitions(id, producer_id, epoch, partitions) {
      const results = await coordinators.txns.add_partitions(id, producer_id, epoch, partitions);
      return results.map(({ partition, error }) => ({ ...partition, error }));
    },
    add_offsets: (id, producer_id, epoch) => coordinators.txns.add_offsets(id, producer_id, epoch, OFFSETS_PARTITION),
    async commit_offsets(id, group_id, producer_id, epoch, entries) {
      coordinators.txns.check_offset_commit(id, producer_id, epoch, OFFSETS_PARTITION);
      await coordinators.offsets.commit_in_txn(group_id, { producer_id, producer_epoch: epoch }, entries);
    },
    end: (id, producer_id, epoch, commit) => coordinators.txns.end(id, producer_id, epoch, commit),
    describe(id) {
      const meta = coordinators.txns.describe(id);
      return meta ? description(meta) : null;
    },
    list: () => coordinators.txns.list().map(description),
  };
}
