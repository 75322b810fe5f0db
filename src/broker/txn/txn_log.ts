// The transaction coordinator's durable state: every change of a transactional id's metadata is a
// record of the internal topic __transaction_state (one partition), key the transactional id and
// value the whole metadata as JSON (Sluice's own format), so replaying the log from its start
// gives each id's latest state. The decision to commit or abort is durable once its
// prepare_commit or prepare_abort record is: a coordinator that starts after that finishes it.
import { encode_record_batch } from '../../protocol/record_batch.ts';
import type { PartitionLog } from '../../storage/index.ts';
import { replay_log } from '../replay_log.ts';

export const TXN_STATE_TOPIC = '__transaction_state';
/** Where the transaction coordinator runs: on this partition's leader. */
export const TXN_COORDINATOR_PARTITION = { topic: TXN_STATE_TOPIC, partition: 0 } as const;

export type TxnState = 'empty' | 'ongoing' | 'prepare_commit' | 'prepare_abort' | 'complete_commit' | 'complete_abort';

export interface TxnPartition {
  topic: string;
  partition: number;
}

export interface TxnMetadata {
  transactional_id: string;
  producer_id: number;
  producer_epoch: number;
  timeout_ms: number;
  state: TxnState;
  /** The partitions the ongoing (or ending) transaction has written to or will commit offsets on. */
  partitions: TxnPartition[];
  /** When the ongoing transaction began (its first partition); its timeout counts from there. */
  started_ms: number;
  updated_ms: number;
}

export class TxnLog {
  constructor(private readonly log: PartitionLog) {}

  /** Every transactional id's latest metadata, from the whole log. */
  async load(): Promise<Map<string, TxnMetadata>> {
    const all = new Map<string, TxnMetadata>();
    await replay_log(this.log, (record) => {
      const id = record.key?.toString('utf8');
      if (id === undefined) return;
      if (record.value === null) all.delete(id);
      else all.set(id, JSON.parse(record.value.toString('utf8')) as TxnMetadata);
    });
    return all;
  }

  /** Appends the new metadata; resolves once it is durable (acknowledged as any append). */
  async write(metadata: TxnMetadata): Promise<void> {
    await this.log.append(
      encode_record_batch([
        {
          key: Buffer.from(metadata.transactional_id),
          value: Buffer.from(JSON.stringify(metadata)),
          timestamp_ms: metadata.updated_ms,
        },
      ]),
    );
  }
}
