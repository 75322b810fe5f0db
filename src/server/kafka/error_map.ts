// Maps broker-core and storage errors to Kafka error codes, in one place. A broken invariant is
// never an error code: it is thrown on, and the connection stops the process (core/invariants.ts).
import {
  AckError,
  BrokerError,
  InvalidBatchError,
  StorageError,
  is_invariant_failure,
  type BrokerErrorKind,
  type StorageErrorCode,
} from '../../core/index.ts';
import { ErrorCode } from '../../protocol/kafka/error_codes.ts';

const BROKER_CODES: Record<BrokerErrorKind, number> = {
  unknown_topic_or_partition: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  topic_already_exists: ErrorCode.TOPIC_ALREADY_EXISTS,
  invalid_topic: ErrorCode.INVALID_TOPIC_EXCEPTION,
  invalid_partitions: ErrorCode.INVALID_PARTITIONS,
  invalid_replication_factor: ErrorCode.INVALID_REPLICATION_FACTOR,
  invalid_config: ErrorCode.INVALID_CONFIG,
  invalid_request: ErrorCode.INVALID_REQUEST,
  invalid_record: ErrorCode.INVALID_RECORD,
  invalid_required_acks: ErrorCode.INVALID_REQUIRED_ACKS,
  out_of_order_sequence: ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER,
  invalid_producer_epoch: ErrorCode.INVALID_PRODUCER_EPOCH,
  unknown_producer_id: ErrorCode.UNKNOWN_PRODUCER_ID,
  invalid_txn_state: ErrorCode.INVALID_TXN_STATE,
  invalid_producer_id_mapping: ErrorCode.INVALID_PRODUCER_ID_MAPPING,
  invalid_transaction_timeout: ErrorCode.INVALID_TRANSACTION_TIMEOUT,
  concurrent_transactions: ErrorCode.CONCURRENT_TRANSACTIONS,
  transactional_id_not_found: ErrorCode.TRANSACTIONAL_ID_NOT_FOUND,
  invalid_group_id: ErrorCode.INVALID_GROUP_ID,
  unknown_member_id: ErrorCode.UNKNOWN_MEMBER_ID,
  illegal_generation: ErrorCode.ILLEGAL_GENERATION,
  rebalance_in_progress: ErrorCode.REBALANCE_IN_PROGRESS,
  inconsistent_group_protocol: ErrorCode.INCONSISTENT_GROUP_PROTOCOL,
  invalid_session_timeout: ErrorCode.INVALID_SESSION_TIMEOUT,
  member_id_required: ErrorCode.MEMBER_ID_REQUIRED,
  fenced_instance_id: ErrorCode.FENCED_INSTANCE_ID,
  group_id_not_found: ErrorCode.GROUP_ID_NOT_FOUND,
  non_empty_group: ErrorCode.NON_EMPTY_GROUP,
  group_subscribed_to_topic: ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC,
  coordinator_not_available: ErrorCode.COORDINATOR_NOT_AVAILABLE,
  offset_metadata_too_large: ErrorCode.OFFSET_METADATA_TOO_LARGE,
  policy_violation: ErrorCode.POLICY_VIOLATION,
  unsupported_version: ErrorCode.UNSUPPORTED_VERSION,
  fenced_member_epoch: ErrorCode.FENCED_MEMBER_EPOCH,
  stale_member_epoch: ErrorCode.STALE_MEMBER_EPOCH,
  unreleased_instance_id: ErrorCode.UNRELEASED_INSTANCE_ID,
  unsupported_assignor: ErrorCode.UNSUPPORTED_ASSIGNOR,
  invalid_regular_expression: ErrorCode.INVALID_REGULAR_EXPRESSION,
  group_max_size_reached: ErrorCode.GROUP_MAX_SIZE_REACHED,
  invalid_record_state: ErrorCode.INVALID_RECORD_STATE,
  share_session_not_found: ErrorCode.SHARE_SESSION_NOT_FOUND,
  invalid_share_session_epoch: ErrorCode.INVALID_SHARE_SESSION_EPOCH,
  fetch_session_id_not_found: ErrorCode.FETCH_SESSION_ID_NOT_FOUND,
  invalid_fetch_session_epoch: ErrorCode.INVALID_FETCH_SESSION_EPOCH,
  // No Kafka code says "queue full"; this one is retriable (with backoff) in Kafka's clients.
  queue_full: ErrorCode.THROTTLING_QUOTA_EXCEEDED,
  offset_out_of_range: ErrorCode.OFFSET_OUT_OF_RANGE,
  not_leader_or_follower: ErrorCode.NOT_LEADER_OR_FOLLOWER,
  leader_not_available: ErrorCode.LEADER_NOT_AVAILABLE,
  not_coordinator: ErrorCode.NOT_COORDINATOR,
  coordinator_load_in_progress: ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
  not_enough_replicas: ErrorCode.NOT_ENOUGH_REPLICAS,
  not_enough_replicas_after_append: ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
  fenced_leader_epoch: ErrorCode.FENCED_LEADER_EPOCH,
  unknown_leader_epoch: ErrorCode.UNKNOWN_LEADER_EPOCH,
  request_timed_out: ErrorCode.REQUEST_TIMED_OUT,
  invalid_replica_assignment: ErrorCode.INVALID_REPLICA_ASSIGNMENT,
  no_reassignment_in_progress: ErrorCode.NO_REASSIGNMENT_IN_PROGRESS,
  election_not_needed: ErrorCode.ELECTION_NOT_NEEDED,
  preferred_leader_not_available: ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE,
  eligible_leaders_not_available: ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE,
  resource_not_found: ErrorCode.RESOURCE_NOT_FOUND,
  unacceptable_credential: ErrorCode.UNACCEPTABLE_CREDENTIAL,
  topic_authorization_failed: ErrorCode.TOPIC_AUTHORIZATION_FAILED,
  group_authorization_failed: ErrorCode.GROUP_AUTHORIZATION_FAILED,
  cluster_authorization_failed: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
  transactional_id_authorization_failed: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
};

const STORAGE_CODES: Record<StorageErrorCode, number> = {
  invalid_batch: ErrorCode.CORRUPT_MESSAGE,
  message_too_large: ErrorCode.MESSAGE_TOO_LARGE,
  corrupt_data: ErrorCode.KAFKA_STORAGE_ERROR,
  disk_full: ErrorCode.KAFKA_STORAGE_ERROR,
  io_error: ErrorCode.KAFKA_STORAGE_ERROR,
  partition_offline: ErrorCode.KAFKA_STORAGE_ERROR,
  offset_out_of_range: ErrorCode.OFFSET_OUT_OF_RANGE,
  log_closed: ErrorCode.NOT_LEADER_OR_FOLLOWER,
  replica_only: ErrorCode.NOT_LEADER_OR_FOLLOWER,
  backpressure: ErrorCode.REQUEST_TIMED_OUT,
  unknown_partition: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  partition_exists: ErrorCode.TOPIC_ALREADY_EXISTS,
  invalid_argument: ErrorCode.INVALID_REQUEST,
};

export function kafka_error_code(error: unknown): number {
  if (error instanceof BrokerError) return BROKER_CODES[error.kind];
  if (error instanceof AckError)
    return error.kind === 'invalid_record_state' ? ErrorCode.INVALID_RECORD_STATE : ErrorCode.INVALID_REQUEST;
  if (error instanceof StorageError) {
    // A refused batch whose reason is structural, not a checksum, is an invalid record.
    if (error instanceof InvalidBatchError && error.reason !== 'crc') return ErrorCode.INVALID_RECORD;
    return STORAGE_CODES[error.code];
  }
  if (is_invariant_failure(error)) throw error;
  return ErrorCode.UNKNOWN_SERVER_ERROR;
}

/**
 * Whether the error is one a response answers with its code (the core's and storage's errors, a
 * full disk among them), rather than one that ends the connection.
 */
export function has_error_code(error: unknown): error is BrokerError | StorageError {
  return error instanceof BrokerError || error instanceof StorageError;
}

export function error_message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The code and message of an error, for a response row. */
export function error_fields(error: unknown): { error_code: number; error_message: string } {
  return { error_code: kafka_error_code(error), error_message: error_message(error) };
}
