// Errors of the HTTP admin API as JSON: {"error": {"code", "message", "field"?}}. Broker-core and
// storage errors are mapped to statuses here, in one place, as the Kafka front end does in
// kafka/error_map.ts.
import {
  AckError,
  BrokerError,
  StorageError,
  is_invariant_failure,
  type BrokerErrorKind,
  type StorageErrorCode,
} from '../../core/index.ts';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** The request field (body or query) that is wrong. */
    readonly field: string | null = null,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export const not_found = (message: string) => new HttpError(404, 'not_found', message);
export const invalid_body = (field: string | null, message: string) =>
  new HttpError(400, 'invalid_body', message, field);
export const invalid_query = (field: string, message: string) => new HttpError(400, 'invalid_query', message, field);

const BROKER_STATUS: Partial<Record<BrokerErrorKind, [number, string, string | null]>> = {
  unknown_topic_or_partition: [404, 'not_found', null],
  group_id_not_found: [404, 'not_found', null],
  topic_already_exists: [409, 'topic_exists', 'name'],
  non_empty_group: [409, 'group_not_empty', null],
  invalid_topic: [400, 'invalid_body', 'name'],
  invalid_partitions: [400, 'invalid_body', 'partitions'],
  invalid_config: [400, 'invalid_body', 'configs'],
  invalid_replication_factor: [400, 'invalid_body', 'replication_factor'],
  invalid_group_id: [400, 'invalid_body', 'group_id'],
  queue_full: [503, 'queue_full', null],
  coordinator_not_available: [503, 'unavailable', null],
  rebalance_in_progress: [409, 'rebalance_in_progress', null],
  policy_violation: [409, 'policy_violation', null],
  // In a cluster: the coordinator or leader is another broker (or none right now); ask again there or later.
  not_coordinator: [503, 'not_coordinator', null],
  not_leader_or_follower: [503, 'not_leader', null],
  leader_not_available: [503, 'unavailable', null],
  request_timed_out: [503, 'unavailable', null],
  invalid_replica_assignment: [400, 'invalid_body', 'replicas'],
  offset_out_of_range: [416, 'offset_out_of_range', null],
  topic_authorization_failed: [403, 'forbidden', null],
  group_authorization_failed: [403, 'forbidden', null],
  cluster_authorization_failed: [403, 'forbidden', null],
  transactional_id_authorization_failed: [403, 'forbidden', null],
};

const STORAGE_STATUS: Partial<Record<StorageErrorCode, [number, string]>> = {
  offset_out_of_range: [416, 'offset_out_of_range'],
  message_too_large: [413, 'message_too_large'],
  disk_full: [507, 'disk_full'],
  partition_offline: [503, 'partition_offline'],
  log_closed: [503, 'unavailable'],
  replica_only: [503, 'not_leader'],
  backpressure: [503, 'busy'],
  unknown_partition: [404, 'not_found'],
  io_error: [500, 'storage_error'],
  corrupt_data: [500, 'storage_error'],
};

/** The HTTP error for anything thrown while serving a request. */
export function http_error_of(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof BrokerError) {
    const [status, code, field] = BROKER_STATUS[error.kind] ?? [400, 'invalid_request', null];
    return new HttpError(status, code, error.message, field);
  }
  if (error instanceof AckError) return new HttpError(409, error.kind, error.message);
  if (error instanceof StorageError) {
    const [status, code] = STORAGE_STATUS[error.code] ?? [400, error.code];
    return new HttpError(status, code, error.message);
  }
  if (is_invariant_failure(error)) throw error;
  return new HttpError(500, 'internal', 'internal error while serving the request');
}

export function error_body(error: HttpError): { error: { code: string; message: string; field?: string } } {
  return {
    error: { code: error.code, message: error.message, ...(error.field !== null ? { field: error.field } : {}) },
  };
}
