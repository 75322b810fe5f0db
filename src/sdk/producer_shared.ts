// What the parts of a producer share: its settings resolved from the ProducerConfig (and checked),
// its lifecycle status, and the retry policy (backoff with jitter, retrying retriable errors).
// Batching is producer_accumulator.ts's, requests producer_sender.ts's, producer ids and sequence
// numbers producer_idempotence.ts's; producer.ts puts them together.
import type { RetryOptions } from './cluster.ts';
import { SluiceError, is_retriable } from './errors.ts';
import { compression_name, type CompressionName } from '../protocol/compression.ts';
import { DefaultPartitioner, type Partitioner } from './partitioner.ts';
import type { ProducerConfig, ProducerRetryOptions } from './producer_types.ts';

/**
 * A partition's batch is sent once it holds this many bytes. Large, as in librdkafka (batch.size
 * 1,000,000): under load one fsync'd append then carries many messages. Below the broker's
 * default max.message.bytes (1,048,588).
 */
const BATCH_BYTES_DEFAULT = 1_000_000;

export interface ProducerSettings {
  readonly idempotent: boolean;
  readonly transactional_id: string | null;
  readonly transaction_timeout_ms: number;
  readonly acks: number;
  readonly linger_ms: number;
  readonly batch_bytes: number;
  readonly buffer_bytes: number;
  readonly buffer_full: 'wait' | 'error';
  readonly compression: CompressionName;
  readonly max_in_flight: number;
  readonly allow_auto_topic_creation: boolean;
  readonly partitioner: Partitioner;
  readonly retry: Required<ProducerRetryOptions>;
  readonly timeout_ms: number;
  readonly max_request_bytes: number;
}

/** Refuses acks other than -1, 1 and 0, and acks other than -1 for an idempotent producer. */
export function check_acks(acks: number, idempotent: boolean): void {
  if (acks !== -1 && acks !== 1 && acks !== 0) throw new SluiceError(`acks must be -1, 1 or 0, not ${acks}`, false);
  if (idempotent && acks !== -1) {
    throw new SluiceError('an idempotent producer needs acks -1 (all); set idempotent: false to use acks 1', false);
  }
}

/** The settings of `options` with their defaults (the cluster's retry settings for retries). */
export function producer_settings(options: ProducerConfig, base: RetryOptions): ProducerSettings {
  const settings: ProducerSettings = {
    idempotent: options.idempotent ?? true,
    transactional_id: options.transactionalId ?? null,
    transaction_timeout_ms: options.transactionTimeout ?? 60_000,
    acks: options.acks ?? -1,
    linger_ms: options.lingerMs ?? 0,
    batch_bytes: options.batchBytes ?? BATCH_BYTES_DEFAULT,
    buffer_bytes: options.bufferBytes ?? 32 * 1024 * 1024,
    buffer_full: options.bufferFull ?? 'wait',
    compression: compression_name(options.compression ?? 'none'),
    max_in_flight: options.maxInFlightRequests ?? 5,
    allow_auto_topic_creation: options.allowAutoTopicCreation ?? true,
    partitioner: options.createPartitioner
      ? options.createPartitioner()
      : (options.partitioner ?? DefaultPartitioner()),
    retry: {
      retries: options.retry?.retries ?? base.retries,
      initialRetryTime: options.retry?.initialRetryTime ?? base.initial_retry_ms,
      maxRetryTime: options.retry?.maxRetryTime ?? base.max_retry_ms,
      multiplier: options.retry?.multiplier ?? 2,
      factor: options.retry?.factor ?? 0.2,
    },
    timeout_ms: options.timeout ?? 30_000,
    max_request_bytes: options.maxRequestBytes ?? 1024 * 1024,
  };
  const { max_in_flight, linger_ms, batch_bytes, buffer_bytes, buffer_full } = settings;
  if (!Number.isInteger(max_in_flight) || max_in_flight < 1) {
    throw new SluiceError('maxInFlightRequests must be a positive integer', false);
  }
  if (settings.idempotent && max_in_flight > 5) {
    throw new SluiceError('an idempotent producer allows at most 5 requests in flight (maxInFlightRequests)', false);
  }
  if (!(linger_ms >= 0) || !(batch_bytes > 0) || !(buffer_bytes > 0)) {
    throw new SluiceError('lingerMs must be ≥ 0, batchBytes and bufferBytes > 0', false);
  }
  if (buffer_full !== 'wait' && buffer_full !== 'error') {
    throw new SluiceError(`bufferFull must be 'wait' or 'error'`, false);
  }
  check_acks(settings.acks, settings.idempotent);
  check_transactional(settings);
  return settings;
}

function check_transactional({ transactional_id, transaction_timeout_ms, idempotent }: ProducerSettings): void {
  if (transactional_id === null) return;
  if (typeof transactional_id !== 'string' || transactional_id.length === 0) {
    throw new SluiceError('transactionalId must be a non-empty string', false);
  }
  if (!idempotent) throw new SluiceError('a transactional producer is idempotent (idempotent: false was given)', false);
  if (!Number.isInteger(transaction_timeout_ms) || transaction_timeout_ms <= 0) {
    throw new SluiceError('transactionTimeout must be a positive number of milliseconds', false);
  }
}

export type ProducerState = 'idle' | 'connected' | 'disconnecting' | 'disconnected';

/** Where the producer is in its life, and whether a flush is under way. */
export class ProducerStatus {
  state: ProducerState = 'idle';
  /** flush() calls in progress: batches are sent without lingering meanwhile. */
  flushing = 0;
}

/** Backoff and retries by the producer's retry options; no retry once the producer is disconnected. */
export class ProducerRetry {
  constructor(
    private readonly options: Required<ProducerRetryOptions>,
    private readonly status: ProducerStatus,
  ) {}

  get retries(): number {
    return this.options.retries;
  }

  backoff(attempt: number): number {
    const { initialRetryTime, maxRetryTime, multiplier, factor } = this.options;
    const base = Math.min(maxRetryTime, initialRetryTime * multiplier ** attempt);
    return base * (1 - factor + Math.random() * 2 * factor);
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await work();
      } catch (error) {
        if (!is_retriable(error) || attempt >= this.options.retries || this.status.state === 'disconnected') {
          throw error;
        }
        await new Promise((resolve) => setTimeout(resolve, this.backoff(attempt)));
      }
    }
  }
}
