// Committed consumer-group offsets, kept durably in the internal topic __consumer_offsets (one
// partition) as ordinary record batches: key {"g","t","p"} and value {"o","m","e"}, or a null value
// when a group's offsets are deleted. The whole topic is replayed into memory at start. Offsets
// committed in a transaction (TxnOffsetCommit) are a transactional batch of the producer's, held
// until the transaction's marker in this partition applies them (commit) or drops them (abort).
import { encode_record_batch, type BatchRecord } from '../protocol/record_batch.ts';
import { ControlType, is_transactional_batch, marker_type } from '../protocol/control_records.ts';
import { ATTRIBUTE_TRANSACTIONAL, batch_producer_id } from '../format/batch_layout.ts';
import type { PartitionLog } from '../storage/index.ts';
import type { Clock } from '../core/clock.ts';
import { BrokerError, leadership_lost } from '../core/errors.ts';
import { replay_log } from './replay_log.ts';
import type { CommittedOffset, OffsetCommitEntry } from '../core/types.ts';

export const OFFSETS_TOPIC = '__consumer_offsets';

function key_of(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

interface HeldRecord {
  key: Buffer;
  value: Buffer | null;
  timestamp_ms: number;
}

export class OffsetStore {
  private readonly groups = new Map<string, Map<string, CommittedOffset & { topic: string; partition: number }>>();
  /** Offsets committed in an open transaction, by producer id. */
  private readonly held = new Map<number, HeldRecord[]>();

  constructor(
    private readonly log: PartitionLog,
    private readonly clock: Clock,
  ) {}

  async load(): Promise<void> {
    await replay_log(this.log, (record, batch) => {
      if (!is_transactional_batch(batch)) return this.apply(record.key!, record.value, record.timestamp_ms);
      const producer_id = batch_producer_id(batch, 0);
      const marker = marker_type(batch);
      if (marker === null) this.hold(producer_id, [record as HeldRecord]);
      else if (marker === ControlType.COMMIT || marker === ControlType.ABORT)
        this.end_txn(producer_id, marker === ControlType.COMMIT);
    });
  }

  private hold(producer_id: number, records: HeldRecord[]): void {
    const held = this.held.get(producer_id);
    if (held) held.push(...records);
    else this.held.set(producer_id, [...records]);
  }

  /** The marker of the producer's transaction is in the log: its offsets apply, or go. */
  end_txn(producer_id: number, commit: boolean): void {
    const held = this.held.get(producer_id);
    this.held.delete(producer_id);
    if (commit) for (const record of held ?? []) this.apply(record.key, record.value, record.timestamp_ms);
  }

  /** TxnOffsetCommit: the offsets are stored now and apply when the transaction commits. */
  async commit_in_txn(
    group: string,
    producer: { producer_id: number; producer_epoch: number },
    entries: OffsetCommitEntry[],
  ): Promise<void> {
    if (entries.length === 0) return;
    const records = this.records_of(group, entries);
    // Kafka's form: the producer's id and epoch, no sequence (checked: the client rules want one).
    await this.append(
      encode_record_batch(records, { ...producer, base_sequence: -1, attributes: ATTRIBUTE_TRANSACTIONAL }),
      { checked: true },
    );
    this.hold(producer.producer_id, records as HeldRecord[]);
  }

  /** Appends to the offsets log; one no longer led here makes this broker not the coordinator. */
  private async append(batch: Buffer, options?: { checked: boolean }): Promise<void> {
    try {
      await this.log.append(batch, options);
    } catch (error) {
      if (leadership_lost(error)) throw new BrokerError('not_coordinator', (error as Error).message);
      throw error;
    }
  }

  private apply(key_bytes: Buffer, value: Buffer | null, timestamp_ms: number): void {
    const key = JSON.parse(key_bytes.toString('utf8')) as { g: string; t?: string; p?: number };
    if (key.t === undefined) {
      if (value === null) this.groups.delete(key.g);
      return;
    }
    let offsets = this.groups.get(key.g);
    if (value === null) {
      offsets?.delete(key_of(key.t, key.p!));
      return;
    }
    const parsed = JSON.parse(value.toString('utf8')) as { o: number; m: string | null; e: number };
    if (!offsets) {
      offsets = new Map();
      this.groups.set(key.g, offsets);
    }
    offsets.set(key_of(key.t, key.p!), {
      topic: key.t,
      partition: key.p!,
      offset: parsed.o,
      metadata: parsed.m,
      leader_epoch: parsed.e,
      commit_timestamp_ms: timestamp_ms,
    });
  }

  /** Appends the commits durably, then makes them visible. */
  async commit(group: string, entries: OffsetCommitEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const records = this.records_of(group, entries);
    await this.append(encode_record_batch(records));
    for (const record of records) this.apply(record.key!, record.value, record.timestamp_ms);
  }

  private records_of(group: string, entries: OffsetCommitEntry[]): BatchRecord[] {
    const now = this.clock.now_ms();
    return entries.map((e) => ({
      key: Buffer.from(JSON.stringify({ g: group, t: e.topic, p: e.partition })),
      value: Buffer.from(JSON.stringify({ o: e.offset, m: e.metadata, e: e.leader_epoch })),
      timestamp_ms: now,
    }));
  }

  /** Deletes every offset of a group (DeleteGroups). */
  async delete_group(group: string): Promise<void> {
    await this.append(
      encode_record_batch([
        { key: Buffer.from(JSON.stringify({ g: group })), value: null, timestamp_ms: this.clock.now_ms() },
      ]),
    );
    this.groups.delete(group);
  }

  /** Deletes a group's offsets of the partitions named (OffsetDelete). */
  async delete_offsets(group: string, partitions: ReadonlyArray<{ topic: string; partition: number }>): Promise<void> {
    if (partitions.length === 0) return;
    const records: BatchRecord[] = partitions.map(({ topic, partition }) => ({
      key: Buffer.from(JSON.stringify({ g: group, t: topic, p: partition })),
      value: null,
      timestamp_ms: this.clock.now_ms(),
    }));
    await this.append(encode_record_batch(records));
    for (const record of records) this.apply(record.key!, null, 0);
  }

  /** Deletes the offsets of one topic from every group (DeleteTopics). */
  async delete_topic(topic: string): Promise<void> {
    const records: BatchRecord[] = [];
    for (const [group, offsets] of this.groups) {
      for (const entry of offsets.values()) {
        if (entry.topic === topic)
          records.push({
            key: Buffer.from(JSON.stringify({ g: group, t: topic, p: entry.partition })),
            value: null,
            timestamp_ms: this.clock.now_ms(),
          });
      }
    }
    if (records.length === 0) return;
    await this.append(encode_record_batch(records));
    for (const record of records) this.apply(record.key!, null, 0);
  }

  /** Whether an open transaction holds an offset of the group's for the partition (KIP-447's unstable offset). */
  pending(group: string, topic: string, partition: number): boolean {
    for (const records of this.held.values()) {
      for (const record of records) {
        const key = JSON.parse(record.key.toString('utf8')) as { g: string; t?: string; p?: number };
        if (key.g === group && key.t === topic && key.p === partition) return true;
      }
    }
    return false;
  }

  get(group: string, topic: string, partition: number): CommittedOffset | undefined {
    return this.groups.get(group)?.get(key_of(topic, partition));
  }

  all(group: string): Array<CommittedOffset & { topic: string; partition: number }> {
    return [...(this.groups.get(group)?.values() ?? [])];
  }

  has_group(group: string): boolean {
    return (this.groups.get(group)?.size ?? 0) > 0;
  }

  group_ids(): string[] {
    return [...this.groups.keys()].filter((g) => this.has_group(g));
  }
}
