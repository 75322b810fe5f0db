// A member of a queue's share group on behalf of an AMQP consumer (or a channel's basic.get): joins,
// keeps itself alive with heartbeats, acquires records, settles them, and leaves — which hands
// back whatever it still holds, so a closed channel or connection returns its unacknowledged
// messages. Settlements of one turn go to the core as one call per partition.
import { randomUUID } from 'node:crypto';
import {
  AckType,
  type AckTypeCode,
  type Core,
  type FetchedPartition,
  type QueueRecord,
  type TopicPartition,
} from '../../core/index.ts';

export interface Settlement {
  topic: string;
  partition: number;
  offset: number;
  type: AckTypeCode;
}

export class ShareMember {
  readonly member_id = randomUUID();
  private epoch = 0;
  private timer: NodeJS.Timeout | null = null;
  private partitions: TopicPartition[] = [];
  private settling: Settlement[] = [];
  private settle_scheduled = false;
  private left = false;

  constructor(
    private readonly core: Core,
    readonly queue: QueueRecord,
    private readonly client_host: string,
    private readonly on_error: (error: unknown) => void,
  ) {}

  /** Joins (again, after the group forgot the member): epoch 0 asks for a fresh membership. */
  join(): void {
    if (this.timer) clearInterval(this.timer);
    this.epoch = 0;
    this.beat();
    const interval_ms = Math.max(1_000, this.interval_ms);
    this.timer = setInterval(() => {
      try {
        this.beat();
      } catch (error) {
        this.on_error(error);
      }
    }, interval_ms);
    this.timer.unref();
  }

  private interval_ms = 5_000;

  private beat(): void {
    const result = this.core.shares.heartbeat({
      group_id: this.queue.group_id,
      member_id: this.member_id,
      member_epoch: this.epoch,
      subscribed_topic_names: this.epoch === 0 ? [this.queue.topic] : null,
      client_id: 'amqp',
      client_host: this.client_host,
    });
    this.epoch = result.member_epoch;
    this.interval_ms = result.heartbeat_interval_ms;
    this.partitions = [...result.assignment].flatMap(([topic, ps]) => ps.map((partition) => ({ topic, partition })));
    // A priority queue's levels are its partitions: the highest first, so a fetch takes from the
    // highest level that has messages before any lower one.
    if (this.queue.arguments['x-max-priority'] !== undefined) this.partitions.sort((a, b) => b.partition - a.partition);
  }

  fetch(records_max: number, bytes_max: number): Promise<FetchedPartition[]> {
    return this.core.shares.fetch(this.queue.group_id, this.member_id, this.partitions, records_max, bytes_max);
  }

  /** Calls `wake` when records may have arrived or come back; returns the unsubscribe. */
  on_records(wake: () => void): () => void {
    const unsubscribes: Array<() => void> = [];
    try {
      unsubscribes.push(this.core.shares.on_available(this.queue.group_id, wake));
    } catch {
      // Not the coordinator any more: the next fetch says so, and the consumer is cancelled. A
      // throw here escaped the consumer's loop and stopped the broker (fault suite, seed 77).
      queueMicrotask(wake);
      return () => {};
    }
    for (const { topic, partition } of this.partitions) {
      try {
        unsubscribes.push(this.core.partitions.reader_now(topic, partition).on_high_watermark(wake));
      } catch {
        // the queue's topic is gone: the next fetch says so
      }
    }
    return () => unsubscribes.forEach((u) => u());
  }

  settle(settlement: Settlement): void {
    this.settling.push(settlement);
    if (this.settle_scheduled) return;
    this.settle_scheduled = true;
    queueMicrotask(() => void this.flush_settlements());
  }

  private async flush_settlements(): Promise<void> {
    this.settle_scheduled = false;
    const list = this.settling;
    this.settling = [];
    if (list.length === 0 || this.left) return;
    try {
      await this.core.shares.acknowledge(this.queue.group_id, this.member_id, acknowledgements(list));
    } catch (error) {
      this.on_error(error);
    }
  }

  /** Leaves the group: what the member still holds is offered again. */
  async leave(): Promise<void> {
    if (this.left) return;
    if (this.timer) clearInterval(this.timer);
    await this.flush_settlements();
    this.left = true;
    try {
      this.core.shares.heartbeat({
        group_id: this.queue.group_id,
        member_id: this.member_id,
        member_epoch: -1,
        subscribed_topic_names: null,
        client_id: 'amqp',
        client_host: this.client_host,
      });
    } catch {
      // the coordinator is gone; the member times out there
    }
  }
}

/** Settlements grouped by partition, consecutive offsets of one type as one range. */
function acknowledgements(list: Settlement[]) {
  const by_partition = new Map<string, { topic: string; partition: number; items: Settlement[] }>();
  for (const s of list) {
    const key = `${s.topic}\0${s.partition}`;
    let entry = by_partition.get(key);
    if (!entry) by_partition.set(key, (entry = { topic: s.topic, partition: s.partition, items: [] }));
    entry.items.push(s);
  }
  return [...by_partition.values()].map(({ topic, partition, items }) => {
    items.sort((a, b) => a.offset - b.offset);
    const batches: Array<{
      first_offset: number;
      last_offset: number;
      types: AckTypeCode[];
      release_delay_ms?: number;
    }> = [];
    for (const item of items) {
      const last = batches[batches.length - 1];
      if (last && last.last_offset + 1 === item.offset && last.types[0] === item.type) last.last_offset = item.offset;
      else
        batches.push({
          first_offset: item.offset,
          last_offset: item.offset,
          types: [item.type],
          // A requeued message is offered again at once, as RabbitMQ does.
          ...(item.type === AckType.RELEASE ? { release_delay_ms: 0 } : {}),
        });
    }
    return { topic, partition, batches };
  });
}
