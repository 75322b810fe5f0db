// Errors of the broker core, by kind, and the storage errors that pass through it unchanged. Front
// ends map them to their protocol's codes (the Kafka front end in server/kafka/error_map.ts, HTTP
// in server/http/http_errors.ts); nothing else of storage is visible to them.
import { StorageError } from '../storage/index.ts';
export { InvalidBatchError, StorageError, type StorageErrorCode } from '../storage/index.ts';

export type BrokerErrorKind =
  | 'unknown_topic_or_partition'
  | 'topic_already_exists'
  | 'invalid_topic'
  | 'invalid_partitions'
  | 'invalid_replication_factor'
  | 'invalid_config'
  | 'invalid_request'
  | 'invalid_record'
  | 'invalid_required_acks'
  | 'out_of_order_sequence'
  | 'invalid_producer_epoch'
  | 'unknown_producer_id'
  | 'invalid_txn_state'
  | 'invalid_producer_id_mapping'
  | 'invalid_transaction_timeout'
  | 'concurrent_transactions'
  | 'transactional_id_not_found'
  | 'invalid_group_id'
  | 'unknown_member_id'
  | 'illegal_generation'
  | 'rebalance_in_progress'
  | 'inconsistent_group_protocol'
  | 'invalid_session_timeout'
  | 'member_id_required'
  | 'fenced_instance_id'
  | 'group_id_not_found'
  | 'non_empty_group'
  | 'group_subscribed_to_topic'
  | 'coordinator_not_available'
  | 'offset_metadata_too_large'
  | 'policy_violation'
  | 'unsupported_version'
  | 'fenced_member_epoch'
  | 'stale_member_epoch'
  | 'unreleased_instance_id'
  | 'unsupported_assignor'
  | 'invalid_regular_expression'
  | 'group_max_size_reached'
  | 'invalid_record_state'
  | 'share_session_not_found'
  | 'invalid_share_session_epoch'
  | 'fetch_session_id_not_found'
  | 'invalid_fetch_session_epoch'
  | 'queue_full'
  | 'offset_out_of_range'
  // cluster: leadership and replication
  | 'not_leader_or_follower'
  | 'leader_not_available'
  | 'not_coordinator'
  | 'coordinator_load_in_progress'
  | 'not_enough_replicas'
  | 'not_enough_replicas_after_append'
  | 'fenced_leader_epoch'
  | 'unknown_leader_epoch'
  | 'request_timed_out'
  | 'invalid_replica_assignment'
  | 'no_reassignment_in_progress'
  | 'election_not_needed'
  | 'preferred_leader_not_available'
  | 'eligible_leaders_not_available'
  // users
  | 'resource_not_found'
  | 'unacceptable_credential'
  // authorization: the ACLs do not allow it
  | 'topic_authorization_failed'
  | 'group_authorization_failed'
  | 'cluster_authorization_failed'
  | 'transactional_id_authorization_failed';

export class BrokerError extends Error {
  constructor(
    readonly kind: BrokerErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'BrokerError';
  }
}

/**
 * Whether a write failed because this broker stopped leading the log it wrote to: led elsewhere,
 * become a follower copy, or closed as its leadership moved. A coordinator answers these with
 * not_coordinator, the one code on which clients look the coordinator up again.
 */
export function leadership_lost(error: unknown): boolean {
  if (error instanceof BrokerError) return error.kind === 'not_leader_or_follower';
  return error instanceof StorageError && (error.code === 'replica_only' || error.code === 'log_closed');
}

/** JoinGroup v4+ without a member id: the member must join again with the id it is given here. */
export class MemberIdRequiredError extends BrokerError {
  constructor(readonly member_id: string) {
    super('member_id_required', 'join again with the member id given');
  }
}

/** A share-group acknowledgement the records' state does not allow, or one that makes no sense. */
export class AckError extends Error {
  constructor(
    readonly kind: 'invalid_record_state' | 'invalid_request',
    message: string,
  ) {
    super(message);
    this.name = 'AckError';
  }
}

/** Routing refusals (exchanges, queues, bindings), in AMQP's terms, which is where they come from. */
export class RoutingError extends Error {
  constructor(
    readonly kind: 'not_found' | 'precondition_failed' | 'access_refused' | 'resource_locked',
    message: string,
  ) {
    super(message);
    this.name = 'RoutingError';
  }
}
