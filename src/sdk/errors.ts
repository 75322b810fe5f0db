// The SDK's errors: classes carrying the Kafka error code (where there is one) and whether the
// same request may succeed if retried.
import { ErrorCode } from '../protocol/kafka/error_codes.ts';

/** Codes a client may retry (after refreshing metadata where the leader or coordinator moved). */
const RETRIABLE = new Set<number>([
  ErrorCode.CORRUPT_MESSAGE,
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.LEADER_NOT_AVAILABLE,
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.REQUEST_TIMED_OUT,
  ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
  ErrorCode.COORDINATOR_NOT_AVAILABLE,
  ErrorCode.NOT_COORDINATOR,
  ErrorCode.NOT_ENOUGH_REPLICAS,
  20, // NOT_ENOUGH_REPLICAS_AFTER_APPEND
  ErrorCode.NOT_CONTROLLER,
  51, // CONCURRENT_TRANSACTIONS
  ErrorCode.KAFKA_STORAGE_ERROR,
  74, // FENCED_LEADER_EPOCH
  ErrorCode.UNKNOWN_LEADER_EPOCH,
  88, // UNSTABLE_OFFSET_COMMIT
  89, // THROTTLING_QUOTA_EXCEEDED
]);

const NAMES = new Map<number, string>(Object.entries(ErrorCode).map(([name, code]) => [code, name]));

export class SluiceError extends Error {
  readonly retriable: boolean;
  constructor(message: string, retriable: boolean, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.retriable = retriable;
  }
}

/** A broker answered with a Kafka error code. */
export class KafkaProtocolError extends SluiceError {
  readonly code: number;
  /** Kafka's name for the code, e.g. UNKNOWN_TOPIC_OR_PARTITION. */
  readonly type: string;
  constructor(code: number, context: string, detail?: string | null) {
    const type = NAMES.get(code) ?? `ERROR_${code}`;
    super(`${context}: ${type} (${code})${detail ? `: ${detail}` : ''}`, RETRIABLE.has(code));
    this.code = code;
    this.type = type;
  }
}

/** The connection failed or closed before an answer arrived (retriable: reconnect and resend). */
export class ConnectionError extends SluiceError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, true, options);
  }
}

export class RequestTimeoutError extends SluiceError {
  constructor(message: string) {
    super(message, true);
  }
}

/** The producer's buffer is full and the caller asked not to wait. */
export class BufferFullError extends SluiceError {
  constructor(message: string) {
    super(message, true);
  }
}

/** The broker does not support any version of an API the SDK can speak. */
export class UnsupportedApiError extends SluiceError {
  constructor(message: string) {
    super(message, false);
  }
}

/** SASL login refused (wrong credentials, mechanism not offered): retrying will not help. */
export class AuthenticationError extends SluiceError {
  readonly code: number | null;
  constructor(message: string, code: number | null = null) {
    super(message, false);
    this.code = code;
  }
}

export function is_retriable(error: unknown): boolean {
  return error instanceof SluiceError ? error.retriable : false;
}

/** Throws KafkaProtocolError for a non-zero code. */
export function check_code(code: number, context: string, detail?: string | null): void {
  if (code !== ErrorCode.NONE) throw new KafkaProtocolError(code, context, detail);
}
