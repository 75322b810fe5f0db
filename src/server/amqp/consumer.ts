// basic.consume: a share-group member that acquires as many messages as the consumer's prefetch
// leaves room for, hands them to its channel to deliver, and waits for new or returned records
// when there are none. Paused while the socket is congested, so a slow client holds at most its
// prefetch and unsent_bytes_max. A cancelled consumer keeps its member until its deliveries are
// settled (AMQP lets a channel acknowledge them after basic.cancel).
import { BrokerError, type Core, type FetchedPartition, type QueueRecord } from '../../core/index.ts';
import { ShareMember } from './share_member.ts';

/**
 * Records acquired by one fetch (the prefetch bounds it further). Several small fetches keep a
 * client fed while it acknowledges; one fetch of a whole prefetch of 500 left it idle between
 * bursts (`npm run bench -- --profile smoke --scale 10 --systems sluice-amqp-fsync --workloads
 * queue`: 37,000 msg/s at 500, 52,000–58,000 at 125).
 */
const FETCH_RECORDS_MAX = 125;
/** A fetch waits until this share of the prefetch is free again (see QueueConsumer.refill). */
const REFILL_SHARE = 4;
const FETCH_BYTES_MAX = 4 * 1024 * 1024;
/** Longest wait for records before fetching again (heartbeats run on their own timer). */
const WAIT_MS = 5_000;
/** Wait after a failed fetch (coordinator moving, disk full) before trying again. */
const RETRY_MS = 500;
/** Unsettled deliveries of a consumer with prefetch 0 ("unlimited"). */
export const UNLIMITED_PREFETCH = 10_000;

export interface ConsumerHost {
  readonly core: Core;
  readonly client_host: string;
  /** Current prefetch for this consumer (0: unlimited). */
  prefetch(consumer: QueueConsumer): number;
  /** False while another consumer of a single-active-consumer queue is the active one. */
  may_fetch(consumer: QueueConsumer): boolean;
  drained(): Promise<void>;
  /** Delivers what was acquired; returns how many messages went out. */
  deliver(consumer: QueueConsumer, fetched: FetchedPartition[]): Promise<number>;
  /** This broker no longer coordinates share groups: basic.cancel to the client. */
  coordinator_moved(consumer: QueueConsumer): void;
  warn(fields: Record<string, unknown>, text: string): void;
}

export class QueueConsumer {
  readonly member: ShareMember;
  unacked = 0;
  private fetching = true;
  private cancelled = false;
  private wake: (() => void) | null = null;
  private finished: Promise<void> = Promise.resolve();

  constructor(
    private readonly host: ConsumerHost,
    readonly tag: string,
    readonly queue: QueueRecord,
    readonly no_ack: boolean,
    readonly exclusive: boolean,
  ) {
    this.member = new ShareMember(host.core, queue, host.client_host, (error) => {
      if (is_coordinator_gone(error)) return this.coordinator_moved();
      host.warn({ queue: queue.name, error: String(error) }, 'AMQP consumer heartbeat or settlement failed');
    });
  }

  start(): void {
    this.member.join();
    this.finished = this.loop();
  }

  get active(): boolean {
    return this.fetching;
  }

  /** Deliveries were settled: room under the prefetch again, worth a fetch once it is a refill's worth. */
  settled(count: number): void {
    this.unacked -= count;
    if (this.wake && this.credit() >= this.refill()) this.wake();
  }

  /** It became the active consumer of its single-active-consumer queue. */
  activated(): void {
    this.wake?.();
  }

  /** Stops acquiring; the member stays until `leave`. */
  stop(): Promise<void> {
    this.fetching = false;
    this.wake?.();
    return this.finished;
  }

  async leave(): Promise<void> {
    await this.stop();
    await this.member.leave();
  }

  /**
   * The share-group coordinator moved to another broker (seen by a fetch, a heartbeat or a
   * settlement): the consumer is cancelled, as RabbitMQ cancels consumers on a failover, so the
   * client subscribes again (basic.consume here then names the broker to use) instead of waiting
   * on a broker that cannot serve it.
   */
  private coordinator_moved(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.fetching = false;
    this.wake?.();
    this.host.coordinator_moved(this);
  }

  private credit(): number {
    const prefetch = this.host.prefetch(this) || UNLIMITED_PREFETCH;
    if (!this.host.may_fetch(this)) return 0;
    return this.no_ack ? FETCH_RECORDS_MAX : prefetch - this.unacked;
  }

  /**
   * The credit worth a fetch while deliveries are out: a quarter of the prefetch (at most a
   * fetch's worth). A fetch reads whole stored batches, so refilling one message per ack would
   * cost a fetch per message.
   */
  private refill(): number {
    if (this.no_ack || this.unacked === 0) return 1;
    const prefetch = this.host.prefetch(this) || UNLIMITED_PREFETCH;
    return Math.max(1, Math.min(FETCH_RECORDS_MAX, Math.floor(prefetch / REFILL_SHARE)));
  }

  private async loop(): Promise<void> {
    while (this.fetching) {
      await this.host.drained();
      const credit = this.credit();
      if (credit <= 0 || credit < this.refill()) {
        await this.sleep(WAIT_MS, null);
        continue;
      }
      let delivered = 0;
      try {
        const fetched = await this.member.fetch(Math.min(credit, FETCH_RECORDS_MAX), FETCH_BYTES_MAX);
        if (!this.fetching) {
          await this.host.deliver(this, fetched); // acquired: handed out (or back) by the channel
          return;
        }
        delivered = await this.host.deliver(this, fetched);
      } catch (error) {
        this.host.warn({ queue: this.queue.name, error: String(error) }, 'AMQP consumer fetch failed');
        if (is_coordinator_gone(error)) return this.coordinator_moved();
        if (error instanceof BrokerError && error.kind === 'unknown_member_id') this.member.join();
        await this.sleep(RETRY_MS, null);
        continue;
      }
      if (delivered === 0) await this.sleep(WAIT_MS, (wake) => this.member.on_records(wake));
    }
  }

  private sleep(ms: number, subscribe: ((wake: () => void) => () => void) | null): Promise<void> {
    return new Promise((resolve) => {
      let unsubscribe = () => {};
      const done = () => {
        clearTimeout(timer);
        unsubscribe();
        this.wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
      if (subscribe) unsubscribe = subscribe(done);
    });
  }
}

function is_coordinator_gone(error: unknown): boolean {
  return error instanceof BrokerError && error.kind === 'not_coordinator';
}
