// Idempotence: InitProducerId gives the producer id and epoch (on connect, and again for a partition
// whose epoch is used up); each partition numbers its records from 0, the base sequence of a batch
// fixed when the batch is first sent and kept for every resend, so the broker drops duplicates.
// When a batch fails for good, the partition bumps its epoch locally and numbers from 0 again, so
// later batches are not refused for the gap. When to send and resend is producer_sender.ts's.
// A transactional producer gets its id from its transaction coordinator and never starts an epoch
// on its own (the coordinator would see it as a zombie's): a failed batch fails its transaction
// instead, and after the abort `restart` asks the coordinator for the next epoch.
import type { Cluster } from './cluster.ts';
import { check_code } from './errors.ts';
import { stamp_record_batch } from '../protocol/compression.ts';
import { INIT_PRODUCER_ID } from '../protocol/kafka/messages/22_init_producer_id.ts';
import type { ProducerRetry } from './producer_shared.ts';
import type { CoordinatorLink } from './find_coordinator.ts';

const SEQUENCE_MAX = 0x7fffffff;
const EPOCH_MAX = 0x7fff;

function next_sequence(sequence: number, count: number): number {
  const next = sequence + count;
  return next > SEQUENCE_MAX ? next - SEQUENCE_MAX - 1 : next;
}

/** A partition's part in idempotence: the identity it writes under and its next sequence number. */
export interface SequencedPartition {
  producer_id: number;
  producer_epoch: number;
  next_sequence: number;
  /** A batch failed for good (a sequence gap): start a new epoch at sequence 0. */
  bump_epoch: boolean;
  /** Waiting for a new producer id (epoch exhausted). */
  identity_pending: boolean;
  /** An error came back: the partition sends nothing until its batches in flight are answered. */
  recovering: boolean;
}

/** A batch's part in idempotence: its base sequence (-1 until first sent) and record count. */
export interface SequencedBatch {
  sequence: number;
  readonly count: number;
  encoded: Buffer | null;
}

/** A transactional producer's id and the coordinator that gives it its epochs. */
export interface TransactionalIdentity {
  readonly link: CoordinatorLink;
  readonly timeout_ms: number;
}

type Identity = { producer_id: number; producer_epoch: number };

export class Idempotence {
  producer_id = -1;
  producer_epoch = -1;

  constructor(
    readonly enabled: boolean,
    private readonly cluster: Cluster,
    private readonly retry: ProducerRetry,
    private readonly transactional: TransactionalIdentity | null = null,
  ) {}

  /** On connect: the producer's id and epoch (nothing without idempotence). */
  async start(): Promise<void> {
    if (!this.enabled) return;
    const identity = await this.init_producer_id();
    this.producer_id = identity.producer_id;
    this.producer_epoch = identity.producer_epoch;
  }

  /** A new partition writes under the producer's identity. */
  adopt(state: SequencedPartition): void {
    state.producer_id = this.producer_id;
    state.producer_epoch = this.producer_epoch;
  }

  /** Numbers a batch on its first send (its records then carry the partition's identity). */
  number(batch: SequencedBatch, state: SequencedPartition): void {
    if (!this.enabled || batch.sequence >= 0) return;
    batch.sequence = state.next_sequence;
    state.next_sequence = next_sequence(state.next_sequence, batch.count);
    const transactional = this.transactional !== null;
    stamp_record_batch(batch.encoded!, state.producer_id, state.producer_epoch, batch.sequence, transactional);
  }

  /** A numbered batch failed for good: its sequence numbers are a gap, so the partition needs a new epoch. */
  failed_for_good(batch: SequencedBatch, state: SequencedPartition): void {
    if (this.enabled && batch.sequence >= 0) {
      state.recovering = true;
      state.bump_epoch = this.transactional === null;
    }
  }

  /**
   * Before resending after errors: when the partition must start a new epoch, numbers `batches`
   * again from 0 and takes the next epoch. True when the epochs are used up and the partition
   * needs a new producer id (renew).
   */
  new_epoch(state: SequencedPartition, batches: SequencedBatch[]): boolean {
    if (!state.bump_epoch) return false;
    state.bump_epoch = false;
    if (this.transactional) return false; // the transaction fails; `restart` follows its abort
    state.next_sequence = 0;
    for (const batch of batches) {
      batch.sequence = -1; // numbered again from 0 in the new epoch when sent
    }
    if (state.producer_epoch < EPOCH_MAX) {
      state.producer_epoch++;
      return false;
    }
    return true;
  }

  /** A new producer id for one partition (epoch 0, sequence 0); the partition waits meanwhile. */
  renew(state: SequencedPartition): Promise<void> {
    state.identity_pending = true;
    return this.init_producer_id().then((identity) => {
      state.producer_id = identity.producer_id;
      state.producer_epoch = identity.producer_epoch;
    });
  }

  /**
   * A transactional producer after an aborted transaction in which a batch failed: the next epoch
   * from the coordinator, and every partition numbers from 0 again.
   */
  async restart(states: Iterable<SequencedPartition>): Promise<void> {
    const identity = await this.init_producer_id({
      producer_id: this.producer_id,
      producer_epoch: this.producer_epoch,
    });
    this.take(identity, states);
  }

  /** Writes under `identity` from now on: every partition numbers from 0 again. */
  take(identity: Identity, states: Iterable<SequencedPartition>): void {
    this.producer_id = identity.producer_id;
    this.producer_epoch = identity.producer_epoch;
    for (const state of states) {
      this.adopt(state);
      state.next_sequence = 0;
      state.bump_epoch = false;
    }
  }

  private async init_producer_id(current: Identity | null = null): Promise<Identity> {
    const transactional = this.transactional;
    if (transactional) {
      const response = await transactional.link.request(
        INIT_PRODUCER_ID,
        3,
        4,
        {
          transactional_id: transactional.link.key,
          transaction_timeout_ms: transactional.timeout_ms,
          producer_id: current?.producer_id ?? -1,
          producer_epoch: current?.producer_epoch ?? -1,
        },
        (answer) => answer.error_code,
      );
      return { producer_id: response.producer_id, producer_epoch: response.producer_epoch };
    }
    return this.retry.run(async () => {
      const connection = await this.cluster.any();
      const { response } = await connection.send(INIT_PRODUCER_ID, 0, 4, {
        transactional_id: null,
        transaction_timeout_ms: 60_000,
        producer_id: -1,
        producer_epoch: -1,
      });
      check_code(response.error_code, 'InitProducerId');
      return { producer_id: response.producer_id, producer_epoch: response.producer_epoch };
    });
  }
}
