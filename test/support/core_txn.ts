// A Kafka transaction made through the core API in-process, as a transactional producer makes one
// over the wire: InitProducerId, AddPartitionsToTxn, one transactional batch, then EndTxn.
import type { Core } from '../../src/core/index.ts';
import { ATTRIBUTE_TRANSACTIONAL } from '../../src/format/batch_layout.ts';
import { encode_record_batch } from '../../src/protocol/record_batch.ts';

export interface OpenTxn {
  /** Commits or aborts: resolves once the outcome is durable and its marker written. */
  end(commit: boolean): Promise<void>;
}

/** Opens a transaction of its own transactional id with `values` as one batch on `topic`-`partition`. */
export async function begin_txn(
  core: Core,
  id: string,
  topic: string,
  partition: number,
  values: string[],
): Promise<OpenTxn> {
  const { producer_id, producer_epoch } = await core.transactions.init_producer_id(id, 60_000, null);
  await core.transactions.add_partitions(id, producer_id, producer_epoch, [{ topic, partition }]);
  const records = values.map((v) => ({ key: Buffer.from(`k-${v}`), value: Buffer.from(v), timestamp_ms: 1 }));
  const batch = encode_record_batch(records, {
    producer_id,
    producer_epoch,
    base_sequence: 0,
    attributes: ATTRIBUTE_TRANSACTIONAL,
  });
  await core.partitions.produce(topic, partition, batch, -1, { transactional_id: id });
  return {
    end: (commit) => core.transactions.end(id, producer_id, producer_epoch, commit, false).then(() => undefined),
  };
}
