// The storage error catalogue. Every failure that leaves the storage layer is one of these
// classes, so front ends can map them to protocol error codes without string matching.
// `retriable` says whether the same request may succeed later without operator action.

export type StorageErrorCode =
  | 'invalid_batch'
  | 'message_too_large'
  | 'corrupt_data'
  | 'disk_full'
  | 'io_error'
  | 'partition_offline'
  | 'offset_out_of_range'
  | 'log_closed'
  | 'replica_only'
  | 'backpressure'
  | 'unknown_partition'
  | 'partition_exists'
  | 'invalid_argument';

export class StorageError extends Error {
  readonly code: StorageErrorCode;
  readonly retriable: boolean;

  constructor(code: StorageErrorCode, message: string, retriable: boolean, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.retriable = retriable;
  }
}

/** Why a batch was refused on append. */
export type InvalidBatchReason =
  | 'truncated' // fewer bytes than the header or than batchLength says
  | 'length' // batchLength inconsistent with the bytes given
  | 'magic' // not a v2 batch
  | 'crc' // CRC32C over attributes..end does not match
  | 'record_count' // recordsCount != lastOffsetDelta + 1, no records, or more than the bytes can hold
  | 'offset_delta' // negative lastOffsetDelta or an offset span the segment cannot index
  | 'control' // a control batch where only data batches are allowed
  | 'sequence'; // producer id set without a base sequence

export class InvalidBatchError extends StorageError {
  readonly reason: InvalidBatchReason;
  constructor(reason: InvalidBatchReason, detail: string) {
    super('invalid_batch', `invalid record batch (${reason}): ${detail}`, false);
    this.reason = reason;
  }
}

export class MessageTooLargeError extends StorageError {
  readonly size_bytes: number;
  readonly size_bytes_max: number;
  constructor(size_bytes: number, size_bytes_max: number) {
    super(
      'message_too_large',
      `record batch of ${size_bytes} bytes exceeds message_bytes_max ${size_bytes_max}`,
      false,
    );
    this.size_bytes = size_bytes;
    this.size_bytes_max = size_bytes_max;
  }
}

/** Stored bytes failed their CRC or framing check on read; they are never served. */
export class CorruptDataError extends StorageError {
  readonly partition: string;
  readonly position: number;
  /** The first offset not known good: the corrupt batch's, or the end of the last whole one before it. */
  readonly offset: number;
  constructor(partition: string, segment_base_offset: number, position: number, offset: number, detail: string) {
    super(
      'corrupt_data',
      `corrupt data in ${partition} segment ${segment_base_offset} at byte ${position}: ${detail}`,
      false,
    );
    this.partition = partition;
    this.position = position;
    this.offset = offset;
  }
}

export class DiskFullError extends StorageError {
  constructor(partition: string, options?: { cause?: unknown }) {
    super('disk_full', `no space left on device while appending to ${partition}; nothing was written`, true, options);
  }
}

export class StorageIOError extends StorageError {
  readonly os_code: string | undefined;
  constructor(partition: string, operation: string, cause: unknown) {
    const os_code = os_error_code(cause);
    super('io_error', `${operation} failed for ${partition}: ${os_code ?? String(cause)}`, true, { cause });
    this.os_code = os_code;
  }
}

/** The partition hit an error after which its files cannot be trusted until it is reopened. */
export class PartitionOfflineError extends StorageError {
  constructor(partition: string, why: string) {
    super('partition_offline', `partition ${partition} is offline: ${why}`, true);
  }
}

export class OffsetOutOfRangeError extends StorageError {
  readonly offset: number;
  readonly log_start_offset: number;
  readonly log_end_offset: number;
  constructor(partition: string, offset: number, log_start_offset: number, log_end_offset: number) {
    super(
      'offset_out_of_range',
      `offset ${offset} is outside ${partition}'s range [${log_start_offset}, ${log_end_offset}]`,
      false,
    );
    this.offset = offset;
    this.log_start_offset = log_start_offset;
    this.log_end_offset = log_end_offset;
  }
}

/** The log is a copy of another's (a follower replica): it takes only replicated appends. */
export class ReplicaOnlyError extends StorageError {
  constructor(partition: string) {
    super(
      'replica_only',
      `partition ${partition} is a follower copy here; it takes appends only from its leader`,
      true,
    );
  }
}

export class LogClosedError extends StorageError {
  constructor(partition: string) {
    super('log_closed', `partition ${partition} is closed`, false);
  }
}

export class BackpressureError extends StorageError {
  constructor(partition: string, pending_bytes: number, pending_bytes_max: number) {
    super(
      'backpressure',
      `partition ${partition} has ${pending_bytes} bytes waiting to be written (limit ${pending_bytes_max})`,
      true,
    );
  }
}

export class UnknownPartitionError extends StorageError {
  constructor(partition: string) {
    super('unknown_partition', `partition ${partition} does not exist`, false);
  }
}

export class PartitionExistsError extends StorageError {
  constructor(partition: string) {
    super('partition_exists', `partition ${partition} already exists`, false);
  }
}

export class InvalidArgumentError extends StorageError {
  constructor(message: string) {
    super('invalid_argument', message, false);
  }
}

/** A broken invariant is a bug: it is thrown, never logged and ignored. */
export class AssertionError extends Error {
  constructor(message: string) {
    super(`storage invariant violated: ${message}`);
    this.name = 'AssertionError';
  }
}

/** `message` may be a function, so a hot path builds the text only when the assertion fails. */
export function assert(condition: unknown, message: string | (() => string)): asserts condition {
  if (!condition) throw new AssertionError(typeof message === 'string' ? message : message());
}

/** For catch blocks that log a failure and go on: a broken invariant is thrown on (it must stop the process). */
export function rethrow_assertion(error: unknown): void {
  if (error instanceof AssertionError) throw error;
}

export function os_error_code(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const code = (error as { code: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}
