// The SDK producer: kafkajs's API (send, sendBatch, connect, disconnect) over a batching engine
// like the Java client's. Messages are appended to one open batch per partition; a batch is sent
// when it reaches `batchBytes` or `lingerMs` after its first message (at once while flushing or
// while a send waits for buffer space). Sends are admitted in call order, so messages of concurrent
// sends to one partition share batches and keep their order.
//
// This file is the public Producer: its lifecycle and the admission of sends (messages checked and
// turned into records, partitions chosen, buffer space reserved). The engine is in parts:
//   producer_accumulator.ts  batching per partition and the buffer accounting
//   producer_sender.ts       Produce requests to the leaders, in-flight limits, errors and retries
//   producer_idempotence.ts  producer id and epoch, sequence numbers, new epochs after a gap
//   producer_transaction.ts  transactions: partitions and offsets added, commit and abort
//   producer_shared.ts       the resolved settings, the lifecycle status and the retry policy
//   producer_types.ts        the public types, re-exported here
import { Cluster, type TopicInfo } from './cluster.ts';
import { KafkaProtocolError, SluiceError } from './errors.ts';
import { ErrorCode } from '../protocol/kafka/error_codes.ts';
import type { RecordHeader } from '../protocol/record_batch.ts';
import { compression_name, type CompressionType } from '../protocol/compression.ts';
import type { PartitionMetadata, PartitionerMessage } from './partitioner.ts';
import type {
  Message,
  ProducerBatch,
  ProducerConfig,
  ProducerRecord,
  RecordMetadata,
  TopicMessages,
} from './producer_types.ts';
import {
  ProducerRetry,
  ProducerStatus,
  check_acks,
  producer_settings,
  type ProducerSettings,
} from './producer_shared.ts';
import { Idempotence } from './producer_idempotence.ts';
import {
  Accumulator,
  SendOp,
  type Admission,
  type NormalizedMessage,
  type PartitionState,
} from './producer_accumulator.ts';
import { Sender } from './producer_sender.ts';
import { Transaction, Transactions, type TransactionHost } from './producer_transaction.ts';
import { COORDINATOR_KEY_TRANSACTION, CoordinatorLink } from './find_coordinator.ts';
import { CheckResponder, HalfMessage, HalfMessagePool, check_config } from './half_messages.ts';
import { MESSAGE_ID_HEADER, MessageIds } from './message_ids.ts';

export type { CompressionType } from '../protocol/compression.ts';
export { CompressionCodes, CompressionTypes } from '../protocol/compression.ts';
export type { IHeaders } from './partitioner.ts';
export { Transaction } from './producer_transaction.ts';
export { HalfMessage } from './half_messages.ts';
export type { HalfMessageCheck, TransactionCheckResult } from './producer_types.ts';
export type { ConsumerGroupMetadata, TransactionOffsets } from './producer_transaction.ts';
export type {
  HeaderValue,
  Message,
  ProducerBatch,
  ProducerConfig,
  ProducerRecord,
  ProducerRetryOptions,
  RecordMetadata,
  TopicMessages,
} from './producer_types.ts';

/** Estimated bytes of a record beyond its key, value and headers (varints, attributes). */
const RECORD_OVERHEAD_BYTES = 21;
const NO_HEADERS: ReadonlyArray<[string, never]> = [];
const NO_RECORD_HEADERS: readonly RecordHeader[] = Object.freeze([]);

function to_bytes(value: Buffer | string | null | undefined): Buffer | null {
  if (value === null || value === undefined) return null;
  if (Buffer.isBuffer(value)) return value;
  if (typeof value === 'string') return Buffer.from(value, 'utf8');
  throw new SluiceError(
    `message keys, values and header values must be strings or Buffers, not ${typeof value}`,
    false,
  );
}

/** The headers a message's `deliverAt` / `delayMs` / `ttlMs` stand for (checked here, refused by the broker too). */
function delay_headers(message: Message): ReadonlyArray<[string, Buffer]> {
  if (message.deliverAt === undefined && message.delayMs === undefined && message.ttlMs === undefined) {
    return NO_HEADERS;
  }
  const out: Array<[string, Buffer]> = [];
  if (message.deliverAt !== undefined) {
    const at = message.deliverAt instanceof Date ? message.deliverAt.getTime() : message.deliverAt;
    if (!Number.isSafeInteger(at) || at < 0) {
      throw new SluiceError(
        `deliverAt ${String(message.deliverAt)} is not a time (epoch milliseconds or a Date)`,
        false,
      );
    }
    out.push(['sluice-deliver-at', Buffer.from(String(at))]);
  }
  if (message.delayMs !== undefined) {
    if (message.deliverAt !== undefined) throw new SluiceError('give deliverAt or delayMs, not both', false);
    if (!Number.isSafeInteger(message.delayMs) || message.delayMs < 0) {
      throw new SluiceError(`delayMs ${String(message.delayMs)} is not a whole number of milliseconds >= 0`, false);
    }
    out.push(['sluice-delay-ms', Buffer.from(String(message.delayMs))]);
  }
  if (message.ttlMs !== undefined) {
    if (!Number.isSafeInteger(message.ttlMs) || message.ttlMs < 0) {
      throw new SluiceError(`ttlMs ${String(message.ttlMs)} is not a whole number of milliseconds >= 0`, false);
    }
    out.push(['sluice-ttl-ms', Buffer.from(String(message.ttlMs))]);
  }
  return out;
}

/** A message whose timestamp is already a string (or absent): the partitioner can see it as it is. */
function has_text_timestamp(message: Message): message is Message & { timestamp?: string } {
  return typeof message.timestamp !== 'number';
}

function* partitions_of(admission: Admission): Iterable<PartitionState> {
  for (const { messages } of admission.topics) for (const message of messages) yield message.state!;
}

export class Producer {
  private readonly settings: ProducerSettings;
  private readonly status = new ProducerStatus();
  private readonly retry: ProducerRetry;
  private readonly idempotence: Idempotence;
  private readonly accumulator: Accumulator;
  private readonly sender: Sender;
  /** Null unless the producer has a transactionalId. */
  private readonly transactions: Transactions | null = null;
  /** Half messages and check-back: null without a transactionGroup. */
  private readonly half: { pool: HalfMessagePool; responder: CheckResponder | null } | null = null;
  private readonly transaction_host: TransactionHost = {
    send: (record) => this.send_record(record, true),
    send_batch: (batch) => this.send_batch(batch, true),
    flush: () => this.flush(),
  };

  private connecting: Promise<void> | null = null;
  private connected = false;
  private readonly partition_metadata = new WeakMap<TopicInfo, PartitionMetadata[]>();
  private readonly message_ids = new MessageIds();
  private readonly outstanding = new Set<SendOp>();
  private readonly forget = (settled: SendOp) => this.outstanding.delete(settled);
  private readonly seal_if_idle = (state: PartitionState) => this.accumulator.seal_if_idle(state);
  private admission: Promise<void> = Promise.resolve();
  /** Sends on the admission chain, not yet admitted: later sends queue behind them. */
  private admissions_waiting = 0;

  constructor(
    private readonly cluster: Cluster,
    options: ProducerConfig = {},
  ) {
    const settings = producer_settings(options, cluster.options.retry);
    this.settings = settings;
    this.retry = new ProducerRetry(settings.retry, this.status);
    const retry = <T>(work: () => Promise<T>) => this.retry.run(work);
    if (settings.transactional_id === null) {
      this.idempotence = new Idempotence(settings.idempotent, cluster, this.retry);
    } else {
      const link = new CoordinatorLink(cluster, settings.transactional_id, COORDINATOR_KEY_TRANSACTION, retry);
      this.idempotence = new Idempotence(true, cluster, this.retry, {
        link,
        timeout_ms: settings.transaction_timeout_ms,
      });
      this.transactions = new Transactions(cluster, link, this.idempotence, retry, () => this.accumulator.partitions);
    }
    const check = check_config(options);
    if (check) {
      const carrier = (id: string) => {
        const config = { transactionalId: id, transactionTimeout: check.timeout, retry: options.retry };
        const producer = new Producer(new Cluster(cluster.options), config);
        return { producer, next_epoch: () => producer.transactions!.next_epoch() };
      };
      const responder = check.check
        ? new CheckResponder(new Cluster(cluster.options), { ...check, check: check.check })
        : null;
      this.half = { pool: new HalfMessagePool(check, carrier), responder };
    }
    this.accumulator = new Accumulator(settings, this.idempotence, this.message_ids, () =>
      this.sender.schedule_drain(),
    );
    this.sender = new Sender(cluster, settings, this.status, this.retry, this.accumulator, this.idempotence);
  }

  isIdempotent(): boolean {
    return this.settings.idempotent;
  }

  /**
   * Opens a transaction (a producer with a transactionalId only): what is sent in it, and the
   * offsets sent with it, commit or abort together. One at a time.
   */
  async transaction(): Promise<Transaction> {
    const transactions = this.transactions;
    if (!transactions) throw new SluiceError('transaction() needs a producer with a transactionalId', false);
    await this.connect();
    return new Transaction(this.transaction_host, transactions, transactions.begin());
  }

  /**
   * Writes one message that consumers cannot see until the returned half message's `commit()`
   * (`rollback()` drops it). Left unsettled past `halfTimeout`, the broker asks the producers of the
   * `transactionGroup` (`checkTransaction`). Needs a transactionGroup.
   */
  async sendHalf(record: { topic: string; message: Message }): Promise<HalfMessage> {
    if (!this.half) throw new SluiceError('sendHalf needs a producer with a transactionGroup', false);
    if (record === null || typeof record !== 'object' || typeof record.topic !== 'string') {
      throw new SluiceError('sendHalf takes { topic, message }', false);
    }
    await this.connect();
    return this.half.pool.send(record.topic, record.message);
  }

  /**
   * Connects to the cluster and, for an idempotent producer, obtains its producer id (a
   * transactional one from its transaction coordinator, fencing older producers of its id).
   */
  connect(): Promise<void> {
    if (this.status.state === 'disconnecting' || this.status.state === 'disconnected') {
      return Promise.reject(new SluiceError('the producer is disconnected', false));
    }
    return this.ensure_connected();
  }

  private ensure_connected(): Promise<void> {
    this.connecting ??= (async () => {
      await this.retry.run(() => this.cluster.any());
      await this.idempotence.start();
      await this.half?.responder?.start();
      this.connected = true;
      if (this.status.state === 'idle') this.status.state = 'connected';
    })().catch((error: unknown) => {
      this.connecting = null;
      throw error;
    });
    return this.connecting;
  }

  /** Sends messages to one topic; resolves when every one of them is acknowledged. */
  send(record: ProducerRecord): Promise<RecordMetadata[]> {
    return this.send_record(record, false);
  }

  /** Sends messages to several topics as one operation (one promise for all). */
  sendBatch(batch: ProducerBatch): Promise<RecordMetadata[]> {
    return this.send_batch(batch, false);
  }

  private send_record(record: ProducerRecord, in_transaction: boolean): Promise<RecordMetadata[]> {
    if (record === null || typeof record !== 'object') {
      return Promise.reject(new SluiceError('send takes { topic, messages }', false));
    }
    return this.submit([{ topic: record.topic, messages: record.messages }], record, in_transaction);
  }

  private send_batch(batch: ProducerBatch, in_transaction: boolean): Promise<RecordMetadata[]> {
    if (batch === null || typeof batch !== 'object') {
      return Promise.reject(new SluiceError('sendBatch takes { topicMessages }', false));
    }
    return this.submit(batch.topicMessages ?? [], batch, in_transaction);
  }

  /** Sends everything buffered now and resolves when every send made before the call is settled. */
  async flush(): Promise<void> {
    const ops = [...this.outstanding];
    if (ops.length === 0) return;
    this.status.flushing++;
    this.sender.schedule_drain();
    try {
      await Promise.allSettled(ops.map((op) => op.promise));
    } finally {
      this.status.flushing--;
    }
  }

  /** Flushes, then closes the cluster's connections. Later sends are refused. */
  async disconnect(): Promise<void> {
    if (this.status.state === 'disconnected') return;
    this.status.state = 'disconnecting';
    try {
      // Sends admitted after flush() took its snapshot are waited for too.
      while (this.outstanding.size > 0) await this.flush();
    } finally {
      this.status.state = 'disconnected';
      this.accumulator.stop_timers();
      this.sender.stop_timers();
      await this.half?.pool.close();
      await this.half?.responder?.stop();
      await this.cluster.close();
    }
  }

  // ---------------------------------------------------------------------------- admission

  private normalize(message: Message, now: number): NormalizedMessage {
    if (message === null || typeof message !== 'object') {
      throw new SluiceError('each message must be an object with a value', false);
    }
    const key = to_bytes(message.key);
    const value = to_bytes(message.value);
    let headers: RecordHeader[] | null = null;
    let has_id = false;
    let bytes = RECORD_OVERHEAD_BYTES + (key?.length ?? 0) + (value?.length ?? 0);
    for (const [name, raw] of message.headers ? Object.entries(message.headers) : NO_HEADERS) {
      if (raw === undefined) continue;
      for (const item of Array.isArray(raw) ? raw : [raw]) {
        const header_value = to_bytes(item);
        (headers ??= []).push({ key: name, value: header_value });
        bytes += Buffer.byteLength(name) + (header_value?.length ?? 0) + 2;
      }
      if (name === MESSAGE_ID_HEADER) has_id = true;
    }
    for (const [name, value] of delay_headers(message)) {
      (headers ??= []).push({ key: name, value });
      bytes += name.length + value.length + 2;
    }
    // Without an id of its own, the encoder writes one into the batch (message_ids.ts).
    if (!has_id) bytes += MESSAGE_ID_HEADER.length + this.message_ids.value_bytes + 2;
    let timestamp_ms = now;
    if (message.timestamp !== undefined && message.timestamp !== null) {
      timestamp_ms = Number(message.timestamp);
      if (!Number.isSafeInteger(timestamp_ms)) {
        const text = JSON.stringify(message.timestamp);
        throw new SluiceError(`message timestamp ${text} is not a number of milliseconds`, false);
      }
    }
    const source: PartitionerMessage = has_text_timestamp(message)
      ? message
      : { ...message, timestamp: String(message.timestamp) };
    return {
      key,
      value,
      timestamp_ms,
      headers: headers ?? NO_RECORD_HEADERS,
      generated_header: !has_id,
      source,
      bytes,
      state: null,
    };
  }

  private submit(
    topic_messages: TopicMessages[],
    options: { acks?: number; timeout?: number; compression?: CompressionType },
    in_transaction = false,
  ): Promise<RecordMetadata[]> {
    try {
      if (this.status.state === 'disconnecting' || this.status.state === 'disconnected') {
        throw new SluiceError('the producer is disconnected', false);
      }
      if (this.transactions && !in_transaction) {
        throw new SluiceError('a transactional producer sends inside a transaction (producer.transaction())', false);
      }
      const acks = options.acks ?? this.settings.acks;
      check_acks(acks, this.settings.idempotent);
      const compression = compression_name(options.compression ?? this.settings.compression);
      const timeout_ms = options.timeout ?? this.settings.timeout_ms;
      const now = Date.now();
      let count = 0;
      let bytes = 0;
      const topics = topic_messages.map(({ topic, messages }) => {
        if (typeof topic !== 'string' || topic.length === 0) throw new SluiceError('a send needs a topic name', false);
        if (!Array.isArray(messages)) throw new SluiceError(`messages for topic ${topic} must be an array`, false);
        const normalized = messages.map((message) => this.normalize(message, now));
        count += normalized.length;
        for (const message of normalized) bytes += message.bytes;
        return { topic, messages: normalized };
      });
      if (count === 0) return Promise.resolve([]);
      if (bytes > this.settings.buffer_bytes) {
        throw new SluiceError(
          `a send of ${bytes} bytes cannot fit in the producer buffer (bufferBytes ${this.settings.buffer_bytes})`,
          false,
        );
      }
      const op = new SendOp(count, this.forget);
      this.outstanding.add(op);
      const admission: Admission = { op, topics, acks, compression, timeout_ms, bytes };
      // Admissions run one after another, in call order: that keeps concurrent sends in order. A
      // send that need not wait for anything is admitted at once, without a turn of the chain.
      if (this.admissions_waiting === 0 && this.admit_now(admission)) return op.promise;
      this.admissions_waiting++;
      this.admission = this.admission.then(async () => {
        await this.admit(admission);
        this.admissions_waiting--;
      });
      return op.promise;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Admits a send now if nothing is to be waited for (connected, every topic's metadata known, room
   * in the buffer); false, having done nothing (the partitioner not even asked), when something is.
   */
  private admit_now(admission: Admission): boolean {
    // A transaction's partitions are added to it first (a request): admitted in the chain.
    if (!this.connected || this.transactions) return false;
    const infos: TopicInfo[] = [];
    for (const { topic } of admission.topics) {
      const info = this.cluster.topics.get(topic);
      if (!info) return false;
      infos.push(info);
    }
    if (!this.accumulator.try_reserve(admission.bytes)) return false;
    try {
      this.place(admission, infos);
    } catch (error) {
      this.accumulator.release(admission.bytes);
      admission.op.fail(error);
      return true;
    }
    this.append_all(admission);
    return true;
  }

  private async admit(admission: Admission): Promise<void> {
    const { op } = admission;
    const accumulator = this.accumulator;
    try {
      if (!this.connected) await this.ensure_connected();
      const infos: TopicInfo[] = [];
      for (const { topic } of admission.topics) {
        infos.push(this.cluster.topics.get(topic) ?? (await this.topic_metadata(topic)));
      }
      this.place(admission, infos);
      if (this.transactions) await this.transactions.add_partitions(partitions_of(admission));
      await accumulator.reserve(admission.bytes);
      if (op.settled) return accumulator.release(admission.bytes);
      this.append_all(admission);
    } catch (error) {
      op.fail(error);
    }
  }

  /** Each message's partition, from the partitioner; `infos` are the topics' metadata in order. */
  private place(admission: Admission, infos: TopicInfo[]): void {
    const partitioner = this.settings.partitioner;
    for (let t = 0; t < admission.topics.length; t++) {
      const { topic, messages } = admission.topics[t]!;
      const metadata = this.metadata_of(infos[t]!);
      for (const message of messages) {
        const partition = partitioner({ topic, partitionMetadata: metadata, message: message.source });
        if (!Number.isInteger(partition) || partition < 0 || partition >= metadata.length) {
          throw new SluiceError(
            `partition ${partition} of topic ${topic} does not exist (the topic has ${metadata.length})`,
            false,
          );
        }
        message.state = this.accumulator.partition_state(topic, partition);
      }
    }
  }

  private append_all(admission: Admission): void {
    const { op } = admission;
    for (const { messages } of admission.topics) {
      for (const message of messages) {
        const state = message.state!;
        op.slot(state);
        this.accumulator.append(state, message, admission);
      }
    }
    op.each_partition(this.seal_if_idle);
    this.sender.schedule_drain();
  }

  private metadata_of(info: TopicInfo): PartitionMetadata[] {
    let metadata = this.partition_metadata.get(info);
    if (!metadata) {
      metadata = info.partitions.map((p) => ({
        partitionErrorCode: 0,
        partitionId: p.partition,
        leader: p.leader,
        replicas: p.replicas,
        isr: p.isr,
      }));
      this.partition_metadata.set(info, metadata);
    }
    return metadata;
  }

  /** Topic metadata (the broker may create the topic when allowed), retried per the retry options. */
  private topic_metadata(topic: string): Promise<TopicInfo> {
    return this.retry.run(async () => {
      const errors = await this.cluster.refresh_metadata([topic], this.settings.allow_auto_topic_creation);
      const code = errors.get(topic);
      if (code !== undefined) throw new KafkaProtocolError(code, `topic ${topic}`);
      const info = this.cluster.topics.get(topic);
      if (!info || info.partitions.length === 0) {
        throw new KafkaProtocolError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `topic ${topic}`);
      }
      return info;
    });
  }
}
