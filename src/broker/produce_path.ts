// The produce path: one record batch per partition, from a front end to the partition's log. The
// batch header is read once, here, where the batch enters the broker; then, in order:
//   1. a batch for the delay log is one another broker forwarded (its produce carried delay headers);
//   2. a batch whose records carry delay headers goes to delayed delivery instead of its topic;
//   3. a topic with caps (sluice.max.messages / sluice.max.bytes) makes room or refuses; a
//      compacted topic refuses a record without a key;
//   4. an idempotent batch (producer id and sequence) is checked against the producer's last five
//      batches: a duplicate is answered with its original offset once that append is acknowledged;
//      a transactional one must belong to its producer's ongoing transaction on this partition;
//   5. the log appends it (offsets assigned synchronously, so batches keep their arrival order).
// Produces to a partition stay in arrival order: a batch whose headers must be read asynchronously
// holds the partition's later batches until its append is issued.
import type { Clock } from '../core/clock.ts';
import { BrokerError } from '../core/errors.ts';
import type { Placement } from '../core/placement.ts';
import type { ProduceOptions, ProduceResult, TopicPartition, TxnProducer } from '../core/types.ts';
import { check_batch, type AppendResult, type PartitionLog } from '../storage/index.ts';
import {
  ATTRIBUTE_TRANSACTIONAL,
  BATCH_HEADER_BYTES,
  batch_attributes,
  batch_base_sequence,
  batch_last_offset_delta,
  batch_max_timestamp,
  batch_producer_epoch,
  batch_producer_id,
  batch_records_count,
  batch_size_at,
} from '../format/batch_layout.ts';
import { DELAYED_TOPIC, DelayedDelivery, type DelayedSettings, type DelayedTxn } from './delayed/delayed_delivery.ts';
import { delayed_records, may_carry_delay, type DelayedRecords } from './delayed/delay_headers.ts';
import { overflow_limits, type OverflowGuard } from './overflow.ts';
import { last_sequence_of, type BatchEntry } from './producer_state.ts';
import { matches_stored } from './duplicate_check.ts';
import { compacted, require_keys } from './compaction/batch_records.ts';
import type { ProducerStates } from './producer_states.ts';
import type { TopicManager } from './topics.ts';

/** The header fields the produce path reads, taken from the batch once. */
interface BatchHeader {
  records_count: number;
  transactional: boolean;
  producer_id: number;
  producer_epoch: number;
  base_sequence: number;
  last_sequence: number;
  max_timestamp_ms: number;
}

export interface ProducePathDeps {
  topics: TopicManager;
  placement: Placement;
  producers: ProducerStates;
  overflow: OverflowGuard;
  clock: Clock;
  delayed_settings: DelayedSettings;
  /** Delayed delivery when it runs on this broker. */
  delayed_host(): DelayedDelivery | null;
  /** Appends a batch on the partition's leader, wherever that is. */
  append(topic: string, partition: number, records: Buffer): Promise<void>;
  /**
   * Throws unless the producer's ongoing transaction has the partition (the transaction
   * coordinator's check); with `join` (Produce v12+) the partition joins it first.
   */
  check_transactional(producer: TxnProducer, where: TopicPartition, join: boolean): void | Promise<void>;
  /** Adds the partition to the producer's ongoing transaction (the delay log, for delayed records). */
  add_to_txn(producer: TxnProducer, where: TopicPartition): Promise<void>;
}

const DELAY_LOG = { topic: DELAYED_TOPIC, partition: 0 } as const;

/** Reads the header of a produced batch, refusing what the log must not see (several batches). */
function read_header(records: Buffer): BatchHeader | null {
  if (records.length < BATCH_HEADER_BYTES) return null; // the log refuses it as truncated
  if (batch_size_at(records, 0) !== records.length) {
    throw new BrokerError('invalid_record', 'a produce request must carry exactly one record batch per partition');
  }
  const base_sequence = batch_base_sequence(records, 0);
  const transactional = (batch_attributes(records, 0) & ATTRIBUTE_TRANSACTIONAL) !== 0;
  if (transactional && (batch_producer_id(records, 0) < 0 || base_sequence < 0)) {
    throw new BrokerError('invalid_record', 'a transactional batch needs a producer id and a sequence');
  }
  return {
    records_count: batch_records_count(records, 0),
    transactional,
    producer_id: batch_producer_id(records, 0),
    producer_epoch: batch_producer_epoch(records, 0),
    base_sequence,
    last_sequence: last_sequence_of(base_sequence, batch_last_offset_delta(records, 0)),
    max_timestamp_ms: batch_max_timestamp(records, 0),
  };
}

const is_idempotent = (header: BatchHeader | null): header is BatchHeader =>
  header !== null && header.producer_id >= 0 && header.base_sequence >= 0;

export class ProducePath {
  /** Per partition, the end of the chain of produces that had to wait (see produce). */
  private readonly gates = new Map<string, Promise<void>>();

  constructor(private readonly deps: ProducePathDeps) {}

  async produce(
    topic: string,
    partition: number,
    records: Buffer,
    acks: -1 | 0 | 1,
    options?: ProduceOptions,
  ): Promise<ProduceResult> {
    if (topic === DELAYED_TOPIC) return this.accept_forwarded_delays(records);
    // A topic just created elsewhere may not have reached this broker's view yet: it catches up
    // once before refusing. Named leader a moment before serving (a new topic, a failover), it
    // waits rather than refuses, so a client's first batches are neither refused nor, when it
    // retries them, reordered.
    if (!this.deps.topics.has(topic, partition)) await this.deps.placement.catch_up();
    this.deps.topics.check(topic, partition); // an unknown topic or partition is refused as such first
    const pending = this.deps.placement.leadership_pending(topic, partition);
    if (pending) await pending;
    const log = this.deps.placement.leader_log(topic, partition, acks === -1);
    const local_ack = acks !== -1;
    const header = read_header(records);
    // A broker's own append (a due delayed record, a dead letter) keeps its delay headers, served.
    const needs_delay_check = !options?.broker_append && header !== null && may_carry_delay(records);
    const producer: TxnProducer | null = header?.transactional
      ? {
          transactional_id: options?.transactional_id ?? '',
          producer_id: header.producer_id,
          producer_epoch: header.producer_epoch,
        }
      : null;
    if (producer) await this.deps.check_transactional(producer, { topic, partition }, options?.join_txn === true);
    const configs = this.deps.topics.get(topic)?.configs ?? {};
    const limits = overflow_limits(configs);
    // A compacted topic's keys: an uncompressed batch is checked here, a compressed one once decompressed.
    let keys_checked: Promise<void> | null = null;
    // Whether check_batch has passed the batch here already: the append does not check it again.
    let checked = false;
    if (!options?.broker_append && header !== null && compacted(configs)) {
      check_batch(records, 0, { message_bytes_max: log.config.message_bytes_max, client_batch: true });
      checked = true;
      keys_checked = require_keys(records);
      keys_checked?.catch(() => undefined); // awaited below, maybe only after the gate: not unhandled meanwhile
    }
    const gate = this.gates.get(log.name);
    if (!needs_delay_check && !keys_checked && !limits && !gate)
      return this.append_in_order(log, records, header, local_ack, checked);
    // Reading a batch's headers may wait (decompression); later batches of the partition wait for
    // it, so batches are still appended in the order they arrived.
    let open!: () => void;
    const mine = new Promise<void>((resolve) => (open = resolve));
    const chained = (gate ?? Promise.resolve()).then(() => mine);
    this.gates.set(log.name, chained);
    try {
      await gate;
      let result: Promise<ProduceResult> | null = null;
      await keys_checked;
      if (needs_delay_check) {
        // Checked before its records are read: a corrupt batch is refused as corrupt.
        if (!checked) check_batch(records, 0, { message_bytes_max: log.config.message_bytes_max, client_batch: true });
        checked = true;
        const received_ms = this.deps.clock.now_ms();
        const delayed = await delayed_records(records, received_ms, this.deps.delayed_settings.delay_max_ms);
        // A transaction's delayed records wait in the delay log for its marker there.
        if (delayed && producer) await this.deps.add_to_txn(producer, DELAY_LOG);
        if (delayed) result = this.produce_delayed(log, topic, partition, records, header, delayed, received_ms);
      }
      if (!result && limits && header)
        await this.deps.overflow.make_room(topic, partition, log, limits, header.records_count, records.length);
      // append_in_order issues the append before its first await.
      result ??= this.append_in_order(log, records, header, local_ack, checked);
      open();
      return await result;
    } finally {
      open();
      if (this.gates.get(log.name) === chained) this.gates.delete(log.name);
    }
  }

  /** The append of an ordinary batch; the log's append is called before the first await. */
  private async append_in_order(
    log: PartitionLog,
    records: Buffer,
    header: BatchHeader | null,
    local_ack: boolean,
    checked: boolean,
  ): Promise<ProduceResult> {
    if (!is_idempotent(header)) return result_of(await log.append(records, { local_ack, checked }));
    // Check the batch (CRC, size) before trusting its producer fields: a corrupt retry must be
    // refused as corrupt, not answered as a duplicate or a sequence error.
    if (!checked) check_batch(records, 0, { message_bytes_max: log.config.message_bytes_max, client_batch: true });
    const producers = this.deps.producers.of(log.name);
    const duplicate = producers.check(
      header.producer_id,
      header.producer_epoch,
      header.base_sequence,
      header.last_sequence,
    );
    if (duplicate) return this.answer_duplicate(log, duplicate, records, local_ack);
    const base_offset = log.next_offset;
    const appended = log.append(records, { checked: true, local_ack });
    if (log.next_offset === base_offset) return result_of(await appended); // refused before any offset was assigned
    const entry: BatchEntry = {
      first_sequence: header.base_sequence,
      last_sequence: header.last_sequence,
      base_offset,
      last_offset: log.next_offset - 1,
      max_timestamp_ms: header.max_timestamp_ms,
      settled: appended,
    };
    producers.record(header.producer_id, header.producer_epoch, entry);
    if (header.transactional) producers.txns.on_data(header.producer_id, base_offset);
    try {
      return result_of(await appended);
    } catch (error) {
      // A BrokerError comes from the acknowledgement gate (leadership ended, the ISR did not
      // confirm): the batch was written and stays in the log unless truncation removes it (which
      // drops its entry too), so a retry must be recognised. Only a failed write is forgotten.
      if (!(error instanceof BrokerError)) {
        producers.forget(header.producer_id, entry);
        // The log cut the failed write and everything after it: so does the transaction state.
        if (header.transactional) producers.txns.truncate_from(base_offset);
      }
      throw error;
    }
  }

  /**
   * A retry of a batch already in the log answers with the original offset once the original
   * append settled — and, under acks=all, only once the high watermark covers it: the original may
   * have been written by an earlier leader, or by this broker in an earlier leadership.
   */
  private async answer_duplicate(
    log: PartitionLog,
    duplicate: BatchEntry,
    records: Buffer,
    local_ack: boolean,
  ): Promise<ProduceResult> {
    await duplicate.settled.catch((error: unknown) => {
      if (!(error instanceof BrokerError)) throw error;
    });
    if (!(await matches_stored(log, duplicate.base_offset, records))) {
      throw new BrokerError(
        'out_of_order_sequence',
        `sequence ${duplicate.first_sequence}..${duplicate.last_sequence} was already written with other records ` +
          `(offset ${duplicate.base_offset}): a sequence number was reused`,
      );
    }
    const answer = {
      base_offset: duplicate.base_offset,
      log_append_time_ms: -1,
      log_start_offset: log.log_start_offset,
    };
    if (local_ack) return answer;
    if (log.ack_gate) await log.ack_gate({ ...answer, last_offset: duplicate.last_offset });
    // No gate: a single node's high watermark is its durability policy's; a replica whose
    // leadership ended while the retry waited for the original cannot confirm what it did not.
    else if (duplicate.last_offset >= log.high_watermark)
      throw new BrokerError('not_leader_or_follower', `${log.name}: leadership ended before the ISR confirmed`);
    return answer;
  }

  /**
   * A batch with delayed records goes to the delay log as a whole (records without a delay header
   * in it are due at once). There is no offset in the topic yet: the answer carries -1. An
   * idempotent producer's retry is recognised as long as the producer state holds the batch.
   */
  private async produce_delayed(
    log: PartitionLog,
    topic: string,
    partition: number,
    records: Buffer,
    header: BatchHeader | null,
    delayed: DelayedRecords,
    received_ms: number,
  ): Promise<ProduceResult> {
    const answer = { base_offset: -1, log_append_time_ms: -1, log_start_offset: log.log_start_offset };
    const { producer_id, producer_epoch } = header ?? { producer_id: -1, producer_epoch: -1 };
    const txn = header?.transactional ? { producer_id, producer_epoch } : null;
    if (!is_idempotent(header)) {
      await this.schedule_delayed(topic, partition, records, delayed.due_ms, received_ms, txn);
      return answer;
    }
    const producers = this.deps.producers.of(log.name);
    const duplicate = producers.check(
      header.producer_id,
      header.producer_epoch,
      header.base_sequence,
      header.last_sequence,
    );
    if (duplicate) {
      await duplicate.settled;
      return answer;
    }
    const scheduling = this.schedule_delayed(topic, partition, records, delayed.due_ms, received_ms, txn);
    const entry: BatchEntry = {
      first_sequence: header.base_sequence,
      last_sequence: header.last_sequence,
      base_offset: -1,
      last_offset: -1,
      max_timestamp_ms: header.max_timestamp_ms,
      settled: scheduling,
    };
    producers.record(header.producer_id, header.producer_epoch, entry);
    try {
      await scheduling;
    } catch (error) {
      producers.forget(header.producer_id, entry);
      throw error;
    }
    return answer;
  }

  /** Hands a delayed batch to delayed delivery: here, or on the broker running it. */
  private async schedule_delayed(
    topic: string,
    partition: number,
    records: Buffer,
    due_ms: number[],
    received_ms: number,
    txn: DelayedTxn | null,
  ): Promise<void> {
    const host = this.deps.delayed_host();
    if (host) return host.schedule(topic, partition, records, due_ms, received_ms, txn);
    if (this.deps.placement.is_leader(DELAYED_TOPIC, 0))
      throw new BrokerError('leader_not_available', 'delayed delivery is not running yet');
    const wrapper = DelayedDelivery.wrap(topic, partition, records, received_ms, txn);
    await this.deps.placement.forward(DELAYED_TOPIC, 0, wrapper);
  }

  /** Delayed batches another broker forwarded (its produce carried delay headers). */
  private async accept_forwarded_delays(records: Buffer): Promise<ProduceResult> {
    const host = this.deps.delayed_host();
    // Delayed delivery runs elsewhere: the sender retries with the leader it finds.
    if (!host) throw new BrokerError('not_leader_or_follower', 'delayed delivery does not run on this broker now');
    for (const item of DelayedDelivery.unwrap(records)) {
      const found = await delayed_records(item.batch, item.received_ms, this.deps.delayed_settings.delay_max_ms);
      if (found) await host.schedule(item.topic, item.partition, item.batch, found.due_ms, item.received_ms, item.txn);
      else await this.deps.append(item.topic, item.partition, item.batch);
    }
    return { base_offset: -1, log_append_time_ms: -1, log_start_offset: -1 };
  }
}

function result_of(appended: AppendResult): ProduceResult {
  return {
    base_offset: appended.base_offset,
    log_append_time_ms: appended.log_append_time_ms,
    log_start_offset: appended.log_start_offset,
  };
}
