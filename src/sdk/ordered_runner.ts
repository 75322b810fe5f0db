// Ordered parallel processing: up to `concurrency` messages handled at once, with two messages of
// the same ordering key never at the same time and each key's messages in offset order.
//
// The ordering key is the message key within its partition (`orderBy: 'key'`; messages with a null
// key share one queue per partition) or the partition itself (`orderBy: 'partition'`). Of the
// queues whose next message may start, the one whose message is earliest in its partition (counted
// in messages submitted; ties: submitted first) goes first: partitions share the slots evenly, and
// within a partition older messages go first, so its watermark lags as little as it can.
//
// Per partition the runner keeps the submitted offsets in order and which of them are done; the
// partition's watermark is the lowest submitted offset not done (or, when all are done, the last
// one + 1): everything below it is finished, so it is the offset safe to commit.
//
// A message whose handler fails halts its partition: the rest of that partition's queue is
// dropped, nothing more of it starts, and the watermark stays at or below the failed offset. The
// `may_start` check halts a partition the same way (a pause, a seek, a stop or a rebalance). Work
// already started always runs to its end. Pure: no I/O, no timers.

export interface OrderedMessage {
  /** The partition's identity (any string, e.g. topic + partition). */
  partition: string;
  /** The message key (any string encoding of it), or null. */
  key: string | null;
  offset: number;
}

export interface OrderedRunnerOptions<T extends OrderedMessage> {
  /** Messages handled at once, across all partitions. At least 1. */
  concurrency: number;
  orderBy: 'key' | 'partition';
  handle(message: T): Promise<void> | void;
  /** Checked right before a message starts: false halts its partition instead. */
  may_start?(message: T): boolean;
  /** After a message's handler finished; `watermark` is its partition's watermark now. */
  on_done?(message: T, watermark: number): void;
}

interface PartitionTrack {
  /** Submitted offsets in order; those before `head` are done. */
  offsets: number[];
  head: number;
  /** Done offsets at or after `head`. */
  done: Set<number>;
  last: number;
  halted: boolean;
  failure: { offset: number; error: unknown } | null;
  /** The queue ids of this partition's keys. */
  queues: Set<string>;
  /** Messages submitted (and not dropped at once): the next one's index in the partition. */
  submitted: number;
}

interface Ready {
  /** The waiting message's index in its partition, then its submission number. */
  index: number;
  seq: number;
  id: string;
}

function before(a: Ready, b: Ready): boolean {
  return a.index < b.index || (a.index === b.index && a.seq < b.seq);
}

export class OrderedRunner<T extends OrderedMessage> {
  private readonly concurrency: number;
  private readonly tracks = new Map<string, PartitionTrack>();
  private readonly queues = new Map<string, T[]>();
  /** Queue ids with a message in flight. */
  private readonly busy = new Set<string>();
  /** Queues not busy with a message waiting, ordered by that message's rank (a min-heap). */
  private ready: Ready[] = [];
  private next_seq = 0;
  private readonly ranks = new WeakMap<T, { index: number; seq: number }>();
  private running = 0;
  private idle_waiters: Array<() => void> = [];

  constructor(private readonly options: OrderedRunnerOptions<T>) {
    this.concurrency = Math.max(1, Math.floor(options.concurrency));
  }

  /** Messages whose handlers are running. */
  get in_flight(): number {
    return this.running;
  }

  /** Queues a message; a partition's messages must be submitted in increasing offset order. */
  submit(message: T): void {
    const track = this.track(message.partition);
    if (message.offset <= track.last)
      throw new RangeError(`offset ${message.offset} submitted after ${track.last} for partition ${message.partition}`);
    track.last = message.offset;
    track.offsets.push(message.offset);
    if (track.halted) return; // never runs: stays not done
    this.ranks.set(message, { index: track.submitted++, seq: this.next_seq++ });
    const id = this.queue_id(message);
    track.queues.add(id);
    let queue = this.queues.get(id);
    if (!queue) this.queues.set(id, (queue = []));
    queue.push(message);
    if (queue.length === 1 && !this.busy.has(id)) this.make_ready(id, message);
    this.pump();
  }

  /**
   * The lowest submitted offset of the partition not done; the last one + 1 when all are done; null when none was
   * submitted.
   */
  watermark(partition: string): number | null {
    const track = this.tracks.get(partition);
    if (!track || track.offsets.length === 0) return null;
    return track.head < track.offsets.length ? track.offsets[track.head]! : track.last + 1;
  }

  /** Offsets done above the watermark (handled out of offset order, by other keys), ascending. */
  done_above_watermark(partition: string): number[] {
    const track = this.tracks.get(partition);
    return track ? [...track.done].sort((a, b) => a - b) : [];
  }

  /** The first handler failure of the partition, if any. */
  failure(partition: string): { offset: number; error: unknown } | null {
    return this.tracks.get(partition)?.failure ?? null;
  }

  halted(partition: string): boolean {
    return this.tracks.get(partition)?.halted ?? false;
  }

  /** Starts nothing more of the partition (messages running finish); its queued messages are dropped. */
  halt(partition: string): void {
    const track = this.track(partition);
    if (track.halted) return;
    track.halted = true;
    for (const id of track.queues) this.queues.delete(id);
    track.queues.clear();
    const ready = this.ready.filter((entry) => this.queues.has(entry.id));
    this.ready = [];
    for (const entry of ready) this.heap_push(entry);
    this.check_idle();
  }

  /** Resolves once nothing runs and nothing can start (every queue empty, halted or waiting on nothing). */
  idle(): Promise<void> {
    if (this.is_idle()) return Promise.resolve();
    return new Promise((resolve) => this.idle_waiters.push(resolve));
  }

  private is_idle(): boolean {
    return this.running === 0 && this.ready.length === 0;
  }

  private check_idle(): void {
    if (!this.is_idle()) return;
    const waiters = this.idle_waiters;
    this.idle_waiters = [];
    for (const resolve of waiters) resolve();
  }

  private track(partition: string): PartitionTrack {
    let track = this.tracks.get(partition);
    if (!track)
      this.tracks.set(
        partition,
        (track = {
          offsets: [],
          head: 0,
          done: new Set(),
          last: -Infinity,
          halted: false,
          failure: null,
          queues: new Set(),
          submitted: 0,
        }),
      );
    return track;
  }

  private queue_id(message: T): string {
    if (this.options.orderBy === 'partition' || message.key === null) return `${message.partition}\u0000n`;
    return `${message.partition}\u0000k${message.key}`;
  }

  private pump(): void {
    while (this.running < this.concurrency && this.ready.length > 0) {
      const { id } = this.heap_pop();
      const queue = this.queues.get(id);
      const message = queue?.shift();
      if (!message) continue;
      if (this.options.may_start && !this.options.may_start(message)) {
        queue!.unshift(message);
        this.halt(message.partition);
        continue;
      }
      this.busy.add(id);
      this.running++;
      let work: Promise<void>;
      try {
        work = Promise.resolve(this.options.handle(message));
      } catch (error) {
        work = Promise.reject(error);
      }
      work.then(
        () => this.finish(id, message, null),
        (error: unknown) => this.finish(id, message, { error }),
      );
    }
    this.check_idle();
  }

  private finish(id: string, message: T, failed: { error: unknown } | null): void {
    this.running--;
    this.busy.delete(id);
    const track = this.track(message.partition);
    if (failed) {
      track.failure ??= { offset: message.offset, error: failed.error };
      this.halt(message.partition);
    } else {
      track.done.add(message.offset);
      while (track.head < track.offsets.length && track.done.delete(track.offsets[track.head]!)) track.head++;
      if (track.head > 1024 && track.head * 2 > track.offsets.length) {
        track.offsets = track.offsets.slice(track.head);
        track.head = 0;
      }
      const queue = this.queues.get(id);
      if (queue && queue.length > 0) this.make_ready(id, queue[0]!);
      else if (queue) this.queues.delete(id);
    }
    try {
      if (!failed) this.options.on_done?.(message, this.watermark(message.partition)!);
    } finally {
      this.pump();
    }
  }

  private make_ready(id: string, first: T): void {
    this.heap_push({ ...this.ranks.get(first)!, id });
  }

  private heap_push(entry: Ready): void {
    const heap = this.ready;
    heap.push(entry);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(entry, heap[parent]!)) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = entry;
  }

  private heap_pop(): Ready {
    const heap = this.ready;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      let i = 0;
      for (;;) {
        const left = 2 * i + 1;
        if (left >= heap.length) break;
        const child = left + 1 < heap.length && before(heap[left + 1]!, heap[left]!) ? left + 1 : left;
        if (!before(heap[child]!, last)) break;
        heap[i] = heap[child]!;
        i = child;
      }
      heap[i] = last;
    }
    return top;
  }
}
