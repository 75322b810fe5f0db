// A full queue. A topic may cap each partition's unconsumed messages (`sluice.max.messages`) and
// the bytes its log holds (`sluice.max.bytes`). Unconsumed means past the lowest start offset of
// the share groups reading the partition (the log start when none reads it). With
// `sluice.overflow.policy=reject` a produce that would go past a cap is refused with a retriable
// error and nothing of it is kept; with `archive-oldest` the oldest messages are first copied to
// `<topic>.archive` and then leave the queue (share groups skip them; a partition no share group
// reads has them deleted), so nothing is dropped without a copy; an AMQP queue with a dead-letter
// exchange has them dead-lettered there instead (x-death reason maxlen).
import { decompress_record_batch } from '../protocol/compression.ts';
import {
  decode_record_batch,
  encode_record_batch,
  type BatchRecord,
  type DecodedRecord,
} from '../protocol/record_batch.ts';
import type { Logger, PartitionLog } from '../storage/index.ts';
import { BrokerError } from '../core/errors.ts';
import type { ShareCoordinator } from './queues/share_coordinator.ts';
import type { TopicConfigs } from '../core/types.ts';
import type { AppendRecords, TopicManager } from './topics.ts';
import { batch_last_offset } from '../format/batch_layout.ts';

export type OverflowPolicy = 'reject' | 'archive-oldest';

export interface OverflowLimits {
  max_messages: number;
  max_bytes: number;
  policy: OverflowPolicy;
}

/** Messages archived per produce at most (a produce larger than this over a full queue is refused). */
const ARCHIVE_MESSAGES_MAX = 100_000;
const READ_BYTES = 1024 * 1024;

export function overflow_limits(configs: TopicConfigs): OverflowLimits | null {
  const max_messages = Number(configs['sluice.max.messages'] ?? -1);
  const max_bytes = Number(configs['sluice.max.bytes'] ?? -1);
  if (max_messages < 0 && max_bytes < 0) return null;
  return {
    max_messages,
    max_bytes,
    policy: configs['sluice.overflow.policy'] === 'archive-oldest' ? 'archive-oldest' : 'reject',
  };
}

export function archive_topic_name(topic: string): string {
  return `${topic}.archive`;
}

export class OverflowGuard {
  readonly counters = { rejected: 0, archived: 0 };

  constructor(
    private readonly topics: TopicManager,
    /** The share coordinator when this broker hosts it (a cluster member may not). */
    private readonly share_coordinator: () => ShareCoordinator | null,
    private readonly ensure_topic: (name: string, partitions: number) => Promise<void>,
    private readonly logger: Logger,
    private readonly append: AppendRecords,
    /**
     * The messages pushed out of an AMQP queue with a dead-letter exchange, as its dead letters
     * (reason maxlen); null for other topics, which archive them.
     */
    private readonly dead_letters: (
      topic: string,
      records: DecodedRecord[],
    ) => Array<{ topic: string; records: BatchRecord[] }> | null = () => null,
  ) {}

  /** Where the partition's unconsumed messages start. */
  unconsumed_from(topic: string, partition: number, log: PartitionLog): number {
    return Math.max(
      log.log_start_offset,
      this.share_coordinator()?.lowest_start_offset(topic, partition) ?? log.log_start_offset,
    );
  }

  /**
   * Makes room for `count` more messages of `bytes` bytes, or throws queue_full. Cheap when the
   * topic has no caps or is below them.
   */
  async make_room(
    topic: string,
    partition: number,
    log: PartitionLog,
    limits: OverflowLimits,
    count: number,
    bytes: number,
  ): Promise<void> {
    const from = this.unconsumed_from(topic, partition, log);
    const waiting = log.next_offset - from;
    const over_messages = limits.max_messages >= 0 ? waiting + count - limits.max_messages : 0;
    const over_bytes = limits.max_bytes >= 0 ? log.size_bytes + bytes - limits.max_bytes : 0;
    if (over_messages <= 0 && over_bytes <= 0) return;
    const why =
      over_messages > 0
        ? `${waiting} messages wait (sluice.max.messages=${limits.max_messages})`
        : `the partition holds ${log.size_bytes} bytes (sluice.max.bytes=${limits.max_bytes})`;
    if (
      limits.policy === 'reject' ||
      count > ARCHIVE_MESSAGES_MAX ||
      (over_messages > 0 && count > limits.max_messages)
    ) {
      this.counters.rejected += count;
      throw new BrokerError(
        'queue_full',
        `${topic}-${partition} is full: ${why}; nothing was written, retry once consumers catch up`,
      );
    }
    const archive_count = over_messages > 0 ? over_messages : await this.messages_for_bytes(log, from, over_bytes);
    await this.archive_oldest(topic, partition, log, from, Math.min(archive_count, ARCHIVE_MESSAGES_MAX));
  }

  /** How many messages from `from` make up at least `bytes` bytes of batches. */
  private async messages_for_bytes(log: PartitionLog, from: number, bytes: number): Promise<number> {
    let offset = from;
    let freed = 0;
    while (freed < bytes && offset < log.high_watermark) {
      const { batches } = await log.read(offset, READ_BYTES);
      if (batches.length === 0) break;
      for (const batch of batches) {
        offset = batch_last_offset(batch, 0) + 1;
        freed += batch.length;
        if (freed >= bytes) break;
      }
    }
    return Math.max(1, offset - from);
  }

  /** Copies `count` messages from `from` to the archive topic, then takes them out of the queue. */
  private async archive_oldest(
    topic: string,
    partition: number,
    log: PartitionLog,
    from: number,
    count: number,
  ): Promise<void> {
    const end = Math.min(from + count, log.high_watermark);
    const records: DecodedRecord[] = [];
    let offset = from;
    while (offset < end) {
      const { batches } = await log.read(offset, READ_BYTES);
      if (batches.length === 0) break;
      for (const batch of batches) {
        for (const record of decode_record_batch(await decompress_record_batch(batch)))
          if (record.offset >= offset && record.offset < end) records.push(record);
        offset = batch_last_offset(batch, 0) + 1;
        if (offset >= end) break;
      }
    }
    const routed = this.dead_letters(topic, records);
    for (const target of routed ?? []) await this.append(target.topic, 0, encode_record_batch(target.records));
    if (!routed && records.length > 0) {
      const archive = archive_topic_name(topic);
      await this.ensure_topic(archive, 1);
      const partitions = this.topics.get(archive)!.partitions;
      const copies = records.map(({ key, value, headers, timestamp_ms }) => ({ key, value, headers, timestamp_ms }));
      await this.append(archive, partition % partitions, encode_record_batch(copies));
    }
    // Copied: now the messages leave the queue.
    const shares = this.share_coordinator();
    if (!shares || shares.lowest_start_offset(topic, partition) === null) await log.delete_records_before(end);
    else await shares.skip_before(topic, partition, end);
    this.counters.archived += records.length;
    this.logger.info(
      { topic, partition, archived: records.length, to: routed ? 'dead-letter exchange' : archive_topic_name(topic) },
      'queue full: oldest messages archived',
    );
  }
}
