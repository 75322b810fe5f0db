// A transactional producer's side of Kafka transactions. Its records and the consumer offsets it
// sends commit or abort together: before the first record of a partition the partition is added
// to the transaction (AddPartitionsToTxn), offsets are sent through the transaction coordinator to
// the group coordinator (AddOffsetsToTxn, TxnOffsetCommit), and EndTxn ends it once every send of
// the transaction is acknowledged. With transaction version 2 (KIP-890), when the broker offers
// it, partitions and offsets join with their Produce and TxnOffsetCommit instead, and each EndTxn
// hands out the epoch of the next transaction. One transaction at a time per producer. A failed
// send makes the transaction abort-only; a producer fenced by a newer instance of its transactional
// id can only disconnect.
import type { Cluster } from './cluster.ts';
import { KafkaProtocolError, SluiceError } from './errors.ts';
import { ErrorCode } from '../protocol/kafka/error_codes.ts';
import { ADD_PARTITIONS_TO_TXN } from '../protocol/kafka/messages/24_add_partitions_to_txn.ts';
import { ADD_OFFSETS_TO_TXN } from '../protocol/kafka/messages/25_add_offsets_to_txn.ts';
import { END_TXN } from '../protocol/kafka/messages/26_end_txn.ts';
import { PRODUCE } from '../protocol/kafka/messages/00_produce.ts';
import { TXN_OFFSET_COMMIT } from '../protocol/kafka/messages/28_txn_offset_commit.ts';
import { COORDINATOR_KEY_GROUP, CoordinatorLink } from './find_coordinator.ts';
import type { Idempotence } from './producer_idempotence.ts';
import type { PartitionState } from './producer_accumulator.ts';
import type { ProducerBatch, ProducerRecord, RecordMetadata } from './producer_types.ts';

/** Codes after which this producer's transactional id belongs to a newer instance. */
const FENCED_CODES = new Set<number>([ErrorCode.PRODUCER_FENCED, ErrorCode.INVALID_PRODUCER_EPOCH]);

/** Who a group's offsets come from: with it, the group coordinator refuses offsets of a member that left. */
export interface ConsumerGroupMetadata {
  groupId: string;
  generationId: number;
  memberId: string;
  groupInstanceId: string | null;
}

export interface TransactionOffsets {
  /** The group whose offsets commit with the transaction (or take it from `consumer`). */
  consumerGroupId?: string;
  /** The consumer whose input this is: its group, generation and member id fence a zombie's commit. */
  consumer?: { groupMetadata(): ConsumerGroupMetadata };
  /** Each offset is the next one to consume, as in commitOffsets. */
  topics: Array<{ topic: string; partitions: Array<{ partition: number; offset: string; metadata?: string | null }> }>;
}

/** What a Transaction needs of its producer. */
export interface TransactionHost {
  send(record: ProducerRecord): Promise<RecordMetadata[]>;
  send_batch(batch: ProducerBatch): Promise<RecordMetadata[]>;
  /** Resolves once every send made so far is settled. */
  flush(): Promise<void>;
}

type Phase = 'none' | 'open' | 'ending' | 'fenced';

/** One producer's transaction state, driven by the Transaction it hands out. */
export class Transactions {
  private phase: Phase = 'none';
  /** Counts transactions: a Transaction object acts only on the one it was made for. */
  serial = 0;
  /** The first failure in the open transaction: it can then only abort. */
  private failure: unknown = null;
  private readonly added = new Set<PartitionState>();
  private readonly groups_added = new Set<string>();
  private readonly group_links = new Map<string, CoordinatorLink>();
  /** Transaction version 2 (KIP-890) in use; decided on the first transaction. */
  private version2: boolean | null = null;

  constructor(
    private readonly cluster: Cluster,
    readonly link: CoordinatorLink,
    private readonly idempotence: Idempotence,
    private readonly retry: <T>(work: () => Promise<T>) => Promise<T>,
    private readonly partitions: () => Iterable<PartitionState>,
  ) {}

  get open(): boolean {
    return this.phase === 'open';
  }

  begin(): number {
    if (this.phase === 'fenced') throw this.fenced_error();
    if (this.phase !== 'none') throw new SluiceError('a transaction is already open on this producer', false);
    this.phase = 'open';
    this.failure = null;
    return ++this.serial;
  }

  /** Records a failed send: the transaction may then only abort. */
  fail(error: unknown): void {
    this.failure ??= error;
    if (error instanceof KafkaProtocolError && FENCED_CODES.has(error.code)) this.phase = 'fenced';
  }

  /**
   * Whether the coordinator finalizes transaction version 2 and serves its versions: partitions
   * and offsets then join with their Produce (v12) and TxnOffsetCommit (v5), and each EndTxn (v5)
   * ends under the next epoch, fencing whatever of the transaction is still in flight.
   */
  private async v2(): Promise<boolean> {
    if (this.version2 === null) {
      const broker = await this.retry(() => this.link.connection());
      this.version2 =
        broker.feature_level('transaction.version') >= 2 &&
        broker.serves(END_TXN, 5) &&
        broker.serves(PRODUCE, 12) &&
        broker.serves(TXN_OFFSET_COMMIT, 5);
    }
    return this.version2;
  }

  /** Adds the partitions among `states` that the transaction has not written to yet. */
  async add_partitions(states: Iterable<PartitionState>): Promise<void> {
    const fresh = new Set<PartitionState>();
    for (const state of states) if (!this.added.has(state)) fresh.add(state);
    if (fresh.size === 0) return;
    if (await this.v2()) {
      for (const state of fresh) this.added.add(state); // joined by their Produce
      return;
    }
    const topics = new Map<string, number[]>();
    for (const state of fresh) {
      const partitions = topics.get(state.topic);
      if (partitions) partitions.push(state.partition);
      else topics.set(state.topic, [state.partition]);
    }
    await this.link.request(
      ADD_PARTITIONS_TO_TXN,
      0,
      3,
      {
        v3_and_below_transactional_id: this.link.key,
        v3_and_below_producer_id: this.idempotence.producer_id,
        v3_and_below_producer_epoch: this.idempotence.producer_epoch,
        v3_and_below_topics: [...topics].map(([name, partitions]) => ({ name, partitions })),
      },
      (answer) =>
        first_code(
          answer.results_by_topic_v3_and_below.flatMap((t) =>
            t.results_by_partition.map((p) => p.partition_error_code),
          ),
        ),
    );
    for (const state of fresh) this.added.add(state);
  }

  /** Commits `offsets` of a group with the transaction. */
  async send_offsets(offsets: TransactionOffsets): Promise<void> {
    const metadata = offsets.consumer?.groupMetadata() ?? null;
    const group_id = offsets.consumerGroupId ?? metadata?.groupId;
    if (!group_id) throw new SluiceError('sendOffsets needs a consumerGroupId or a consumer', false);
    try {
      await this.commit_offsets(group_id, metadata, offsets);
    } catch (error) {
      this.fail(error);
      throw error;
    }
  }

  private async commit_offsets(
    group_id: string,
    metadata: ConsumerGroupMetadata | null,
    offsets: TransactionOffsets,
  ): Promise<void> {
    const v2 = await this.v2();
    if (!v2 && !this.groups_added.has(group_id)) {
      await this.link.request(
        ADD_OFFSETS_TO_TXN,
        0,
        3,
        {
          transactional_id: this.link.key,
          producer_id: this.idempotence.producer_id,
          producer_epoch: this.idempotence.producer_epoch,
          group_id,
        },
        (answer) => answer.error_code,
      );
    }
    this.groups_added.add(group_id);
    const topics = offsets.topics.map(({ topic, partitions }) => ({
      name: topic,
      partitions: partitions.map((p) => ({
        partition_index: p.partition,
        committed_offset: Number(p.offset),
        committed_leader_epoch: -1,
        committed_metadata: p.metadata ?? null,
      })),
    }));
    await this.group_link(group_id).request(
      TXN_OFFSET_COMMIT,
      v2 ? 5 : 0,
      v2 ? 5 : 3,
      {
        transactional_id: this.link.key,
        group_id,
        producer_id: this.idempotence.producer_id,
        producer_epoch: this.idempotence.producer_epoch,
        generation_id: metadata?.generationId ?? -1,
        member_id: metadata?.memberId ?? '',
        group_instance_id: metadata?.groupInstanceId ?? null,
        topics,
      },
      (answer) => first_code(answer.topics.flatMap((t) => t.partitions.map((p) => p.error_code))),
    );
  }

  /**
   * Ends the open transaction once `settle` has waited for its sends: EndTxn when it added
   * anything; after an abort that followed a failed send, the producer's next epoch.
   */
  async end(commit: boolean, settle: () => Promise<void>): Promise<void> {
    if (this.phase === 'fenced') throw this.fenced_error();
    if (this.phase !== 'open') throw new SluiceError('no transaction is open on this producer', false);
    this.phase = 'ending';
    try {
      await settle();
      if (commit && this.failure !== null) {
        throw new SluiceError(
          `the transaction cannot commit, a send in it failed (abort it): ${String(this.failure)}`,
          false,
          {
            cause: this.failure,
          },
        );
      }
      const v2 = this.version2 === true;
      if (this.added.size > 0 || this.groups_added.size > 0) {
        const answer = await this.link.request(
          END_TXN,
          v2 ? 5 : 0,
          v2 ? 5 : 3,
          {
            transactional_id: this.link.key,
            producer_id: this.idempotence.producer_id,
            producer_epoch: this.idempotence.producer_epoch,
            committed: commit,
          },
          (answer) => answer.error_code,
        );
        if (v2) this.idempotence.take(answer, this.partitions());
      }
      // Under version 2 the abort's new epoch already fences the failed transaction's batches.
      if (!commit && this.failure !== null && !(v2 && this.added.size + this.groups_added.size > 0))
        await this.idempotence.restart(this.partitions());
    } catch (error) {
      if (error instanceof KafkaProtocolError && FENCED_CODES.has(error.code)) this.fail(error);
      if (this.phase === 'ending') this.phase = 'open';
      throw error;
    }
    this.phase = 'none';
    this.added.clear();
    this.groups_added.clear();
  }

  /**
   * The producer's next epoch from the coordinator (between transactions): the last one's epoch is
   * fenced. Under transaction version 2 the last EndTxn took it already.
   */
  async next_epoch(): Promise<void> {
    if (this.phase !== 'none') throw new SluiceError('a new epoch is taken between transactions', false);
    if (this.version2 !== true) await this.idempotence.restart(this.partitions());
  }

  private group_link(group_id: string): CoordinatorLink {
    let link = this.group_links.get(group_id);
    if (!link)
      this.group_links.set(
        group_id,
        (link = new CoordinatorLink(this.cluster, group_id, COORDINATOR_KEY_GROUP, this.retry)),
      );
    return link;
  }

  private fenced_error(): SluiceError {
    const cause = this.failure;
    return new SluiceError(
      `transactional id ${this.link.key} was taken over by a newer producer: this one can only disconnect`,
      false,
      { cause },
    );
  }
}

/** The error of a partition list: a partition's own refusal before the others' OPERATION_NOT_ATTEMPTED. */
function first_code(codes: number[]): number {
  const refused = codes.filter((code) => code !== ErrorCode.NONE);
  return refused.find((code) => code !== ErrorCode.OPERATION_NOT_ATTEMPTED) ?? refused[0] ?? ErrorCode.NONE;
}

/** An open transaction, in kafkajs's shape: send, sendBatch, sendOffsets, then commit or abort. */
export class Transaction {
  constructor(
    private readonly host: TransactionHost,
    private readonly transactions: Transactions,
    private readonly serial: number,
  ) {}

  /** True until commit or abort ends it. */
  isActive(): boolean {
    return this.transactions.serial === this.serial && this.transactions.open;
  }

  send(record: ProducerRecord): Promise<RecordMetadata[]> {
    return this.track(() => this.host.send(record));
  }

  sendBatch(batch: ProducerBatch): Promise<RecordMetadata[]> {
    return this.track(() => this.host.send_batch(batch));
  }

  async sendOffsets(offsets: TransactionOffsets): Promise<void> {
    this.check_active();
    await this.transactions.send_offsets(offsets);
  }

  async commit(): Promise<void> {
    this.check_active();
    await this.transactions.end(true, () => this.host.flush());
  }

  async abort(): Promise<void> {
    this.check_active();
    await this.transactions.end(false, () => this.host.flush());
  }

  /** A send of the transaction: a failed one makes it abort-only. */
  private track(sending: () => Promise<RecordMetadata[]>): Promise<RecordMetadata[]> {
    try {
      this.check_active();
    } catch (error) {
      return Promise.reject(error);
    }
    const sent = sending();
    sent.catch((error: unknown) => this.transactions.fail(error));
    return sent;
  }

  private check_active(): void {
    if (!this.isActive()) throw new SluiceError('this transaction has ended', false);
  }
}
