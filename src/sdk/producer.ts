// The SDK producer: kafkajs's API (send, sendBatch, connect, disconnect) over a batching engine
// like the Java client's. Messages are appended to one open batch per partition; a batch is sent
// when it reaches `batchBytes` or `lingerMs` after its first message (at once while flushing or
// while a send waits for buffer space). Sends are admitted in call order, so messages of concurrent
// sends to one partition share batches and keep their order.
//
// Delivery: batches go to the partition leader, one batch per partition per Produce request, at
// most `maxInFlightRequests` requests per broker. A partition's batches are never reordered: with
// idempotence up to `maxInFlightRequests` of them may be in flight (the broker checks sequence
// numbers), without it one at a time. After an error the partition stops sending until its
// in-flight batches are answered, then resends the failed ones first, in order, after a backoff.
//
// Idempotence: InitProducerId on connect gives the producer id and epoch; each partition numbers
// its records from 0 (the base sequence of a batch is fixed when the batch is first sent and kept
// for every resend, so the broker drops duplicates). When a batch fails for good, the partition
// bumps its epoch locally and numbers from 0 again, so later batches are not refused for the gap.
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { BrokerConnection, Cluster, TopicInfo } from './cluster.ts';
import { BufferFullError, ConnectionError, KafkaProtocolError, SluiceError, check_code, is_retriable } from './errors.ts';
import { ErrorCode } from '../protocol/kafka/error_codes.ts';
import { PRODUCE } from '../protocol/kafka/messages/00_produce.ts';
import type { RequestIn } from '../protocol/kafka/schema.ts';
import { BATCH_HEADER_BYTES } from '../format/batch_layout.ts';
import { INIT_PRODUCER_ID } from '../protocol/kafka/messages/22_init_producer_id.ts';
import { encode_record_batch, type BatchRecord, type RecordHeader } from '../protocol/record_batch.ts';
import { compress_record_batch, compression_name, stamp_record_batch, type CompressionName, type CompressionType } from '../protocol/compression.ts';
import { DefaultPartitioner, type CreatePartitioner, type IHeaders, type PartitionMetadata, type Partitioner, type PartitionerMessage } from './partitioner.ts';

/**
 * A partition's batch is sent once it holds this many bytes (or after lingerMs). Large, as in
 * librdkafka (batch.size 1,000,000): under load one fsync'd append then carries many messages;
 * when idle, lingerMs still sends a lone message within a few milliseconds. Below the broker's
 * default max.message.bytes (1,048,588).
 */
const BATCH_BYTES_DEFAULT = 1_000_000;

export type { CompressionType } from '../protocol/compression.ts';
export { CompressionCodes, CompressionTypes } from '../protocol/compression.ts';

// ------------------------------------------------------------------------------ public types

export type HeaderValue = string | Buffer;
export type { IHeaders } from './partitioner.ts';

export interface Message {
  key?: Buffer | string | null;
  value: Buffer | string | null;
  /** Explicit partition; otherwise the partitioner chooses. */
  partition?: number;
  headers?: IHeaders;
  /** Milliseconds since the epoch (kafkajs passes a string); default: now. */
  timestamp?: string | number;
  /** Sluice: deliver to consumers no earlier than this (epoch ms or a Date); the `sluice-deliver-at` header. */
  deliverAt?: number | Date;
  /** Sluice: deliver to consumers no earlier than this many ms from now; the `sluice-delay-ms` header. */
  delayMs?: number;
  /** Sluice: in a share group, expire the message this many ms after its timestamp; the `sluice-ttl-ms` header. */
  ttlMs?: number;
}

/** The headers a message's `deliverAt` / `delayMs` / `ttlMs` stand for (checked here, refused by the broker too). */
function delay_headers(message: Message): Array<[string, Buffer]> {
  const out: Array<[string, Buffer]> = [];
  if (message.deliverAt !== undefined) {
    const at = message.deliverAt instanceof Date ? message.deliverAt.getTime() : message.deliverAt;
    if (!Number.isSafeInteger(at) || at < 0) throw new SluiceError(`deliverAt ${String(message.deliverAt)} is not a time (epoch milliseconds or a Date)`, false);
    out.push(['sluice-deliver-at', Buffer.from(String(at))]);
  }
  if (message.delayMs !== undefined) {
    if (message.deliverAt !== undefined) throw new SluiceError('give deliverAt or delayMs, not both', false);
    if (!Number.isSafeInteger(message.delayMs) || message.delayMs < 0) throw new SluiceError(`delayMs ${String(message.delayMs)} is not a whole number of milliseconds >= 0`, false);
    out.push(['sluice-delay-ms', Buffer.from(String(message.delayMs))]);
  }
  if (message.ttlMs !== undefined) {
    if (!Number.isSafeInteger(message.ttlMs) || message.ttlMs < 0) throw new SluiceError(`ttlMs ${String(message.ttlMs)} is not a whole number of milliseconds >= 0`, false);
    out.push(['sluice-ttl-ms', Buffer.from(String(message.ttlMs))]);
  }
  return out;
}

export interface ProducerRecord {
  topic: string;
  messages: Message[];
  /** -1 (all in-sync replicas, the default) or 1 (the leader). */
  acks?: number;
  /** How long the broker may take to acknowledge, in ms (Produce request `timeout_ms`). */
  timeout?: number;
  compression?: CompressionType;
}

export interface TopicMessages {
  topic: string;
  messages: Message[];
}

export interface ProducerBatch {
  topicMessages?: TopicMessages[];
  acks?: number;
  timeout?: number;
  compression?: CompressionType;
}

/** One entry per topic and partition a send wrote to; offsets as decimal strings, like kafkajs. */
export interface RecordMetadata {
  topicName: string;
  partition: number;
  errorCode: number;
  /** Offset of the first message of this send in this partition. */
  baseOffset: string;
  /** The broker's append time when the topic uses LogAppendTime, else '-1'. */
  logAppendTime: string;
  logStartOffset: string;
}

/** kafkajs's retry options; unset fields default to the cluster's retry settings. */
export interface ProducerRetryOptions {
  /** Attempts after the first one. */
  retries?: number;
  initialRetryTime?: number;
  maxRetryTime?: number;
  /** Backoff growth per attempt (default 2). */
  multiplier?: number;
  /** Random jitter as a fraction of the backoff (default 0.2). */
  factor?: number;
}

export interface ProducerConfig {
  /** Exactly-once writes per partition through producer ids and sequence numbers (default true). */
  idempotent?: boolean;
  /** Default acks of sends: -1 (all, the default), 1 (the leader's write) or 0 (none: offsets are -1). Idempotence needs -1. */
  acks?: number;
  /** How long a batch waits for more messages after its first one (default 5 ms). */
  lingerMs?: number;
  /** A partition's batch is sent once it holds this many bytes (default 1,000,000). */
  batchBytes?: number;
  /** Bytes of messages accepted and not yet acknowledged (default 32 MiB). */
  bufferBytes?: number;
  /** When the buffer is full: `wait` for space (default) or reject with BufferFullError. */
  bufferFull?: 'wait' | 'error';
  /** Default compression of sends (default none). */
  compression?: CompressionType;
  /** Produce requests in flight per broker (default 5; at most 5 with idempotence). */
  maxInFlightRequests?: number;
  /** Let the broker create a topic the producer writes to (default true). */
  allowAutoTopicCreation?: boolean;
  /** kafkajs-style partitioner factory, called once. */
  createPartitioner?: CreatePartitioner;
  /** A partitioner function (used when `createPartitioner` is not given). */
  partitioner?: Partitioner;
  retry?: ProducerRetryOptions;
  /** Default Produce `timeout_ms`: how long the broker may take to acknowledge (default 30000). */
  timeout?: number;
  /** Produce requests stop taking more batches past this size (default 1 MiB). */
  maxRequestBytes?: number;
}

// ------------------------------------------------------------------------------ internals

const SEQUENCE_MAX = 0x7fffffff;
const EPOCH_MAX = 0x7fff;
/** Estimated bytes of a record beyond its key, value and headers (varints, attributes). */
const RECORD_OVERHEAD_BYTES = 21;
/** Recheck delay when a connection shared with other clients has no free request slot. */
const BUSY_CONNECTION_RETRY_MS = 5;

function next_sequence(sequence: number, count: number): number {
  const next = sequence + count;
  return next > SEQUENCE_MAX ? next - SEQUENCE_MAX - 1 : next;
}

const LEADER_ERRORS = new Set<number>([ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.LEADER_NOT_AVAILABLE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, 74 /* FENCED_LEADER_EPOCH */, ErrorCode.UNKNOWN_LEADER_EPOCH]);

function to_bytes(value: Buffer | string | null | undefined): Buffer | null {
  if (value === null || value === undefined) return null;
  if (Buffer.isBuffer(value)) return value;
  if (typeof value === 'string') return Buffer.from(value, 'utf8');
  throw new SluiceError(`message keys, values and header values must be strings or Buffers, not ${typeof value}`, false);
}

/** One send() or sendBatch(): resolves when all its messages are acknowledged, rejects on the first failure. */
class SendOp {
  remaining: number;
  settled = false;
  readonly promise: Promise<RecordMetadata[]>;
  private resolve!: (value: RecordMetadata[]) => void;
  private reject!: (error: unknown) => void;
  /** Per topic and partition, in order of first appearance. */
  private readonly slots = new Map<string, { topicName: string; partition: number; base: number; logAppendTime: number; logStartOffset: number }>();

  constructor(
    count: number,
    private readonly on_settle: (op: SendOp) => void,
  ) {
    this.remaining = count;
    this.promise = new Promise<RecordMetadata[]>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  slot(topic: string, partition: number): void {
    const key = `${partition}:${topic}`;
    if (!this.slots.has(key)) this.slots.set(key, { topicName: topic, partition, base: Number.MAX_SAFE_INTEGER, logAppendTime: -1, logStartOffset: -1 });
  }

  ack(topic: string, partition: number, offset: number, log_append_time: number, log_start_offset: number): void {
    if (this.settled) return;
    const slot = this.slots.get(`${partition}:${topic}`)!;
    if (offset < slot.base) {
      slot.base = offset;
      slot.logAppendTime = log_append_time;
    }
    slot.logStartOffset = Math.max(slot.logStartOffset, log_start_offset);
    if (--this.remaining > 0) return;
    this.settled = true;
    this.on_settle(this);
    this.resolve(
      [...this.slots.values()].map((slot) => ({
        topicName: slot.topicName,
        partition: slot.partition,
        errorCode: 0,
        baseOffset: String(slot.base === Number.MAX_SAFE_INTEGER ? -1 : slot.base),
        logAppendTime: String(slot.logAppendTime),
        logStartOffset: String(slot.logStartOffset),
      })),
    );
  }

  fail(error: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.on_settle(this);
    this.reject(error);
  }
}

let batch_counter = 0;

/** A batch of one partition: open (taking messages), queued (sealed), in flight, or awaiting a retry. */
class Batch {
  /** Seal order within the producer: failed batches are put back in this order. */
  order = 0;
  records: BatchRecord[] = [];
  owners: SendOp[] = [];
  count = 0;
  bytes = BATCH_HEADER_BYTES;
  /** Buffer bytes to give back when the batch is done. */
  reserved = 0;
  timeout_ms: number;
  readonly created = performance.now();
  encoded: Buffer | null = null;
  /** Base sequence once first sent (idempotent producers); -1 before. */
  sequence = -1;
  attempts = 0;
  last_error: unknown = null;
  done = false;
  /** lingerMs has passed since the first message. */
  lingered = false;

  constructor(
    readonly partition: PartitionState,
    readonly acks: number,
    readonly compression: CompressionName,
    timeout_ms: number,
  ) {
    this.timeout_ms = timeout_ms;
  }
}

class PartitionState {
  open: Batch | null = null;
  linger_timer: NodeJS.Timeout | null = null;
  /** Sealed batches in send order (the head may still be compressing). */
  queue: Batch[] = [];
  in_flight: Batch[] = [];
  /** The broker the in-flight batches went to: later batches follow them there. */
  in_flight_node = -1;
  /** Batches answered with an error while others were still in flight. */
  failed: Batch[] = [];
  /** An error came back: send nothing until in_flight drains, then resend `failed` first. */
  recovering = false;
  /** A batch failed for good (a sequence gap): start a new epoch at sequence 0. */
  bump_epoch = false;
  /** Waiting for a new producer id (epoch exhausted). */
  identity_pending = false;
  retry_at = 0;
  producer_id = -1;
  producer_epoch = -1;
  next_sequence = 0;

  constructor(
    readonly topic: string,
    readonly partition: number,
  ) {}

  get idle(): boolean {
    return this.open === null && this.queue.length === 0 && this.in_flight.length === 0 && this.failed.length === 0;
  }
}

/** One broker's request lane. */
interface Lane {
  connection: BrokerConnection | null;
  opening: boolean;
  /** The last connect failure, charged to the batches waiting for this broker. */
  error: unknown;
  in_flight: number;
  /** Rotates the partition the next request starts with, for fairness. */
  cursor: number;
}

interface TopicMetaState {
  pending: boolean;
  failures: number;
  retry_at: number;
}

interface NormalizedMessage {
  /** The message as the partitioner sees it (kafkajs's shape: a string timestamp). */
  source: PartitionerMessage;
  record: BatchRecord;
  bytes: number;
}

interface Admission {
  op: SendOp;
  topics: Array<{ topic: string; messages: NormalizedMessage[] }>;
  acks: number;
  compression: CompressionName;
  timeout_ms: number;
  bytes: number;
}

type ProducerState = 'idle' | 'connected' | 'disconnecting' | 'disconnected';

export class Producer {
  private readonly idempotent: boolean;
  private readonly acks: number;
  private readonly linger_ms: number;
  private readonly batch_bytes: number;
  private readonly buffer_bytes: number;
  private readonly buffer_full: 'wait' | 'error';
  private readonly compression: CompressionName;
  private readonly max_in_flight: number;
  private readonly allow_auto_topic_creation: boolean;
  private readonly partitioner: Partitioner;
  private readonly retry: Required<ProducerRetryOptions>;
  private readonly timeout_ms: number;
  private readonly max_request_bytes: number;

  private state: ProducerState = 'idle';
  private connecting: Promise<void> | null = null;
  private connected = false;
  private producer_id = -1;
  private producer_epoch = -1;

  private readonly partitions = new Map<string, PartitionState>();
  private readonly lanes = new Map<number, Lane>();
  private readonly topic_meta = new Map<string, TopicMetaState>();
  private readonly partition_metadata = new WeakMap<TopicInfo, PartitionMetadata[]>();
  private readonly outstanding = new Set<SendOp>();
  private admission: Promise<void> = Promise.resolve();

  private buffer_used = 0;
  private buffer_waiter: { bytes: number; resolve: () => void } | null = null;
  private flushing = 0;
  private drain_scheduled = false;
  private wake_timer: NodeJS.Timeout | null = null;
  private wake_at = Infinity;

  constructor(
    private readonly cluster: Cluster,
    options: ProducerConfig = {},
  ) {
    this.idempotent = options.idempotent ?? true;
    this.acks = options.acks ?? -1;
    this.linger_ms = options.lingerMs ?? 5;
    this.batch_bytes = options.batchBytes ?? BATCH_BYTES_DEFAULT;
    this.buffer_bytes = options.bufferBytes ?? 32 * 1024 * 1024;
    this.buffer_full = options.bufferFull ?? 'wait';
    this.compression = compression_name(options.compression ?? 'none');
    this.max_in_flight = options.maxInFlightRequests ?? 5;
    this.allow_auto_topic_creation = options.allowAutoTopicCreation ?? true;
    this.partitioner = options.createPartitioner ? options.createPartitioner() : (options.partitioner ?? DefaultPartitioner());
    const base = cluster.options.retry;
    this.retry = {
      retries: options.retry?.retries ?? base.retries,
      initialRetryTime: options.retry?.initialRetryTime ?? base.initial_retry_ms,
      maxRetryTime: options.retry?.maxRetryTime ?? base.max_retry_ms,
      multiplier: options.retry?.multiplier ?? 2,
      factor: options.retry?.factor ?? 0.2,
    };
    this.timeout_ms = options.timeout ?? 30_000;
    this.max_request_bytes = options.maxRequestBytes ?? 1024 * 1024;
    if (!Number.isInteger(this.max_in_flight) || this.max_in_flight < 1) throw new SluiceError('maxInFlightRequests must be a positive integer', false);
    if (this.idempotent && this.max_in_flight > 5) throw new SluiceError('an idempotent producer allows at most 5 requests in flight (maxInFlightRequests)', false);
    if (!(this.linger_ms >= 0) || !(this.batch_bytes > 0) || !(this.buffer_bytes > 0)) throw new SluiceError('lingerMs must be ≥ 0, batchBytes and bufferBytes > 0', false);
    if (this.buffer_full !== 'wait' && this.buffer_full !== 'error') throw new SluiceError(`bufferFull must be 'wait' or 'error'`, false);
    this.check_acks(this.acks);
  }

  isIdempotent(): boolean {
    return this.idempotent;
  }

  /** Connects to the cluster and, for an idempotent producer, obtains its producer id. */
  connect(): Promise<void> {
    if (this.state === 'disconnecting' || this.state === 'disconnected') return Promise.reject(new SluiceError('the producer is disconnected', false));
    return this.ensure_connected();
  }

  private ensure_connected(): Promise<void> {
    this.connecting ??= (async () => {
      await this.with_retry(() => this.cluster.any());
      if (this.idempotent) {
        const identity = await this.init_producer_id();
        this.producer_id = identity.producer_id;
        this.producer_epoch = identity.producer_epoch;
      }
      this.connected = true;
      if (this.state === 'idle') this.state = 'connected';
    })().catch((error: unknown) => {
      this.connecting = null;
      throw error;
    });
    return this.connecting;
  }

  /** Sends messages to one topic; resolves when every one of them is acknowledged. */
  send(record: ProducerRecord): Promise<RecordMetadata[]> {
    if (record === null || typeof record !== 'object') return Promise.reject(new SluiceError('send takes { topic, messages }', false));
    return this.submit([{ topic: record.topic, messages: record.messages }], record);
  }

  /** Sends messages to several topics as one operation (one promise for all). */
  sendBatch(batch: ProducerBatch): Promise<RecordMetadata[]> {
    if (batch === null || typeof batch !== 'object') return Promise.reject(new SluiceError('sendBatch takes { topicMessages }', false));
    return this.submit(batch.topicMessages ?? [], batch);
  }

  /** Sends everything buffered now and resolves when every send made before the call is settled. */
  async flush(): Promise<void> {
    const ops = [...this.outstanding];
    if (ops.length === 0) return;
    this.flushing++;
    this.schedule_drain();
    try {
      await Promise.allSettled(ops.map((op) => op.promise));
    } finally {
      this.flushing--;
    }
  }

  /** Flushes, then closes the cluster's connections. Later sends are refused. */
  async disconnect(): Promise<void> {
    if (this.state === 'disconnected') return;
    this.state = 'disconnecting';
    try {
      // Sends admitted after flush() took its snapshot are waited for too.
      while (this.outstanding.size > 0) await this.flush();
    } finally {
      this.state = 'disconnected';
      for (const partition of this.partitions.values()) if (partition.linger_timer) clearTimeout(partition.linger_timer);
      if (this.wake_timer) clearTimeout(this.wake_timer);
      this.wake_timer = null;
      await this.cluster.close();
    }
  }

  // ---------------------------------------------------------------------------- admission

  private check_acks(acks: number): void {
    if (acks !== -1 && acks !== 1 && acks !== 0) throw new SluiceError(`acks must be -1, 1 or 0, not ${acks}`, false);
    if (this.idempotent && acks !== -1) throw new SluiceError('an idempotent producer needs acks -1 (all); set idempotent: false to use acks 1', false);
  }

  private normalize(message: Message, now: number): NormalizedMessage {
    if (message === null || typeof message !== 'object') throw new SluiceError('each message must be an object with a value', false);
    const key = to_bytes(message.key);
    const value = to_bytes(message.value);
    const headers: RecordHeader[] = [];
    let has_id = false;
    let bytes = RECORD_OVERHEAD_BYTES + (key?.length ?? 0) + (value?.length ?? 0);
    for (const [name, raw] of Object.entries(message.headers ?? {})) {
      if (raw === undefined) continue;
      for (const item of Array.isArray(raw) ? raw : [raw]) {
        const header_value = to_bytes(item);
        headers.push({ key: name, value: header_value });
        bytes += Buffer.byteLength(name) + (header_value?.length ?? 0) + 2;
      }
      if (name === 'message-id') has_id = true;
    }
    for (const [name, value] of delay_headers(message)) {
      headers.push({ key: name, value });
      bytes += name.length + value.length + 2;
    }
    if (!has_id) {
      const id = Buffer.from(randomUUID(), 'utf8');
      headers.push({ key: 'message-id', value: id });
      bytes += 10 + id.length + 2;
    }
    let timestamp_ms = now;
    if (message.timestamp !== undefined && message.timestamp !== null) {
      timestamp_ms = Number(message.timestamp);
      if (!Number.isSafeInteger(timestamp_ms)) throw new SluiceError(`message timestamp ${JSON.stringify(message.timestamp)} is not a number of milliseconds`, false);
    }
    const source = typeof message.timestamp === 'number' ? { ...message, timestamp: String(message.timestamp) } : (message as PartitionerMessage);
    return { source, record: { key, value, timestamp_ms, headers }, bytes };
  }

  private submit(topic_messages: TopicMessages[], options: { acks?: number; timeout?: number; compression?: CompressionType }): Promise<RecordMetadata[]> {
    try {
      if (this.state === 'disconnecting' || this.state === 'disconnected') throw new SluiceError('the producer is disconnected', false);
      const acks = options.acks ?? this.acks;
      this.check_acks(acks);
      const compression = compression_name(options.compression ?? this.compression);
      const timeout_ms = options.timeout ?? this.timeout_ms;
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
      if (bytes > this.buffer_bytes) {
        throw new SluiceError(`a send of ${bytes} bytes cannot fit in the producer buffer (bufferBytes ${this.buffer_bytes})`, false);
      }
      const op = new SendOp(count, (settled) => this.outstanding.delete(settled));
      this.outstanding.add(op);
      const admission: Admission = { op, topics, acks, compression, timeout_ms, bytes };
      // Admissions run one after another, in call order: that keeps concurrent sends in order.
      this.admission = this.admission.then(() => this.admit(admission));
      return op.promise;
    } catch (error) {
      return Promise.reject(error);
    }
  }

  private async admit(admission: Admission): Promise<void> {
    const { op } = admission;
    try {
      if (!this.connected) await this.ensure_connected();
      const placed: Array<{ state: PartitionState; message: NormalizedMessage }> = [];
      for (const { topic, messages } of admission.topics) {
        const info = this.cluster.topics.get(topic) ?? (await this.topic_metadata(topic));
        const metadata = this.metadata_of(info);
        for (const message of messages) {
          const partition = this.partitioner({ topic, partitionMetadata: metadata, message: message.source });
          if (!Number.isInteger(partition) || partition < 0 || partition >= metadata.length) {
            throw new SluiceError(`partition ${partition} of topic ${topic} does not exist (the topic has ${metadata.length})`, false);
          }
          placed.push({ state: this.partition_state(topic, partition), message });
        }
      }
      await this.reserve(admission.bytes);
      if (op.settled) return this.release(admission.bytes);
      for (const { state, message } of placed) {
        op.slot(state.topic, state.partition);
        this.append(state, message, admission);
      }
      this.schedule_drain();
    } catch (error) {
      op.fail(error);
    }
  }

  private metadata_of(info: TopicInfo): PartitionMetadata[] {
    let metadata = this.partition_metadata.get(info);
    if (!metadata) {
      metadata = info.partitions.map((p) => ({ partitionErrorCode: 0, partitionId: p.partition, leader: p.leader, replicas: p.replicas, isr: p.isr }));
      this.partition_metadata.set(info, metadata);
    }
    return metadata;
  }

  /** Topic metadata (the broker may create the topic when allowed), retried per the retry options. */
  private topic_metadata(topic: string): Promise<TopicInfo> {
    return this.with_retry(async () => {
      const errors = await this.cluster.refresh_metadata([topic], this.allow_auto_topic_creation);
      const code = errors.get(topic);
      if (code !== undefined) throw new KafkaProtocolError(code, `topic ${topic}`);
      const info = this.cluster.topics.get(topic);
      if (!info || info.partitions.length === 0) throw new KafkaProtocolError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `topic ${topic}`);
      return info;
    });
  }

  private partition_state(topic: string, partition: number): PartitionState {
    const key = `${partition}:${topic}`;
    let state = this.partitions.get(key);
    if (!state) {
      state = new PartitionState(topic, partition);
      state.producer_id = this.producer_id;
      state.producer_epoch = this.producer_epoch;
      this.partitions.set(key, state);
    }
    return state;
  }

  private reserve(bytes: number): Promise<void> | void {
    if (this.buffer_used + bytes <= this.buffer_bytes) {
      this.buffer_used += bytes;
      return;
    }
    if (this.buffer_full === 'error') {
      throw new BufferFullError(`the producer buffer is full (${this.buffer_used} of ${this.buffer_bytes} bytes in use, the send needs ${bytes})`);
    }
    // Admissions are serial, so there is at most one waiter. Batches are sent without lingering
    // while it waits, to free the buffer as fast as possible.
    return new Promise<void>((resolve) => {
      this.buffer_waiter = {
        bytes,
        resolve: () => {
          this.buffer_used += bytes;
          resolve();
        },
      };
      this.schedule_drain();
    });
  }

  private release(bytes: number): void {
    this.buffer_used -= bytes;
    const waiter = this.buffer_waiter;
    if (waiter && this.buffer_used + waiter.bytes <= this.buffer_bytes) {
      this.buffer_waiter = null;
      waiter.resolve();
    }
  }

  private append(state: PartitionState, message: NormalizedMessage, admission: Admission): void {
    let batch = state.open;
    if (batch && (batch.acks !== admission.acks || batch.compression !== admission.compression || batch.bytes + message.bytes > this.batch_bytes)) {
      this.seal(state);
      batch = null;
    }
    if (!batch) {
      batch = new Batch(state, admission.acks, admission.compression, admission.timeout_ms);
      state.open = batch;
      if (this.linger_ms > 0) {
        const opened = batch;
        state.linger_timer = setTimeout(() => {
          opened.lingered = true;
          this.schedule_drain();
        }, this.linger_ms);
      } else {
        batch.lingered = true;
      }
    }
    batch.records.push(message.record);
    batch.owners.push(admission.op);
    batch.count++;
    batch.bytes += message.bytes;
    batch.reserved += message.bytes;
    batch.timeout_ms = Math.max(batch.timeout_ms, admission.timeout_ms);
    if (batch.bytes >= this.batch_bytes) this.seal(state);
  }

  /** Closes the open batch, queues it and encodes it (compression runs off the event loop). */
  private seal(state: PartitionState): void {
    const batch = state.open;
    if (!batch) return;
    state.open = null;
    if (state.linger_timer) clearTimeout(state.linger_timer);
    state.linger_timer = null;
    batch.order = ++batch_counter;
    state.queue.push(batch);
    let raw: Buffer;
    try {
      raw = encode_record_batch(batch.records);
    } catch (error) {
      return this.abandon(state, [batch], new SluiceError(`cannot encode a batch for ${state.topic}-${state.partition}: ${String(error)}`, false, { cause: error }));
    }
    batch.records = [];
    if (batch.compression === 'none') {
      batch.encoded = raw;
      return;
    }
    compress_record_batch(raw, batch.compression).then(
      (encoded) => {
        batch.encoded = encoded;
        this.schedule_drain();
      },
      (error: unknown) => {
        this.abandon(state, [batch], error);
        this.schedule_drain();
      },
    );
  }

  // ---------------------------------------------------------------------------- sending

  private schedule_drain(): void {
    if (this.drain_scheduled) return;
    this.drain_scheduled = true;
    setImmediate(() => {
      this.drain_scheduled = false;
      this.drain();
    });
  }

  private wake_in(ms: number): void {
    const at = performance.now() + ms;
    if (this.wake_timer && at >= this.wake_at) return;
    if (this.wake_timer) clearTimeout(this.wake_timer);
    this.wake_at = at;
    this.wake_timer = setTimeout(
      () => {
        this.wake_timer = null;
        this.wake_at = Infinity;
        this.drain();
      },
      Math.max(0, Math.ceil(ms)),
    );
  }

  private due(batch: Batch, now: number): boolean {
    return (
      batch.bytes >= this.batch_bytes ||
      batch.lingered ||
      now - batch.created >= this.linger_ms ||
      this.flushing > 0 ||
      this.buffer_waiter !== null ||
      this.state === 'disconnecting'
    );
  }

  private get partition_in_flight_max(): number {
    // Without sequence numbers a retry could overtake a later batch: one at a time.
    return this.idempotent ? this.max_in_flight : 1;
  }

  /** The leader of the partition from cached metadata, or null (metadata is then requested). */
  private leader_of(state: PartitionState, now: number): number | null {
    const info = this.cluster.topics.get(state.topic);
    const partition = info?.partitions.find((p) => p.partition === state.partition);
    if (partition && partition.leader >= 0) return partition.leader;
    this.request_metadata(state.topic, now);
    return null;
  }

  /** Sends every batch that can go now. Runs on every event that may unblock one. */
  private drain(): void {
    if (this.state === 'disconnected') return;
    const now = performance.now();
    const by_node = new Map<number, PartitionState[]>();
    for (const state of this.partitions.values()) {
      if (state.recovering) {
        if (state.in_flight.length > 0) continue;
        this.finish_recovery(state, now);
      }
      if (state.identity_pending) continue;
      if (now < state.retry_at) {
        this.wake_in(state.retry_at - now);
        continue;
      }
      if (state.queue.length === 0 && (!state.open || !this.due(state.open, now))) continue;
      if (state.in_flight.length >= this.partition_in_flight_max) continue;
      const leader = this.leader_of(state, now);
      if (leader === null) continue;
      if (state.in_flight.length > 0 && state.in_flight_node !== leader) continue; // let the old leader answer first
      let list = by_node.get(leader);
      if (!list) by_node.set(leader, (list = []));
      list.push(state);
    }
    for (const [node, states] of by_node) this.drain_node(node, states, now);
  }

  private lane(node: number): Lane {
    let lane = this.lanes.get(node);
    if (!lane) {
      lane = { connection: null, opening: false, error: null, in_flight: 0, cursor: 0 };
      this.lanes.set(node, lane);
    }
    return lane;
  }

  /** The head batch of a partition if it can be sent now (sealing the open batch when due). */
  private sendable(state: PartitionState, now: number): Batch | null {
    if (state.recovering || state.identity_pending || now < state.retry_at) return null;
    if (state.in_flight.length >= this.partition_in_flight_max) return null;
    if (state.queue.length === 0 && state.open && this.due(state.open, now)) this.seal(state);
    const head = state.queue[0];
    return head && head.encoded ? head : null;
  }

  private drain_node(node: number, states: PartitionState[], now: number): void {
    const lane = this.lane(node);
    if (!lane.connection || lane.connection.closed) {
      lane.connection = null;
      if (lane.error !== null) {
        // The last attempt to connect failed: charge it to the batches waiting for this broker.
        const error = lane.error;
        lane.error = null;
        const batches = states.map((state) => this.sendable(state, now)).filter((batch): batch is Batch => batch !== null);
        for (const batch of batches) this.take(batch, node);
        this.on_request_error(batches, error);
        return;
      }
      if (!lane.opening) {
        lane.opening = true;
        this.cluster.node(node).then(
          (connection) => {
            lane.connection = connection;
          },
          (error: unknown) => {
            lane.error = error;
          },
        ).finally(() => {
          lane.opening = false;
          this.schedule_drain();
        });
      }
      return;
    }
    const connection = lane.connection;
    const lane_max = Math.min(this.max_in_flight, connection.connection.max_in_flight);
    while (lane.in_flight < lane_max) {
      if (connection.connection.in_flight >= connection.connection.max_in_flight) {
        // Another client of this cluster fills the connection: waiting in it could reorder ours.
        this.wake_in(BUSY_CONNECTION_RETRY_MS);
        return;
      }
      const batches: Batch[] = [];
      let bytes = 0;
      let acks: number | null = null;
      const start = lane.cursor++ % states.length;
      for (let i = 0; i < states.length && bytes < this.max_request_bytes; i++) {
        const state = states[(start + i) % states.length]!;
        const batch = this.sendable(state, now);
        if (!batch || (acks !== null && batch.acks !== acks)) continue;
        if (batches.length > 0 && bytes + batch.encoded!.length > this.max_request_bytes) continue;
        acks = batch.acks;
        bytes += batch.encoded!.length;
        batches.push(batch);
      }
      if (batches.length === 0) return;
      for (const batch of batches) this.take(batch, node);
      this.send_request(lane, connection, batches, acks!);
    }
  }

  /** Moves the queue head into flight, numbering it on its first send. */
  private take(batch: Batch, node: number): void {
    const state = batch.partition;
    state.queue.shift();
    state.in_flight.push(batch);
    state.in_flight_node = node;
    if (this.idempotent && batch.sequence < 0) {
      batch.sequence = state.next_sequence;
      state.next_sequence = next_sequence(state.next_sequence, batch.count);
      stamp_record_batch(batch.encoded!, state.producer_id, state.producer_epoch, batch.sequence);
    }
  }

  private send_request(lane: Lane, connection: BrokerConnection, batches: Batch[], acks: number): void {
    const topics = new Map<string, Array<{ index: number; records: Buffer }>>();
    let timeout_ms = 0;
    for (const batch of batches) {
      let list = topics.get(batch.partition.topic);
      if (!list) topics.set(batch.partition.topic, (list = []));
      list.push({ index: batch.partition.partition, records: batch.encoded! });
      timeout_ms = Math.max(timeout_ms, batch.timeout_ms);
    }
    const body = {
      transactional_id: null,
      acks,
      timeout_ms,
      topic_data: [...topics].map(([name, partition_data]) => ({ name, partition_data })),
    };
    lane.in_flight++;
    if (acks === 0) {
      this.send_unacknowledged(lane, connection, batches, body);
      return;
    }
    let sent: Promise<{ response: Record<string, unknown> }>;
    try {
      // Written to the socket synchronously, so requests leave in the order they are made here.
      sent = connection.send(PRODUCE, 3, 12, body) as Promise<{ response: Record<string, unknown> }>;
    } catch (error) {
      sent = Promise.reject(error);
    }
    sent
      .then(
        ({ response }) => {
          try {
            this.on_response(batches, response);
          } catch (error) {
            // A malformed answer: whatever it did not settle is treated as a failed request.
            this.on_request_error(batches, new ConnectionError(`unreadable Produce response: ${String(error)}`, { cause: error }));
          }
        },
        (error: unknown) => this.on_request_error(batches, error),
      )
      .finally(() => {
        lane.in_flight--;
        this.schedule_drain();
      });
  }

  /**
   * acks 0: the broker sends no answer, so a send is done once the socket took the request (its
   * offsets are -1). A refusal shows only as the broker closing the connection, which fails the
   * sends still in flight on it and those that follow until a reconnect.
   */
  private send_unacknowledged(lane: Lane, connection: BrokerConnection, batches: Batch[], body: Record<string, unknown>): void {
    let sent: Promise<unknown>;
    try {
      sent = connection.send_without_response(PRODUCE, 3, 12, body as RequestIn<typeof PRODUCE>);
    } catch (error) {
      sent = Promise.reject(error);
    }
    sent
      .then(
        () => {
          for (const batch of batches) this.complete(batch, -1, -1, -1);
        },
        (error: unknown) => this.on_request_error(batches, error),
      )
      .finally(() => {
        lane.in_flight--;
        this.schedule_drain();
      });
  }

  private on_response(batches: Batch[], response: Record<string, unknown>): void {
    const rows = new Map<string, Record<string, unknown>>();
    for (const topic of response.responses as Array<Record<string, unknown>>) {
      for (const partition of topic.partition_responses as Array<Record<string, unknown>>) rows.set(`${partition.index as number}:${topic.name as string}`, partition);
    }
    for (const batch of batches) {
      const state = batch.partition;
      const row = rows.get(`${state.partition}:${state.topic}`);
      if (!row) {
        this.on_batch_error(batch, new KafkaProtocolError(ErrorCode.UNKNOWN_SERVER_ERROR, `produce to ${state.topic}-${state.partition}`, 'no answer for the partition'));
        continue;
      }
      const code = row.error_code as number;
      if (code === ErrorCode.NONE || code === ErrorCode.DUPLICATE_SEQUENCE_NUMBER) {
        this.complete(batch, row.base_offset as number, (row.log_append_time_ms as number | undefined) ?? -1, (row.log_start_offset as number | undefined) ?? -1);
      } else {
        this.on_batch_error(batch, new KafkaProtocolError(code, `produce to ${state.topic}-${state.partition}`, row.error_message as string | null));
      }
    }
  }

  private on_request_error(batches: Batch[], error: unknown): void {
    const wrapped = error instanceof SluiceError ? error : new ConnectionError(`produce request failed: ${String(error)}`, { cause: error });
    for (const batch of batches) this.on_batch_error(batch, wrapped);
  }

  /** Takes the batch out of flight; false when it was not in flight (already handled). */
  private remove_in_flight(batch: Batch): boolean {
    const list = batch.partition.in_flight;
    const at = list.indexOf(batch);
    if (at < 0) return false;
    list.splice(at, 1);
    return true;
  }

  private complete(batch: Batch, base_offset: number, log_append_time: number, log_start_offset: number): void {
    if (!this.remove_in_flight(batch) || batch.done) return;
    batch.done = true;
    const { topic, partition } = batch.partition;
    batch.owners.forEach((op, i) => op.ack(topic, partition, base_offset < 0 ? -1 : base_offset + i, log_append_time, log_start_offset));
    batch.owners = [];
    batch.encoded = null;
    this.release(batch.reserved);
  }

  private on_batch_error(batch: Batch, error: SluiceError): void {
    const state = batch.partition;
    if (!this.remove_in_flight(batch) || batch.done) return;
    const code = error instanceof KafkaProtocolError ? error.code : null;
    batch.last_error = error;
    // Refused only because an earlier batch of the partition failed: resend it after that one.
    if (code === ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER && state.recovering) {
      state.failed.push(batch);
      return;
    }
    state.recovering = true;
    batch.attempts++;
    const exhausted = batch.attempts > this.retry.retries || this.state === 'disconnected';
    if (code === ErrorCode.UNKNOWN_PRODUCER_ID && this.idempotent && !exhausted) {
      // The broker forgot this producer (state expired): start a new epoch and resend.
      state.bump_epoch = true;
      state.failed.push(batch);
      return;
    }
    if (is_retriable(error) && !exhausted) {
      if (code === null || LEADER_ERRORS.has(code)) this.cluster.topics.delete(state.topic); // look the leader up again
      state.failed.push(batch);
      return;
    }
    this.fail_batch(batch, error);
  }

  /** Fails a batch's sends for good; an idempotent partition then needs a new epoch (sequence gap). */
  private fail_batch(batch: Batch, error: unknown): void {
    if (batch.done) return;
    batch.done = true;
    const state = batch.partition;
    for (const op of batch.owners) op.fail(error);
    batch.owners = [];
    batch.encoded = null;
    this.release(batch.reserved);
    if (this.idempotent && batch.sequence >= 0) {
      state.recovering = true;
      state.bump_epoch = true;
    }
  }

  /** Fails batches that are not in flight (queued, open or awaiting a retry). */
  private abandon(state: PartitionState, batches: Batch[], error: unknown): void {
    for (const batch of batches) {
      const at = state.queue.indexOf(batch);
      if (at >= 0) state.queue.splice(at, 1);
      const failed_at = state.failed.indexOf(batch);
      if (failed_at >= 0) state.failed.splice(failed_at, 1);
      if (state.open === batch) {
        state.open = null;
        if (state.linger_timer) clearTimeout(state.linger_timer);
        state.linger_timer = null;
      }
      this.fail_batch(batch, error);
    }
  }

  /** Every error of the partition is answered: put failed batches back in front, after a backoff. */
  private finish_recovery(state: PartitionState, now: number): void {
    state.recovering = false;
    const retry = state.failed.sort((a, b) => a.order - b.order);
    state.failed = [];
    if (state.bump_epoch) {
      state.bump_epoch = false;
      state.next_sequence = 0;
      for (const batch of [...retry, ...state.queue]) {
        batch.sequence = -1; // numbered again from 0 in the new epoch when sent
      }
      if (state.producer_epoch < EPOCH_MAX) {
        state.producer_epoch++;
      } else {
        this.renew_identity(state);
      }
    }
    state.queue.unshift(...retry);
    const attempts = Math.max(0, ...retry.map((batch) => batch.attempts));
    if (attempts > 0) state.retry_at = now + this.backoff(attempts - 1);
  }

  /** The epoch is exhausted: a new producer id for this partition (epoch 0, sequence 0). */
  private renew_identity(state: PartitionState): void {
    state.identity_pending = true;
    this.init_producer_id().then(
      (identity) => {
        state.producer_id = identity.producer_id;
        state.producer_epoch = identity.producer_epoch;
      },
      (error: unknown) => {
        this.abandon(state, [...state.queue, ...(state.open ? [state.open] : [])], error);
      },
    ).finally(() => {
      state.identity_pending = false;
      this.schedule_drain();
    });
  }

  /** Refreshes one topic's metadata (once at a time, with backoff); fails its batches when it gives up. */
  private request_metadata(topic: string, now: number): void {
    let meta = this.topic_meta.get(topic);
    if (!meta) this.topic_meta.set(topic, (meta = { pending: false, failures: 0, retry_at: 0 }));
    if (meta.pending) return;
    if (now < meta.retry_at) {
      this.wake_in(meta.retry_at - now);
      return;
    }
    const state_meta = meta;
    state_meta.pending = true;
    this.cluster
      .refresh_metadata([topic], this.allow_auto_topic_creation)
      .then((errors) => {
        const code = errors.get(topic);
        if (code !== undefined) throw new KafkaProtocolError(code, `topic ${topic}`);
        const info = this.cluster.topics.get(topic);
        for (const state of this.partitions.values()) {
          if (state.topic !== topic || state.idle) continue;
          const partition = info?.partitions.find((p) => p.partition === state.partition);
          if (!partition) throw new KafkaProtocolError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `partition ${state.partition} of topic ${topic}`);
          if (partition.leader < 0) throw new KafkaProtocolError(ErrorCode.LEADER_NOT_AVAILABLE, `partition ${state.partition} of topic ${topic}`);
        }
        state_meta.failures = 0;
      })
      .catch((error: unknown) => {
        state_meta.failures++;
        state_meta.retry_at = performance.now() + this.backoff(state_meta.failures - 1);
        if (!is_retriable(error) || state_meta.failures > this.retry.retries || this.state === 'disconnected') {
          state_meta.failures = 0;
          state_meta.retry_at = 0;
          for (const state of this.partitions.values()) {
            if (state.topic !== topic) continue;
            this.abandon(state, [...state.failed, ...state.queue, ...(state.open ? [state.open] : [])], error);
          }
        }
      })
      .finally(() => {
        state_meta.pending = false;
        this.schedule_drain();
      });
  }

  // ---------------------------------------------------------------------------- helpers

  private async init_producer_id(): Promise<{ producer_id: number; producer_epoch: number }> {
    return this.with_retry(async () => {
      const connection = await this.cluster.any();
      const { response } = await connection.send(INIT_PRODUCER_ID, 0, 4, { transactional_id: null, transaction_timeout_ms: 60_000, producer_id: -1, producer_epoch: -1 });
      check_code(response.error_code as number, 'InitProducerId');
      return { producer_id: response.producer_id as number, producer_epoch: response.producer_epoch as number };
    });
  }

  private backoff(attempt: number): number {
    const { initialRetryTime, maxRetryTime, multiplier, factor } = this.retry;
    const base = Math.min(maxRetryTime, initialRetryTime * multiplier ** attempt);
    return base * (1 - factor + Math.random() * 2 * factor);
  }

  private async with_retry<T>(work: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await work();
      } catch (error) {
        if (!is_retriable(error) || attempt >= this.retry.retries || this.state === 'disconnected') throw error;
        await new Promise((resolve) => setTimeout(resolve, this.backoff(attempt)));
      }
    }
  }
}
