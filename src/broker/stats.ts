// Traffic counters of one broker: messages and bytes in and out per partition, plus optional
// observers for request and flush durations. Front ends call these on every produce and fetch, so
// they only add numbers; whoever exports metrics reads them when scraped (nothing here knows of
// Prometheus). Record counts come from batch headers (lastOffsetDelta + 1), never from decoding.
import type { StatsApi } from '../core/api.ts';
import type { PartitionTraffic, StatsObserver, TrafficTotals } from '../core/types.ts';
import type { DiskSpace } from '../storage/index.ts';

export class BrokerStats implements StatsApi {
  private readonly partitions = new Map<string, PartitionTraffic>();
  readonly totals: TrafficTotals = { messages_in: 0, bytes_in: 0, messages_out: 0, bytes_out: 0 };
  /** Set by a metrics exporter; null when none listens. */
  observer: StatsObserver | null = null;

  constructor(
    /** Whether a partition still exists (counters of others are pruned). */
    private readonly exists: (topic: string, partition: number) => boolean = () => true,
    /** Installs the observer of flush rounds (the storage layer's group commit). */
    readonly set_flush_observer: (observer: ((duration_ms: number) => void) | null) => void = () => undefined,
    /** Free space and size of the file system where the data directory is. */
    readonly disk_space: () => Promise<DiskSpace> = () =>
      Promise.resolve({ free_bytes: Number.MAX_SAFE_INTEGER, total_bytes: Number.MAX_SAFE_INTEGER }),
  ) {}

  private of(topic: string, partition: number): PartitionTraffic {
    const key = `${topic}\u0000${partition}`;
    let traffic = this.partitions.get(key);
    if (!traffic) {
      traffic = { topic, partition, messages_in: 0, bytes_in: 0, messages_out: 0, bytes_out: 0 };
      this.partitions.set(key, traffic);
    }
    return traffic;
  }

  /** A produced batch was accepted. */
  record_in(topic: string, partition: number, messages: number, bytes: number): void {
    const traffic = this.of(topic, partition);
    traffic.messages_in += messages;
    traffic.bytes_in += bytes;
    this.totals.messages_in += messages;
    this.totals.bytes_in += bytes;
  }

  /** Batches were handed to a consumer. */
  record_out(topic: string, partition: number, messages: number, bytes: number): void {
    if (messages === 0 && bytes === 0) return;
    const traffic = this.of(topic, partition);
    traffic.messages_out += messages;
    traffic.bytes_out += bytes;
    this.totals.messages_out += messages;
    this.totals.bytes_out += bytes;
  }

  request_done(api: string, duration_ms: number): void {
    this.observer?.request(api, duration_ms);
  }

  traffic(): IterableIterator<PartitionTraffic> {
    return this.partitions.values();
  }

  /** Drops the counters of partitions whose topic is gone. */
  prune(): void {
    for (const [key, traffic] of this.partitions)
      if (!this.exists(traffic.topic, traffic.partition)) this.partitions.delete(key);
  }
}
