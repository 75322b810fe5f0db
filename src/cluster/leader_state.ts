// What a partition's leader tracks about its followers: how far each has fetched, when each was
// last caught up, and the appends waiting for the in-sync replicas. The high watermark is the
// lowest durable end among the ISR (the leader's own flushed end included), so an acknowledged
// record is on every in-sync replica.
import type { AppendResult, PartitionLog } from '../storage/index.ts';
import { BrokerError } from '../core/errors.ts';
import { invariant } from '../core/invariants.ts';

export interface FollowerProgress {
  fetch_offset: number;
  /** When the follower last fetched from at least the leader's end at its previous fetch. */
  caught_up_ms: number;
  /** The leader's end when this follower last fetched. */
  leader_end_at_last_fetch: number;
  last_fetch_ms: number;
}

interface AckWaiter {
  last_offset: number;
  result: AppendResult;
  resolve: (result: AppendResult) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/** Appends waiting longer than this for the ISR are answered REQUEST_TIMED_OUT. */
export const ACK_WAIT_MS_MAX = 30_000;
/** Appends waiting for the ISR at once, per partition; more are refused as timed out. */
export const ACK_WAITERS_MAX = 100_000;

export class LeaderState {
  readonly followers = new Map<number, FollowerProgress>();
  private waiters: AckWaiter[] = [];
  private head = 0;
  private readonly unsubscribes: Array<() => void> = [];
  /** Set once leadership ended: later waits fail at once with it. */
  private closed_with: BrokerError | null = null;
  /** An ISR change is being written to etcd; no other until the view shows it. */
  isr_change_pending = false;

  constructor(
    readonly log: PartitionLog,
    readonly leader_epoch: number,
    /** First offset of this leader epoch: a follower joins the ISR only once past it. */
    readonly epoch_start_offset: number,
    isr: number[],
    now_ms: number,
  ) {
    for (const id of isr)
      this.followers.set(id, { fetch_offset: 0, caught_up_ms: now_ms, leader_end_at_last_fetch: 0, last_fetch_ms: 0 });
  }

  track(unsubscribe: () => void): void {
    this.unsubscribes.push(unsubscribe);
  }

  record_fetch(node_id: number, fetch_offset: number, now_ms: number): FollowerProgress {
    const progress = this.followers.get(node_id) ?? {
      fetch_offset: 0,
      caught_up_ms: 0,
      leader_end_at_last_fetch: 0,
      last_fetch_ms: 0,
    };
    if (fetch_offset >= this.log.written_offset) progress.caught_up_ms = now_ms;
    else if (fetch_offset >= progress.leader_end_at_last_fetch) progress.caught_up_ms = progress.last_fetch_ms;
    progress.fetch_offset = fetch_offset;
    progress.leader_end_at_last_fetch = this.log.written_offset;
    progress.last_fetch_ms = now_ms;
    this.followers.set(node_id, progress);
    return progress;
  }

  /** The high watermark the ISR allows: the lowest of the leader's durable end and followers' fetch offsets. */
  high_watermark_for(isr: number[], self: number, local_durable_end: number): number {
    let hw = local_durable_end;
    for (const id of isr) if (id !== self) hw = Math.min(hw, this.followers.get(id)?.fetch_offset ?? 0);
    return hw;
  }

  /** The gate every append on this leader passes: resolves once the high watermark covers it. */
  wait(result: AppendResult): Promise<AppendResult> {
    // A write that completes after leadership ended is answered as the waiting ones were.
    if (this.closed_with) return Promise.reject(this.closed_with);
    if (this.log.high_watermark > result.last_offset) return Promise.resolve(result); // at or below the high watermark
    if (this.waiters.length - this.head >= ACK_WAITERS_MAX) {
      return Promise.reject(
        new BrokerError('request_timed_out', `${this.log.name}: too many appends waiting for the in-sync replicas`),
      );
    }
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiter.reject = () => undefined;
        reject(
          new BrokerError(
            'request_timed_out',
            `${this.log.name}: the in-sync replicas did not confirm offset ${result.last_offset} within ` +
              `${ACK_WAIT_MS_MAX} ms`,
          ),
        );
      }, ACK_WAIT_MS_MAX);
      const waiter: AckWaiter = { last_offset: result.last_offset, result, resolve, reject, timer };
      this.waiters.push(waiter);
    });
  }

  /** Answers the waiters the high watermark now covers; `refuse` (if given) fails them instead. */
  settle(high_watermark: number, refuse: (() => BrokerError | null) | null): void {
    while (this.head < this.waiters.length && this.waiters[this.head]!.last_offset < high_watermark) {
      const waiter = this.waiters[this.head++]!;
      clearTimeout(waiter.timer);
      const error = refuse?.() ?? null;
      if (error) waiter.reject(error);
      else {
        invariant(
          waiter.last_offset < this.log.high_watermark,
          () =>
            `${this.log.name}: offset ${waiter.last_offset} acknowledged above the high watermark ` +
            `${this.log.high_watermark}`,
        );
        waiter.resolve(waiter.result);
      }
    }
    if (this.head === this.waiters.length) {
      this.waiters = [];
      this.head = 0;
    }
  }

  /** Leadership ended: every waiting append fails with `error` (the client retries on the new leader). */
  close(error: BrokerError): void {
    this.closed_with = error;
    this.refuse_waiting(error);
    for (const unsubscribe of this.unsubscribes) unsubscribe();
  }

  /** Every waiting append fails with `error` (the ISR fell below min.insync.replicas: none can be confirmed). */
  refuse_waiting(error: BrokerError): void {
    for (let i = this.head; i < this.waiters.length; i++) {
      const waiter = this.waiters[i]!;
      clearTimeout(waiter.timer);
      waiter.reject(error);
    }
    this.waiters = [];
    this.head = 0;
  }
}
