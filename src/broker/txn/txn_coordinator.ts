// The transaction coordinator (Kafka's protocol): each transactional id has a producer id and
// epoch (InitProducerId bumps the epoch, fencing older instances), and one transaction at a time
// moving empty → ongoing → prepare_commit | prepare_abort → complete_commit | complete_abort. A
// change is answered once its record in __transaction_state is durable (txn_log.ts); ending a
// transaction writes a marker to every partition it added, and a transaction left open past its
// timeout is aborted under a bumped epoch — unless it is a half message's (check-back,
// protocol/half_messages.ts): its group's producers are asked, each timeout, up to `checks_max`
// times, and then it is copied to the unresolved topic and aborted. Operations on one id run one
// at a time. An id with no transaction for `id_expiration_ms` is forgotten when the log is next
// rewritten (txn_log.ts).
import type { Clock, Logger } from '../../core/clock.ts';
import { BrokerError, leadership_lost } from '../../core/errors.ts';
import { rethrow_invariant } from '../../core/invariants.ts';
import type { Marker } from '../../protocol/control_records.ts';
import {
  check_due_ms,
  EPOCH_MAX,
  identity_of,
  in_ongoing,
  NO_LAST_END,
  same_partition,
  with_change,
  type ProducerIdentity,
  type TxnLog,
  type TxnMetadata,
  type TxnPartition,
  type TxnState,
} from './txn_log.ts';
import type { HalfChecks } from './half_checks.ts';
import { half_group_of } from '../../protocol/half_messages.ts';

export interface TxnSettings {
  /** The longest `transaction.timeout.ms` a producer may ask for (Kafka's transaction.max.timeout.ms). */
  timeout_max_ms: number;
  /** An id with no transaction for this long is forgotten (Kafka's transactional.id.expiration.ms). */
  id_expiration_ms: number;
  /** Check requests for a half message before it is given up as unresolved. */
  checks_max: number;
  /**
   * The transaction.version feature clients are offered (ApiVersions): 2 lets them end each
   * transaction under a new epoch (KIP-890); 1 keeps them to the earlier requests.
   */
  version: number;
}

/** How often open transactions are checked against their timeout. */
const ABORT_CHECK_INTERVAL_MS = 1_000;
/** How often ids are checked for expiry (one found makes the log be rewritten without it). */
const EXPIRY_CHECK_INTERVAL_MS = 60_000;

export interface TxnCoordinatorDeps {
  log: TxnLog;
  clock: Clock;
  logger: Logger;
  settings: TxnSettings;
  /** Written into markers: the leader epoch of __transaction_state when this coordinator started. */
  coordinator_epoch: number;
  allocate_producer_id(): Promise<number>;
  /** Why a partition cannot join a transaction (unknown, or led by another broker); null: it can. */
  partition_refusal(topic: string, partition: number): BrokerError | null;
  /** Appends a marker to the partition through its leader; resolves once the marker is durable. */
  write_marker(partition: TxnPartition, marker: Marker): Promise<void>;
  half: HalfChecks;
}

/** Wait before writing the markers of a decided transaction again after a failed write. */
const MARKER_RETRY_MS = 500;

export class TxnCoordinator {
  private readonly txns = new Map<string, TxnMetadata>();
  /** Producer id → transactional id, for the produce path's check. */
  private readonly by_producer = new Map<number, string>();
  private readonly chains = new Map<string, Promise<unknown>>();
  /** Partitions waiting to join a transaction (join), by producer id, epoch and transactional id. */
  private readonly joining = new Map<string, { partitions: TxnPartition[]; added: Promise<void> }>();
  private timer: NodeJS.Timeout | null = null;
  private expiry_checked_ms = 0;
  /** Half messages copied to the unresolved topic whose abort is not written yet (id/producer/epoch). */
  private readonly copied_unresolved = new Set<string>();
  private closed = false;

  private constructor(
    private readonly deps: TxnCoordinatorDeps,
    loaded: Map<string, TxnMetadata>,
  ) {
    for (const meta of loaded.values()) this.remember(meta);
  }

  /** Loads every id's state; transactions decided but not finished are finished in the background. */
  static async open(deps: TxnCoordinatorDeps): Promise<TxnCoordinator> {
    const coordinator = new TxnCoordinator(deps, await deps.log.load());
    for (const meta of coordinator.txns.values()) {
      if (meta.state === 'prepare_commit' || meta.state === 'prepare_abort')
        coordinator.finish_in_background(meta.transactional_id);
    }
    coordinator.timer = setInterval(() => {
      void coordinator.abort_expired();
      coordinator.rewrite_if_due();
    }, ABORT_CHECK_INTERVAL_MS);
    coordinator.timer.unref();
    return coordinator;
  }

  close(): void {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
  }

  private remember(meta: TxnMetadata): void {
    this.txns.set(meta.transactional_id, meta);
    this.by_producer.set(meta.producer_id, meta.transactional_id);
  }

  /** Runs `op` after the id's earlier operations. */
  private serial<T>(id: string, op: () => Promise<T>): Promise<T> {
    const run = (this.chains.get(id) ?? Promise.resolve()).then(op);
    const tail = run.catch(() => undefined);
    this.chains.set(id, tail);
    void tail.then(() => {
      if (this.chains.get(id) === tail) this.chains.delete(id);
    });
    return run;
  }

  /** Writes `meta` with `change` applied (a field set to undefined is dropped, as a reload would). */
  private save(meta: TxnMetadata, change: Partial<TxnMetadata>): Promise<TxnMetadata> {
    return this.write(with_change(meta, change, this.deps.clock.now_ms()));
  }

  private async write(meta: TxnMetadata): Promise<TxnMetadata> {
    try {
      await this.deps.log.write(meta, () => this.remember(meta));
    } catch (error) {
      // Its log led elsewhere now: to a client, this broker is no longer the coordinator, and
      // clients look the coordinator up again only on that (kafkajs gave up on NOT_LEADER).
      if (leadership_lost(error))
        throw new BrokerError('not_coordinator', `${meta.transactional_id}: ${(error as Error).message}`);
      throw error;
    }
    this.rewrite_if_due();
    return meta;
  }

  // ------------------------------------------------------------------ the log kept small

  /** Rewrites the log when enough records piled up, or when an id has expired. */
  private rewrite_if_due(): void {
    const log = this.deps.log;
    const now = this.deps.clock.now_ms();
    let due = log.rewrite_due(this.txns.size);
    if (!due && now - this.expiry_checked_ms >= EXPIRY_CHECK_INTERVAL_MS) {
      this.expiry_checked_ms = now;
      due = [...this.txns.values()].some((meta) => this.expired(meta, now));
    }
    if (!due || this.closed) return;
    log
      .rewrite(() => this.live_states())
      .catch((error: unknown) => {
        rethrow_invariant(error);
        this.deps.logger.warn({ error: String(error) }, 'could not rewrite the transaction log');
      });
  }

  private expired(meta: TxnMetadata, now_ms: number): boolean {
    const idle = meta.state === 'empty' || meta.state === 'complete_commit' || meta.state === 'complete_abort';
    return idle && now_ms - meta.updated_ms >= this.deps.settings.id_expiration_ms;
  }

  /** Every id's state for a rewrite of the log; expired ids are forgotten here. */
  private live_states(): TxnMetadata[] {
    const now = this.deps.clock.now_ms();
    const live: TxnMetadata[] = [];
    for (const meta of this.txns.values()) {
      if (!this.expired(meta, now)) {
        live.push(meta);
        continue;
      }
      this.txns.delete(meta.transactional_id);
      if (this.by_producer.get(meta.producer_id) === meta.transactional_id) this.by_producer.delete(meta.producer_id);
      this.deps.logger.info({ transactional_id: meta.transactional_id }, 'transactional id expired');
    }
    return live;
  }

  // ------------------------------------------------------------------ InitProducerId

  /**
   * A producer id and a new epoch for `id`: an open transaction of an earlier instance is aborted
   * first. `expected` (InitProducerId v3+) names the id and epoch the producer had; another is fenced.
   */
  init_producer_id(
    id: string,
    timeout_ms: number,
    expected: { producer_id: number; producer_epoch: number } | null,
  ): Promise<{ producer_id: number; producer_epoch: number }> {
    if (id === '') throw new BrokerError('invalid_request', 'the transactional id is empty');
    if (!Number.isSafeInteger(timeout_ms) || timeout_ms <= 0 || timeout_ms > this.deps.settings.timeout_max_ms) {
      throw new BrokerError(
        'invalid_transaction_timeout',
        `transaction timeout ${timeout_ms} ms is not within 1..${this.deps.settings.timeout_max_ms} ms`,
      );
    }
    return this.serial(id, async () => {
      let meta = this.txns.get(id);
      if (!meta) return identity_of(await this.new_metadata(id, timeout_ms));
      if (expected && (expected.producer_id !== meta.producer_id || expected.producer_epoch !== meta.producer_epoch)) {
        throw new BrokerError(
          'invalid_producer_epoch',
          `producer ${expected.producer_id} epoch ${expected.producer_epoch} is not ${id}'s current one`,
        );
      }
      if (meta.state === 'prepare_commit' || meta.state === 'prepare_abort') await this.finish(meta);
      meta = this.txns.get(id)!;
      if (meta.state === 'ongoing') meta = await this.abort_with_bump(meta);
      const bumped = meta.producer_epoch + 1;
      const next =
        bumped >= EPOCH_MAX
          ? { producer_id: await this.deps.allocate_producer_id(), producer_epoch: 0 }
          : { producer_id: meta.producer_id, producer_epoch: bumped };
      if (next.producer_id !== meta.producer_id) this.by_producer.delete(meta.producer_id);
      const saved = await this.save(meta, {
        ...next,
        ...NO_LAST_END,
        timeout_ms,
        state: 'empty',
        partitions: [],
        started_ms: -1,
      });
      return identity_of(saved);
    });
  }

  private async new_metadata(id: string, timeout_ms: number): Promise<TxnMetadata> {
    const meta: TxnMetadata = {
      transactional_id: id,
      producer_id: await this.deps.allocate_producer_id(),
      producer_epoch: 0,
      timeout_ms,
      state: 'empty',
      partitions: [],
      started_ms: -1,
      updated_ms: this.deps.clock.now_ms(),
    };
    return this.write(meta);
  }

  /** The metadata of `id` if the producer is its current instance; throws otherwise. */
  private current(id: string, producer_id: number, epoch: number): TxnMetadata {
    const meta = this.txns.get(id);
    if (!meta) throw new BrokerError('invalid_producer_id_mapping', `no transactional id ${id}`);
    if (meta.producer_id !== producer_id) {
      throw new BrokerError(
        'invalid_producer_id_mapping',
        `${id} belongs to producer ${meta.producer_id}, not ${producer_id}`,
      );
    }
    if (epoch !== meta.producer_epoch) {
      throw new BrokerError(
        'invalid_producer_epoch',
        `producer ${producer_id} epoch ${epoch} is not ${meta.producer_epoch}`,
      );
    }
    return meta;
  }

  // ------------------------------------------------------------------ building a transaction

  /**
   * Adds partitions to the producer's transaction (it begins with the first). All or none, as
   * Kafka does: with any partition refused, none is added (the refused ones carry their error).
   */
  add_partitions(
    id: string,
    producer_id: number,
    epoch: number,
    partitions: TxnPartition[],
  ): Promise<Array<{ partition: TxnPartition; error: BrokerError | null }>> {
    return this.serial(id, async () => {
      const meta = this.current(id, producer_id, epoch);
      this.check_open_for_more(meta);
      const results = partitions.map((partition) => ({
        partition,
        error: this.deps.partition_refusal(partition.topic, partition.partition),
      }));
      if (results.every((r) => r.error === null)) await this.include(meta, partitions);
      return results;
    });
  }

  /** AddOffsetsToTxn: the partition holding the group's offsets joins the transaction. */
  add_offsets(id: string, producer_id: number, epoch: number, offsets_partition: TxnPartition): Promise<void> {
    return this.serial(id, async () => {
      const meta = this.current(id, producer_id, epoch);
      this.check_open_for_more(meta);
      await this.include(meta, [offsets_partition]);
    });
  }

  /**
   * Produce v12+ and TxnOffsetCommit v5 (transaction version 2, KIP-890): the partition joins the
   * producer's transaction with its first batch or offsets there, beginning the transaction if none
   * is open, without AddPartitionsToTxn. The partitions of one request arrive together and join
   * with one record; a refused one (deleted, led elsewhere) gets its own error.
   */
  join(id: string, producer_id: number, epoch: number, partition: TxnPartition): Promise<void> {
    const joined = () => in_ongoing(this.txns.get(id), { producer_id, producer_epoch: epoch }, partition);
    if (joined() && !this.chains.has(id)) return Promise.resolve();
    const key = `${producer_id}/${epoch}/${id}`;
    let pending = this.joining.get(key);
    if (!pending) {
      const partitions: TxnPartition[] = [];
      const added = this.serial(id, async () => {
        this.joining.delete(key);
        const current = this.current(id, producer_id, epoch);
        this.check_open_for_more(current);
        const allowed = partitions.filter((p) => this.deps.partition_refusal(p.topic, p.partition) === null);
        if (allowed.length > 0) await this.include(current, allowed);
      });
      pending = { partitions, added };
      this.joining.set(key, pending);
    }
    pending.partitions.push(partition);
    const refused = () =>
      new BrokerError('invalid_txn_state', `${partition.topic}-${partition.partition} did not join`);
    return pending.added.then(() => {
      if (!joined()) throw this.deps.partition_refusal(partition.topic, partition.partition) ?? refused();
    });
  }

  private check_open_for_more(meta: TxnMetadata): void {
    if (meta.state === 'prepare_commit' || meta.state === 'prepare_abort') {
      throw new BrokerError('concurrent_transactions', `${meta.transactional_id} is still ending its transaction`);
    }
  }

  private async include(meta: TxnMetadata, partitions: TxnPartition[]): Promise<void> {
    const added = partitions.filter((p) => !meta.partitions.some((q) => same_partition(p, q)));
    if (added.length === 0 && meta.state === 'ongoing') return;
    const now = this.deps.clock.now_ms();
    const starting = meta.state !== 'ongoing';
    await this.save(meta, {
      state: 'ongoing',
      partitions: [...meta.partitions, ...added],
      started_ms: starting ? now : meta.started_ms,
      ...(starting ? NO_LAST_END : {}),
      // A half message's new transaction: no check made yet, the first due after its timeout.
      ...(starting && half_group_of(meta.transactional_id) !== null ? { checks: 0, next_check_ms: -1 } : {}),
    });
  }

  /**
   * Whether the producer may write a transactional batch to the partition now: it must be the
   * id's current instance with the partition added to its ongoing transaction (so a zombie's batch,
   * or one no marker would ever end, is refused).
   */
  check_produce(producer_id: number, epoch: number, topic: string, partition: number): void {
    const id = this.by_producer.get(producer_id);
    const meta = id === undefined ? undefined : this.txns.get(id);
    if (!meta || meta.producer_id !== producer_id) {
      throw new BrokerError('invalid_producer_id_mapping', `producer ${producer_id} has no transactional id`);
    }
    if (epoch < meta.producer_epoch) {
      throw new BrokerError(
        'invalid_producer_epoch',
        `producer ${producer_id} epoch ${epoch} is fenced by ${meta.producer_epoch}`,
      );
    }
    if (
      epoch > meta.producer_epoch ||
      meta.state !== 'ongoing' ||
      !meta.partitions.some((p) => same_partition(p, { topic, partition }))
    ) {
      throw new BrokerError(
        'invalid_txn_state',
        `${topic}-${partition} is not in an ongoing transaction of producer ${producer_id}`,
      );
    }
  }

  /**
   * Throws unless the partition is in the ongoing transaction of this instance of `id`: for
   * TxnOffsetCommit (the group's offsets partition) and for a leader verifying a first batch.
   */
  check_in_txn(id: string, producer_id: number, epoch: number, partition: TxnPartition): void {
    const meta = this.current(id, producer_id, epoch);
    if (meta.state !== 'ongoing' || !meta.partitions.some((p) => same_partition(p, partition))) {
      throw new BrokerError(
        'invalid_txn_state',
        `${partition.topic}-${partition.partition} is not in an ongoing transaction of ${id}`,
      );
    }
  }

  // ------------------------------------------------------------------ ending

  /**
   * EndTxn: the decision is made durable (prepare_commit or prepare_abort), the markers are
   * written, and the transaction completes; resolves to what the producer writes under next. A
   * retry of an end already made is answered again. `bump_epoch` (EndTxn v5, transaction version
   * 2): the ending takes the next epoch, so its markers fence every batch of the transaction still
   * in flight, and the producer begins its next transaction under it.
   */
  end(id: string, producer_id: number, epoch: number, commit: boolean, bump_epoch = false): Promise<ProducerIdentity> {
    return this.serial(id, async () => {
      const done: TxnState = commit ? 'complete_commit' : 'complete_abort';
      const preparing: TxnState = commit ? 'prepare_commit' : 'prepare_abort';
      const last = this.txns.get(id);
      const retry = last?.last_producer_id === producer_id && last.last_producer_epoch === epoch;
      const meta = bump_epoch && retry ? last : this.current(id, producer_id, epoch);
      if (meta.state === 'ongoing') {
        const change = { state: preparing, ...(bump_epoch ? await this.bumped(meta) : {}) };
        await this.finish(await this.save(meta, change));
      } else if (meta.state === preparing) await this.finish(meta);
      // Done already: asked again, unless under version 2 with the current epoch (nothing begun).
      else if (meta.state !== done || (bump_epoch && !retry)) {
        throw new BrokerError(
          'invalid_txn_state',
          `${id} cannot ${commit ? 'commit' : 'abort'} in state ${meta.state}`,
        );
      }
      return identity_of(this.txns.get(id)!);
    });
  }

  /** The prepare record's change for transaction version 2: the next epoch (a new id once they run out). */
  private async bumped(meta: TxnMetadata): Promise<Partial<TxnMetadata>> {
    const epoch = meta.producer_epoch + 1;
    return {
      producer_epoch: epoch,
      last_producer_id: meta.producer_id,
      last_producer_epoch: meta.producer_epoch,
      ...(epoch >= EPOCH_MAX ? { next_producer_id: await this.deps.allocate_producer_id() } : {}),
    };
  }

  /** Writes the markers of a decided transaction and completes it; retried until it succeeds. */
  private async finish(meta: TxnMetadata): Promise<void> {
    const commit = meta.state === 'prepare_commit';
    const marker: Marker = {
      producer_id: meta.producer_id,
      producer_epoch: meta.producer_epoch,
      commit,
      coordinator_epoch: this.deps.coordinator_epoch,
      timestamp_ms: this.deps.clock.now_ms(),
    };
    for (;;) {
      try {
        await Promise.all(meta.partitions.map((p) => this.write_marker_unless_deleted(p, marker)));
        break;
      } catch (error) {
        rethrow_invariant(error);
        // Its log led elsewhere now: the client must look the coordinator up again, whatever the
        // marker's own error was (kafkajs gave up InitProducerId on NOT_LEADER_OR_FOLLOWER).
        if (this.closed) throw new BrokerError('not_coordinator', `${meta.transactional_id}: ${String(error)}`);
        this.deps.logger.warn(
          { transactional_id: meta.transactional_id, commit, error: String(error) },
          'could not write transaction markers; retrying',
        );
        await new Promise((resolve) => setTimeout(resolve, MARKER_RETRY_MS));
      }
    }
    const renewed = meta.next_producer_id;
    await this.save(meta, {
      state: commit ? 'complete_commit' : 'complete_abort',
      partitions: [],
      started_ms: -1,
      ...(renewed === undefined ? {} : { producer_id: renewed, producer_epoch: 0, next_producer_id: undefined }),
    });
    if (renewed !== undefined) this.by_producer.delete(meta.producer_id);
  }

  /**
   * A partition deleted since it joined the transaction has no log left to mark: retrying it would
   * hold the transaction (and its producer) in its prepared state for ever.
   */
  private async write_marker_unless_deleted(partition: TxnPartition, marker: Marker): Promise<void> {
    const refusal = this.deps.partition_refusal(partition.topic, partition.partition);
    if (refusal?.kind === 'unknown_topic_or_partition') return;
    await this.deps.write_marker(partition, marker);
  }

  private finish_in_background(id: string): void {
    void this.serial(id, async () => {
      const meta = this.txns.get(id);
      if (meta && (meta.state === 'prepare_commit' || meta.state === 'prepare_abort')) await this.finish(meta);
    }).catch((error: unknown) => {
      rethrow_invariant(error);
      this.deps.logger.warn({ transactional_id: id, error: String(error) }, 'could not finish a decided transaction');
    });
  }

  /** Aborts an ongoing transaction under the next epoch, fencing the instance that opened it. */
  private async abort_with_bump(meta: TxnMetadata): Promise<TxnMetadata> {
    const epoch = Math.min(meta.producer_epoch + 1, EPOCH_MAX);
    await this.finish(await this.save(meta, { producer_epoch: epoch, state: 'prepare_abort', ...NO_LAST_END }));
    return this.txns.get(meta.transactional_id)!;
  }

  /** Aborts the ongoing transactions that have outlived their timeout (half messages are checked). */
  private async abort_expired(): Promise<void> {
    const now = this.deps.clock.now_ms();
    for (const meta of this.txns.values()) {
      if (meta.state !== 'ongoing') continue;
      const group = half_group_of(meta.transactional_id);
      if (group !== null) {
        if (now >= check_due_ms(meta)) await this.check_half(meta.transactional_id, group, now);
        continue;
      }
      if (now - meta.started_ms <= meta.timeout_ms) continue;
      const id = meta.transactional_id;
      await this.serial(id, async () => {
        const current = this.txns.get(id);
        if (current?.state !== 'ongoing' || now - current.started_ms <= current.timeout_ms) return;
        this.deps.logger.info(
          { transactional_id: id, producer_id: current.producer_id },
          'transaction timed out; aborting',
        );
        await this.abort_with_bump(current);
      }).catch((error: unknown) => {
        rethrow_invariant(error);
        this.deps.logger.warn(
          { transactional_id: id, error: String(error) },
          'could not abort a timed-out transaction',
        );
      });
    }
  }

  /**
   * A half message's transaction open past its timeout: its group is asked what became of it (a
   * check request, again after each timeout); after `checks_max` unanswered checks its records are
   * copied to the unresolved topic and it is aborted under a bumped epoch.
   */
  private check_half(id: string, group: string, now_ms: number): Promise<void> {
    return this.serial(id, async () => {
      const meta = this.txns.get(id);
      if (meta?.state !== 'ongoing' || now_ms < check_due_ms(meta)) return;
      const checks = meta.checks ?? 0;
      const checks_max = this.deps.settings.checks_max;
      if (checks >= checks_max) {
        // Copied once while this coordinator runs: an abort that fails (its record not written)
        // is tried again on the next tick without copying again (.ci/run: 209 copies too many).
        const copy_key = `${id}/${meta.producer_id}/${meta.producer_epoch}`;
        if (!this.copied_unresolved.has(copy_key)) {
          const copied = await this.deps.half.copy_unresolved(group, meta);
          this.copied_unresolved.add(copy_key);
          this.deps.logger.warn(
            { transactional_id: id, checks, copied },
            'half message unresolved after its checks: copied to the unresolved topic, aborting it',
          );
        }
        await this.abort_with_bump(meta);
        this.copied_unresolved.delete(copy_key);
        return;
      }
      await this.deps.half.publish_check(group, meta, checks + 1, checks_max);
      await this.save(meta, { checks: checks + 1, next_check_ms: now_ms + meta.timeout_ms });
    }).catch((error: unknown) => {
      rethrow_invariant(error);
      this.deps.logger.warn({ transactional_id: id, error: String(error) }, 'could not check a half message');
    });
  }

  // ------------------------------------------------------------------ describing

  describe(id: string): TxnMetadata | undefined {
    return this.txns.get(id);
  }

  list(): TxnMetadata[] {
    return [...this.txns.values()];
  }
}
