// A channel's publishing: routes each message, gathers what one turn publishes into one record
// batch per partition (one append, one fsync round, covers them all), and in confirm mode answers
// basic.ack / basic.nack in publish order once every queue the message reached has it durably
// (acks=all: fsync'd, and in a cluster on the in-sync replicas). Consecutive outcomes share one
// frame with `multiple`.
import { BrokerError, type Core, type ExchangeRecord, type QueueRecord, type TopicRecord } from '../../core/index.ts';
import { encode_record_batch, type BatchRecord } from '../../protocol/record_batch.ts';
import { AmqpError, ReplyCode } from '../../protocol/amqp/constants.ts';
import { as_integer } from '../../protocol/amqp/field_table.ts';
import { record_of, sender_selected_keys, without_bcc, type PublishedMessage } from './record_mapping.ts';
import { routing_headers } from './arguments.ts';
import { priority_level } from '../../core/index.ts';

/** A batch is sent before it grows past these (the topic's max.message.bytes bounds a batch). */
const BATCH_BYTES_MAX = 512 * 1024;
const BATCH_RECORDS_MAX = 2_000;
/** A queue led by another broker of a cluster is published to through its leader. */
const FORWARD = { forward: true } as const;
/** Confirms outstanding on a channel; a client that never waits is refused beyond this. */
const UNCONFIRMED_MAX = 100_000;
/** At most one warning per channel this often about publishes not stored. */
const NOT_STORED_WARN_INTERVAL_MS = 10_000;

interface PendingBatch {
  key: string;
  queue: QueueRecord;
  topic: string;
  partition: number;
  records: BatchRecord[];
  bytes: number;
  seqs: number[];
}

export interface PublishTarget {
  core: Core;
  vhost: string;
  /** Whether the channel's user may write to the topic (the ACLs, under --authorization). */
  may_write(topic: string): boolean;
  /** basic.return for an unroutable mandatory message. */
  send_return(message: PublishedMessage, code: number, text: string): void;
  send_confirm(outcome: 'ack' | 'nack', delivery_tag: number, multiple: boolean): void;
  logger_warn(fields: Record<string, unknown>, text: string): void;
}

export class Publisher {
  private confirming = false;
  private next_seq = 1;
  /** Sequence → appends still to finish (and whether one failed). */
  private readonly outstanding = new Map<number, { appends: number; failed: boolean }>();
  /** Finished sequences not yet confirmed because an earlier one is outstanding. */
  private readonly finished = new Map<number, boolean>();
  private confirmed_through = 0;
  private readonly pending = new Map<string, PendingBatch>();
  private flush_scheduled = false;
  private round_robin = 0;
  private not_stored_logged_ms = -Infinity;
  /** Batches not stored since the last warning about them. */
  private not_stored_unlogged = 0;

  constructor(private readonly target: PublishTarget) {}

  get confirm_mode(): boolean {
    return this.confirming;
  }

  select_confirms(): void {
    this.confirming = true;
  }

  publish(message: PublishedMessage, mandatory: boolean): void {
    const { core } = this.target;
    const exchange = this.exchange_for(message.exchange);
    if (this.outstanding.size >= UNCONFIRMED_MAX)
      throw new AmqpError(
        ReplyCode.PRECONDITION_FAILED,
        `PRECONDITION_FAILED - more than ${UNCONFIRMED_MAX} publishes unconfirmed`,
        60,
        40,
      );
    const queues = this.route(message, exchange);
    const seq = this.confirming ? this.next_seq++ : 0;
    if (queues.length === 0) {
      if (mandatory) this.target.send_return(message, ReplyCode.NO_ROUTE, 'NO_ROUTE');
      if (seq) {
        this.finished.set(seq, true);
        this.confirm_finished();
      }
      return;
    }
    const delay_ms = delay_of(message, exchange);
    const record = record_of(without_bcc(message), core.clock.now_ms(), delay_ms);
    if (seq) this.outstanding.set(seq, { appends: queues.length, failed: false });
    const priority = message.properties.priority;
    for (const queue of queues) this.add(queue, record, message.body.length, seq, delay_ms > 0, priority);
  }

  /**
   * A transaction's publishes: each partition's share as one record batch, so on one queue the
   * transaction is stored whole or not at all. Resolves once every batch is durable.
   */
  async commit(messages: ReadonlyArray<{ message: PublishedMessage; mandatory: boolean }>): Promise<void> {
    const batches = new Map<string, { topic: string; partition: number; records: BatchRecord[] }>();
    const now_ms = this.target.core.clock.now_ms();
    const { core, vhost } = this.target;
    for (const { message, mandatory } of messages) {
      // Checked when published; an exchange deleted since routes nowhere.
      const exchange = core.routing.exchange(vhost, message.exchange);
      const queues = exchange ? this.route(message, exchange) : [];
      if (queues.length === 0 && mandatory) this.target.send_return(message, ReplyCode.NO_ROUTE, 'NO_ROUTE');
      const record = record_of(without_bcc(message), now_ms, exchange ? delay_of(message, exchange) : 0);
      for (const queue of queues) {
        const partition = this.partition_for(queue, core.topics.get(queue.topic), message.properties.priority);
        const key = `${queue.topic}\0${partition}`;
        let batch = batches.get(key);
        if (!batch) batches.set(key, (batch = { topic: queue.topic, partition, records: [] }));
        batch.records.push(record);
      }
    }
    const { partitions } = core;
    await Promise.all(
      [...batches.values()].map((b) =>
        partitions.produce(b.topic, b.partition, encode_record_batch(b.records), -1, FORWARD),
      ),
    );
  }

  /** The exchange published to, or the channel exception for one missing or internal. */
  exchange_for(name: string): ExchangeRecord {
    const { core, vhost } = this.target;
    const exchange = core.routing.exchange(vhost, name);
    if (!exchange)
      throw new AmqpError(ReplyCode.NOT_FOUND, `NOT_FOUND - no exchange '${name}' in vhost '${vhost}'`, 60, 40);
    if (exchange.internal)
      throw new AmqpError(
        ReplyCode.ACCESS_REFUSED,
        `ACCESS_REFUSED - cannot publish to internal exchange '${exchange.name}'`,
        60,
        40,
      );
    return exchange;
  }

  /** The queues the message reaches by its routing key and any CC and BCC keys, each once. */
  private route(message: PublishedMessage, exchange: ExchangeRecord): QueueRecord[] {
    const { core, vhost } = this.target;
    const by_headers = exchange.type === 'headers' || exchange.arguments['x-delayed-type'] === 'headers';
    const headers = by_headers ? routing_headers(message.properties.headers) : null;
    const queues = core.routing.route(vhost, message.exchange, message.routing_key, headers);
    const extra = sender_selected_keys(message);
    if (extra.length === 0) return this.writable(queues);
    const all = new Map(queues.map((q) => [q.name, q]));
    for (const key of extra)
      for (const queue of core.routing.route(vhost, message.exchange, key, headers)) all.set(queue.name, queue);
    return this.writable([...all.values()]);
  }

  /** The queues, each of which the user may write; else ACCESS_REFUSED, as RabbitMQ's write permission. */
  private writable(queues: QueueRecord[]): QueueRecord[] {
    const refused = queues.find((queue) => !this.target.may_write(queue.topic));
    if (refused)
      throw new AmqpError(
        ReplyCode.ACCESS_REFUSED,
        `ACCESS_REFUSED - no WRITE on topic ${refused.topic} of queue '${refused.name}'`,
        60,
        40,
      );
    return queues;
  }

  /** A priority queue's level for the message's priority; otherwise round robin over the topic's partitions. */
  private partition_for(queue: QueueRecord, topic: TopicRecord | undefined, priority: number | undefined): number {
    const partitions = topic?.partitions ?? 1;
    if (partitions === 1) return 0;
    const max = Number(queue.arguments['x-max-priority'] ?? 0); // checked at declare: an integer ≥ 1
    if (max > 0) return priority_level(max, partitions, priority);
    return this.round_robin++ % partitions;
  }

  private add(
    queue: QueueRecord,
    record: BatchRecord,
    bytes: number,
    seq: number,
    delayed: boolean,
    priority: number | undefined,
  ): void {
    const topic = this.target.core.topics.get(queue.topic);
    const partition = this.partition_for(queue, topic, priority);
    // Delayed messages travel in batches of their own, so the others are not held with them.
    const key = partition === 0 && !delayed ? queue.topic : `${queue.topic}\0${partition}${delayed ? '\0delayed' : ''}`;
    let batch = this.pending.get(key);
    if (batch && (batch.bytes + bytes > BATCH_BYTES_MAX || batch.records.length >= records_max(topic))) {
      this.send(batch);
      batch = undefined;
    }
    if (!batch) {
      batch = { key, queue, topic: queue.topic, partition, records: [], bytes: 0, seqs: [] };
      this.pending.set(key, batch);
    }
    batch.records.push(record);
    batch.bytes += bytes + 64;
    if (seq) batch.seqs.push(seq);
    if (!this.flush_scheduled) {
      this.flush_scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** Sends what this turn gathered. */
  flush(): void {
    this.flush_scheduled = false;
    for (const batch of this.pending.values()) this.send(batch);
  }

  private send(batch: PendingBatch): void {
    this.pending.delete(batch.key);
    const settle = (ok: boolean) => {
      if (batch.seqs.length === 0) return;
      for (const seq of batch.seqs) this.append_done(seq, ok);
      this.confirm_finished(); // after the whole batch, so one frame with `multiple` covers it
    };
    const records = encode_record_batch(batch.records);
    this.target.core.partitions.produce(batch.topic, batch.partition, records, -1, FORWARD).then(
      () => settle(true),
      (error: unknown) => {
        // A full queue refusing a publish is the queue's policy, not a fault worth a warning.
        const full = error instanceof BrokerError && error.kind === 'queue_full';
        if (!full) this.warn_not_stored(batch.topic, error);
        if (full && batch.queue.arguments['x-overflow'] === 'reject-publish-dlx') this.dead_letter(batch);
        settle(false);
      },
    );
  }

  /**
   * A publisher that goes on while its queue cannot take writes (too few in-sync replicas, a full
   * disk) is nacked batch after batch: one warning per interval says so, with how many it stands for.
   */
  private warn_not_stored(topic: string, error: unknown): void {
    const now_ms = this.target.core.clock.now_ms();
    this.not_stored_unlogged++;
    if (now_ms - this.not_stored_logged_ms < NOT_STORED_WARN_INTERVAL_MS) return;
    this.target.logger_warn(
      { topic, error: String(error), batches: this.not_stored_unlogged },
      'AMQP publish not stored',
    );
    this.not_stored_logged_ms = now_ms;
    this.not_stored_unlogged = 0;
  }

  /** reject-publish-dlx: what a full queue refused is nacked and dead-lettered (reason maxlen). */
  private dead_letter(batch: PendingBatch): void {
    const { core, vhost } = this.target;
    core.routing.dead_letter_rejected(vhost, batch.queue, batch.records).catch((error: unknown) => {
      this.target.logger_warn({ queue: batch.queue.name, error: String(error) }, 'refused publishes not dead-lettered');
    });
  }

  private append_done(seq: number, ok: boolean): void {
    const entry = this.outstanding.get(seq);
    if (!entry) return;
    if (!ok) entry.failed = true;
    if (--entry.appends > 0) return;
    this.outstanding.delete(seq);
    this.finished.set(seq, !entry.failed);
  }

  /** Confirms every finished sequence from the lowest unconfirmed one on, grouping equal outcomes. */
  private confirm_finished(): void {
    let run: { outcome: boolean; first: number; last: number } | null = null;
    const emit = () => {
      if (run) this.target.send_confirm(run.outcome ? 'ack' : 'nack', run.last, run.last > run.first);
    };
    for (let next = this.confirmed_through + 1; this.finished.has(next); next++) {
      const outcome = this.finished.get(next)!;
      this.finished.delete(next);
      this.confirmed_through = next;
      if (run && run.outcome === outcome) run.last = next;
      else {
        emit();
        run = { outcome, first: next, last: next };
      }
    }
    emit();
  }
}

/**
 * Records one batch may hold for the queue's topic: one for a queue with a length limit, whose
 * overflow policy takes or refuses each message, not a batch of them.
 */
function records_max(topic: TopicRecord | undefined): number {
  const configs = topic?.configs;
  const bounded = configs?.['sluice.max.messages'] !== undefined || configs?.['sluice.max.bytes'] !== undefined;
  return bounded ? 1 : BATCH_RECORDS_MAX;
}

/** An x-delayed-message exchange holds a message back for its x-delay header's milliseconds. */
function delay_of(message: PublishedMessage, exchange: ExchangeRecord): number {
  if (exchange.type !== 'x-delayed-message') return 0;
  const delay = as_integer(message.properties.headers?.['x-delay']);
  return delay !== undefined && delay > 0 ? delay : 0;
}
