// Transactional messages with check-back (protocol/half_messages.ts), the SDK's side.
//   sendHalf: one message written in a transaction that consumers cannot see until commit(); a
//     small pool of transactional producers (`__sluice_half/<group>/<instance>-<n>`) carries them,
//     one half message each at a time, so several can be open at once.
//   the check responder: a producer given `checkTransaction` joins its group's share group on the
//     check topic, and answers each check the broker makes of a half message left open (by any
//     producer of the group, this one's predecessor included) with EndTxn: commit or rollback, or
//     nothing for 'unknown' (the broker asks again after the half message's timeout).
import { randomUUID } from 'node:crypto';
import { Cluster } from './cluster.ts';
import { KafkaProtocolError, SluiceError } from './errors.ts';
import { ErrorCode } from '../protocol/kafka/error_codes.ts';
import { END_TXN } from '../protocol/kafka/messages/26_end_txn.ts';
import {
  HALF_HEADER_PREFIX,
  TXN_CHECKS_TOPIC,
  check_share_group,
  half_transactional_id,
  is_group_name,
  parse_check,
} from '../protocol/half_messages.ts';
import { COORDINATOR_KEY_TRANSACTION, CoordinatorLink } from './find_coordinator.ts';
import { QueueConsumer } from './queue_consumer.ts';
import type { Transaction } from './producer_transaction.ts';
import type { HalfMessageCheck, Message, RecordMetadata, TransactionCheckResult } from './producer_types.ts';
import type { IHeaders } from './partitioner.ts';

/** What carries a half message: a transactional producer. */
interface Producer {
  transaction(): Promise<Transaction>;
  disconnect(): Promise<void>;
}

export interface TransactionCheckConfig {
  /** The producers that answer for each other's half messages. */
  group: string;
  /** How long a half message may stay open before the group is asked, and between checks (default 60000 ms). */
  timeout: number;
  /** Half messages open at once on this producer (default 8); sendHalf waits for one to end beyond it. */
  openMax: number;
  check: ((message: HalfMessageCheck) => Promise<TransactionCheckResult> | TransactionCheckResult) | null;
}

/** A half message written and not yet settled: commit() makes it visible, rollback() drops it. */
export class HalfMessage {
  private settled = false;

  constructor(
    readonly transactionalId: string,
    readonly metadata: RecordMetadata[],
    private readonly transaction: Transaction,
    private readonly release: (healthy: boolean) => void,
  ) {}

  commit(): Promise<void> {
    return this.settle(() => this.transaction.commit());
  }

  rollback(): Promise<void> {
    return this.settle(() => this.transaction.abort());
  }

  private async settle(end: () => Promise<void>): Promise<void> {
    if (this.settled) throw new SluiceError('this half message is already settled', false);
    this.settled = true;
    try {
      await end();
    } catch (error) {
      // Settled by a check meanwhile, or given up and fenced: this producer starts afresh.
      this.release(false);
      throw error;
    }
    this.release(true);
  }
}

/** A producer that carries one half message at a time, and its transactional id. */
interface Carrier {
  producer: Producer;
  /** Fences the epoch of the half message just ended (a late answer to its check ends nothing). */
  next_epoch(): Promise<void>;
  id: string;
}

/** The producers that carry half messages, made on demand up to `openMax`. */
export class HalfMessagePool {
  private readonly instance = randomUUID();
  private readonly idle: Carrier[] = [];
  private readonly waiters: Array<(carrier: Carrier) => void> = [];
  private readonly all = new Set<Carrier>();
  private made = 0;

  constructor(
    private readonly config: TransactionCheckConfig,
    private readonly make: (transactional_id: string) => Omit<Carrier, 'id'>,
  ) {}

  async send(topic: string, message: Message): Promise<HalfMessage> {
    const carrier = await this.take();
    let transaction: Transaction | null = null;
    try {
      transaction = await carrier.producer.transaction();
      const metadata = await transaction.send({ topic, messages: [message] });
      return new HalfMessage(carrier.id, metadata, transaction, (healthy) => this.give_back(carrier, healthy));
    } catch (error) {
      // A carrier that could not open a transaction, or end this one, is replaced.
      const ended = transaction
        ? transaction.abort().then(
            () => true,
            () => false,
          )
        : Promise.resolve(false);
      this.give_back(carrier, await ended);
      throw error;
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.all].map(({ producer }) => producer.disconnect().catch(() => undefined)));
  }

  private async take(): Promise<Carrier> {
    const idle = this.idle.pop();
    if (idle) return idle;
    if (this.all.size < this.config.openMax) return this.new_carrier();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private new_carrier(): Carrier {
    const id = half_transactional_id(this.config.group, `${this.instance}-${this.made++}`);
    const carrier = { ...this.make(id), id };
    this.all.add(carrier);
    return carrier;
  }

  /**
   * A carrier whose half message ended takes a new epoch before the next one: a check of the last
   * one answered late (EndTxn under its epoch) must not end the next (found by the fault suite,
   * seed 4343). An unhealthy carrier (fenced, failed) is replaced by a new one.
   */
  private give_back(carrier: Carrier, healthy: boolean): void {
    if (!healthy) return this.hand_out(this.replace(carrier));
    carrier.next_epoch().then(
      () => this.hand_out(carrier),
      () => this.hand_out(this.replace(carrier)),
    );
  }

  private replace(carrier: Carrier): Carrier {
    this.all.delete(carrier);
    void carrier.producer.disconnect().catch(() => undefined);
    return this.new_carrier();
  }

  private hand_out(carrier: Carrier): void {
    const waiter = this.waiters.shift();
    if (waiter) waiter(carrier);
    else this.idle.push(carrier);
  }
}

/** Answers the broker's checks of the group's half messages with the producer's `check` handler. */
export class CheckResponder {
  private readonly consumer: QueueConsumer;
  private readonly links = new Map<string, CoordinatorLink>();

  constructor(
    private readonly cluster: Cluster,
    private readonly config: TransactionCheckConfig & { check: NonNullable<TransactionCheckConfig['check']> },
  ) {
    this.consumer = new QueueConsumer(cluster, { groupId: check_share_group(config.group), maxWaitTimeInMs: 200 });
  }

  private started: Promise<void> | null = null;

  /** Joins the group's share group on the check topic (once; a connect tried again reuses it). */
  start(): Promise<void> {
    this.started ??= (async () => {
      await this.consumer.subscribe({ topics: [TXN_CHECKS_TOPIC] });
      await this.consumer.run({ concurrency: 4, eachMessage: ({ message }) => this.answer(message) });
    })().catch((error: unknown) => {
      this.started = null;
      throw error;
    });
    return this.started;
  }

  async stop(): Promise<void> {
    await this.consumer.disconnect();
    await this.cluster.close();
  }

  private async answer(message: { key: Buffer | null; value: Buffer | null; headers?: IHeaders; offset: string }) {
    const headers = message.headers ?? {};
    const request = parse_check(
      Object.entries(headers).flatMap(([key, value]) =>
        (Array.isArray(value) ? value : [value]).map((v) => ({ key, value: v === undefined ? null : Buffer.from(v) })),
      ),
    );
    if (!request || request.group !== this.config.group) return; // another group's, or not a check
    const own: IHeaders = {};
    for (const [key, value] of Object.entries(headers)) if (!key.startsWith(HALF_HEADER_PREFIX)) own[key] = value;
    let result: TransactionCheckResult;
    try {
      result = await this.config.check({
        transactionalId: request.transactional_id,
        topic: request.topic,
        partition: request.partition,
        offset: String(request.offset),
        key: message.key,
        value: message.value,
        headers: own,
        check: request.check,
        checksMax: request.checks_max,
      });
    } catch {
      return; // as 'unknown': the broker asks again
    }
    if (result !== 'commit' && result !== 'rollback') return;
    await this.end(request.transactional_id, request.producer_id, request.producer_epoch, result === 'commit');
  }

  /**
   * EndTxn for the half message's transaction; one already ended or taken over is left as it is.
   * Under transaction version 2 (v5) the end takes the next epoch as the carrier's own would, so
   * the carrier's commit or rollback afterwards is answered as a retry of this one.
   */
  private async end(transactional_id: string, producer_id: number, producer_epoch: number, commit: boolean) {
    let link = this.links.get(transactional_id);
    if (!link) {
      link = new CoordinatorLink(this.cluster, transactional_id, COORDINATOR_KEY_TRANSACTION, (work) =>
        this.cluster.with_retry('EndTxn', work),
      );
      this.links.set(transactional_id, link);
    }
    try {
      const body = { transactional_id, producer_id, producer_epoch, committed: commit };
      await link.request(END_TXN, 0, 5, body, (answer) => answer.error_code);
    } catch (error) {
      if (!(error instanceof KafkaProtocolError) || !SETTLED_CODES.has(error.code)) throw error;
    } finally {
      this.links.delete(transactional_id);
    }
  }
}

/** EndTxn answers meaning the half message no longer waits on this answer. */
const SETTLED_CODES = new Set<number>([
  ErrorCode.INVALID_TXN_STATE,
  ErrorCode.INVALID_PRODUCER_EPOCH,
  ErrorCode.PRODUCER_FENCED,
  ErrorCode.INVALID_PRODUCER_ID_MAPPING,
]);

/** The check-back settings of a producer config, checked; null without a transactionGroup. */
export function check_config(options: {
  transactionGroup?: string;
  checkTransaction?: TransactionCheckConfig['check'];
  halfTimeout?: number;
  maxOpenHalfMessages?: number;
}): TransactionCheckConfig | null {
  const { transactionGroup: group, checkTransaction, halfTimeout = 60_000, maxOpenHalfMessages = 8 } = options;
  if (group === undefined) {
    if (checkTransaction) throw new SluiceError('checkTransaction needs a transactionGroup', false);
    return null;
  }
  if (typeof group !== 'string' || !is_group_name(group)) {
    throw new SluiceError(
      `transactionGroup must be 1-200 letters, digits, '.', '_' or '-', not ${JSON.stringify(group)}`,
      false,
    );
  }
  if (!Number.isInteger(halfTimeout) || halfTimeout <= 0)
    throw new SluiceError('halfTimeout must be a positive number of ms', false);
  if (!Number.isInteger(maxOpenHalfMessages) || maxOpenHalfMessages < 1) {
    throw new SluiceError('maxOpenHalfMessages must be a positive integer', false);
  }
  if (checkTransaction !== undefined && typeof checkTransaction !== 'function') {
    throw new SluiceError('checkTransaction must be a function', false);
  }
  return { group, timeout: halfTimeout, openMax: maxOpenHalfMessages, check: checkTransaction ?? null };
}
