// The consumer's handlers: a fetched partition's messages handed to eachMessage one at a time in
// offset order, or to eachBatch as one batch; at most `partitionsConsumedConcurrently` partitions
// at once; or, with `concurrency` > 1 or `orderBy: 'key'`, every partition's messages through one
// OrderedRunner (ordered_runner.ts). A partition's position only moves past a message once its
// handler finished, and only such offsets are resolved for the committer. Fetching is
// consumer_fetcher.ts's; the commits themselves are consumer_committer.ts's.
import { OrderedRunner, type OrderedMessage } from './ordered_runner.ts';
import type { KafkaMessage } from './records.ts';
import type { Batch, EachBatchPayload } from './consumer_types.ts';
import {
  HandlerError,
  to_offset,
  type ConsumerContext,
  type PartitionState,
  type ResolvedRunConfig,
} from './consumer_state.ts';
import type { GroupMembership } from './consumer_group.ts';
import type { OffsetCommitter } from './consumer_committer.ts';

class FetchedBatch implements Batch {
  constructor(
    readonly topic: string,
    readonly partition: number,
    readonly highWatermark: string,
    readonly messages: KafkaMessage[],
  ) {}
  isEmpty(): boolean {
    return this.messages.length === 0;
  }
  firstOffset(): string | null {
    return this.messages[0]?.offset ?? null;
  }
  lastOffset(): string {
    return this.messages.at(-1)?.offset ?? String(Number(this.highWatermark) - 1);
  }
  offsetLag(): string {
    return String(Math.max(0, Number(this.highWatermark) - 1 - Number(this.lastOffset())));
  }
  offsetLagLow(): string {
    const first = this.firstOffset();
    return String(first === null ? 0 : Math.max(0, Number(this.highWatermark) - 1 - Number(first)));
  }
}

/** Runs partition jobs with at most `limit` of them at once, in the order they were given. */
export class PartitionPool {
  private active = 0;
  private readonly queue: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  run(work: () => Promise<void>): Promise<void> {
    const job = new Promise<void>((resolve) => {
      const start = () => {
        this.active++;
        resolve(
          work().finally(() => {
            this.active--;
            this.queue.shift()?.();
          }),
        );
      };
      if (this.active < this.limit) start();
      else this.queue.push(start);
    });
    // The round awaits its jobs only once every leader's fetch has settled: a handler's failure
    // before then must not be an unhandled rejection, which ends the process.
    job.catch(() => undefined);
    return job;
  }
}

/** One round of ordered mode: partitions' messages submitted as they are fetched, then finished. */
export interface OrderedRound {
  submit(
    state: PartitionState,
    epoch: number,
    fetch_offset: number,
    messages: KafkaMessage[],
    next_offset: number,
  ): void;
  finish(): Promise<void>;
}

type OrderedItem = OrderedMessage & { state: PartitionState; epoch: number; message: KafkaMessage };

export class Runner {
  constructor(
    private readonly ctx: ConsumerContext,
    private readonly group: GroupMembership,
    private readonly committer: OffsetCommitter,
  ) {}

  /** The payload's pause(): pauses the partition, returns a function that resumes it. */
  private pauser(state: PartitionState): () => () => void {
    return () => {
      this.ctx.pause([{ topic: state.topic, partitions: [state.partition] }]);
      return () => this.ctx.resume([{ topic: state.topic, partitions: [state.partition] }]);
    };
  }

  /** Hands one partition's fetched messages to the handler, in order. */
  process(
    state: PartitionState,
    epoch: number,
    messages: KafkaMessage[],
    next_offset: number,
    high_watermark: string,
  ): Promise<void> {
    const run = this.ctx.run_config!;
    // The whole loop runs in the handler context, entered once, not per message (an entry costs as
    // much as a small handler).
    if (run.eachMessage) {
      return this.ctx.in_handler.run(true, () => this.each_message(run, state, epoch, messages, next_offset));
    }
    return this.process_batch(run, state, epoch, messages, next_offset, high_watermark);
  }

  /** eachMessage over one partition's messages, one at a time. */
  private async each_message(
    run: ResolvedRunConfig,
    state: PartitionState,
    epoch: number,
    messages: KafkaMessage[],
    next_offset: number,
  ): Promise<void> {
    const ctx = this.ctx;
    const each_message = run.eachMessage!;
    const same = () => ctx.assignment.get(state.key) === state && state.epoch === epoch;
    const live = () => ctx.running && !ctx.needs_rejoin && same() && !ctx.is_paused(state);
    const pause = this.pauser(state);
    const heartbeat = () => this.group.heartbeat_if_due();
    const { topic, partition } = state;
    for (let i = 0; i < messages.length; i++) {
      const message = messages[i]!;
      const offset = Number(message.offset);
      if (!live()) {
        if (same()) state.position = offset;
        return;
      }
      try {
        await each_message({ topic, partition, message, heartbeat, pause });
      } catch (error) {
        if (same()) state.position = offset;
        throw new HandlerError(error);
      }
      if (!same()) return; // a seek during the handler: the position is the seek's
      state.resolved = offset + 1;
      state.uncommitted++;
    }
    if (same()) {
      state.position = next_offset;
      state.resolved = next_offset;
    }
  }

  private async process_batch(
    run: ResolvedRunConfig,
    state: PartitionState,
    epoch: number,
    messages: KafkaMessage[],
    next_offset: number,
    high_watermark: string,
  ): Promise<void> {
    const ctx = this.ctx;
    const same = () => ctx.assignment.get(state.key) === state && state.epoch === epoch;
    const live = () => ctx.running && !ctx.needs_rejoin && same() && !ctx.is_paused(state);
    const resolve = (offset: number) => {
      if (!same() || (state.resolved !== null && offset + 1 <= state.resolved)) return;
      state.uncommitted += state.resolved === null ? 1 : offset + 1 - state.resolved;
      state.resolved = offset + 1;
    };
    const first = Number(messages[0]!.offset);
    const last = Number(messages.at(-1)!.offset);
    const before = state.resolved;
    const batch = new FetchedBatch(state.topic, state.partition, high_watermark, messages);
    const payload = this.batch_payload(run, batch, state, live, resolve);
    const resume_point = () => {
      const resolved = state.resolved !== null && state.resolved !== before ? state.resolved : null;
      if (resolved === null || resolved < first) return first;
      return resolved > last ? next_offset : resolved;
    };
    try {
      await ctx.in_handler.run(true, () => run.eachBatch!(payload));
    } catch (error) {
      if (same()) state.position = resume_point();
      throw new HandlerError(error);
    }
    if (!same()) return;
    if (run.eachBatchAutoResolve) {
      resolve(last);
      state.resolved = next_offset;
      state.position = next_offset;
    } else state.position = resume_point();
  }

  private batch_payload(
    run: ResolvedRunConfig,
    batch: FetchedBatch,
    state: PartitionState,
    live: () => boolean,
    resolve: (offset: number) => void,
  ): EachBatchPayload {
    return {
      batch,
      resolveOffset: (offset) => resolve(to_offset(offset, 'resolveOffset')),
      heartbeat: () => this.group.heartbeat_if_due(),
      pause: this.pauser(state),
      commitOffsetsIfNecessary: async (offsets) => {
        if (!this.ctx.group_id) return;
        if (offsets) {
          await this.committer.commit_offsets(
            offsets.topics.flatMap((t) =>
              t.partitions.map((p) => ({ topic: t.topic, partition: p.partition, offset: p.offset })),
            ),
          );
        } else if (this.committer.commit_due(run)) await this.committer.commit_resolved();
      },
      uncommittedOffsets: () => this.committer.uncommitted_offsets(),
      isRunning: () => this.ctx.running,
      isStale: () => !live(),
    };
  }

  /**
   * Ordered mode (concurrency / orderBy): the round's messages of every partition go through one
   * OrderedRunner. A partition's resolved offset follows its watermark (the lowest offset not done)
   * as handlers finish, and auto commits may run meanwhile. A partition stops at a failed message,
   * or when it is paused, sought, revoked or the consumer stops; what runs finishes first.
   */
  ordered_round(run: ResolvedRunConfig): OrderedRound {
    const ctx = this.ctx;
    const parts = new Map<
      string,
      { state: PartitionState; epoch: number; fetch_offset: number; next_offset: number }
    >();
    const same = (state: PartitionState, epoch: number) =>
      ctx.assignment.get(state.key) === state && state.epoch === epoch;
    const heartbeat = () => this.group.heartbeat_if_due();
    const runner = new OrderedRunner<OrderedItem>({
      concurrency: run.concurrency,
      orderBy: run.orderBy,
      may_start: ({ state, epoch }) => ctx.running && !ctx.needs_rejoin && same(state, epoch) && !ctx.is_paused(state),
      handle: ({ state, message }) => {
        const pause = this.pauser(state);
        return ctx.in_handler.run(true, () =>
          run.eachMessage!({ topic: state.topic, partition: state.partition, message, heartbeat, pause }),
        );
      },
      on_done: ({ state, epoch }, watermark) => {
        if (!same(state, epoch)) return;
        state.uncommitted++;
        if (state.resolved === null || watermark > state.resolved) state.resolved = watermark;
        this.committer.commit_in_background(run);
      },
    });
    return {
      submit: (state, epoch, fetch_offset, messages, next_offset) => {
        parts.set(state.key, { state, epoch, fetch_offset, next_offset });
        for (const message of messages) {
          const offset = Number(message.offset);
          if (state.done_ahead.delete(offset)) continue; // handled before a retry, a pause or a stop of its partition
          const key = message.key === null ? null : message.key.toString('latin1');
          runner.submit({ partition: state.key, key, offset, state, epoch, message });
        }
      },
      finish: async () => {
        await runner.idle();
        let failure: { error: unknown } | null = null;
        for (const { state, epoch, fetch_offset, next_offset } of parts.values()) {
          failure ??= runner.failure(state.key);
          if (!same(state, epoch)) continue; // a seek or a rebalance: the position is not ours
          if (!runner.halted(state.key)) {
            state.position = next_offset;
            state.resolved = next_offset;
          } else {
            const watermark = runner.watermark(state.key)!;
            state.position = watermark;
            if (watermark > (state.resolved ?? fetch_offset)) state.resolved = watermark;
            for (const offset of runner.done_above_watermark(state.key)) state.done_ahead.add(offset);
          }
          for (const offset of state.done_ahead) if (offset < state.position) state.done_ahead.delete(offset);
        }
        if (failure) throw new HandlerError(failure.error);
      },
    };
  }
}
