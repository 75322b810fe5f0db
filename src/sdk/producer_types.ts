// The producer's public types, in kafkajs's names and shapes: messages, send and sendBatch
// arguments, the record metadata a send resolves with, and the producer's configuration.
// producer.ts re-exports them; the producer's behaviour lives in producer.ts and the producer_*.ts
// files it is made of.
import type { CompressionType } from '../protocol/compression.ts';
import type { CreatePartitioner, IHeaders, Partitioner } from './partitioner.ts';

export type HeaderValue = string | Buffer;

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

export interface ProducerRecord {
  topic: string;
  messages: Message[];
  /** -1 (all in-sync replicas, the default) or 1 (the leader). */
  acks?: number;
  /** How long the broker may take to acknowledge, in ms (Produce request `timeout_ms`). */
  timeout?: number;
  compression?: CompressionType;
}

export type TransactionCheckResult = 'commit' | 'rollback' | 'unknown';

/** A half message the broker asks about: where it is, what it holds, and which check this is. */
export interface HalfMessageCheck {
  transactionalId: string;
  topic: string;
  partition: number;
  /** '-1' when the record was no longer found (its topic deleted, say). */
  offset: string;
  key: Buffer | null;
  value: Buffer | null;
  headers: IHeaders;
  /** 1 on the first check; at `checksMax` unanswered the message goes to the unresolved topic. */
  check: number;
  checksMax: number;
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
  /**
   * Makes the producer transactional (sends only inside `transaction()`); connecting fences any
   * older producer with the same id. Needs idempotence.
   */
  transactionalId?: string;
  /** How long a transaction may stay open before the coordinator aborts it, in ms (default 60000). */
  transactionTimeout?: number;
  /**
   * Half messages (`sendHalf`) and their check-back: the group of producers that answer for each
   * other's half messages (letters, digits, '.', '_', '-').
   */
  transactionGroup?: string;
  /**
   * Answers the broker's check of a half message of the group left open past `halfTimeout`:
   * 'commit', 'rollback', or 'unknown' (asked again after another `halfTimeout`).
   */
  checkTransaction?: (message: HalfMessageCheck) => Promise<TransactionCheckResult> | TransactionCheckResult;
  /** How long a half message may stay open before its group is asked, and between checks (default 60000 ms). */
  halfTimeout?: number;
  /** Half messages open at once on this producer (default 8): sendHalf waits for one to end beyond it. */
  maxOpenHalfMessages?: number;
  /**
   * Default acks of sends: -1 (all, the default), 1 (the leader's write) or 0 (none: offsets are
   * -1). Idempotence needs -1.
   */
  acks?: number;
  /**
   * How long a batch waits for more messages after its first one (default 0: a send goes at once
   * while a request slot is free, and what comes while every slot is taken goes together in the
   * next).
   */
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
