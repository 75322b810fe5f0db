// The history a fault run records and the checker reads: every client operation with its
// outcome, what consumers and the replicas' logs held, and the groups' committed offsets. Plain
// data (JSON lines in a run's results folder), so a failed run can be checked again later.

/** How a client call ended: acknowledged, refused, or not known (a timeout, a lost connection). */
export type Outcome = 'ok' | 'fail' | 'unknown';

/** One produce of one record, as the client saw it. */
export interface WriteOp {
  kind: 'write';
  /** The client process (one producer) that made the call. */
  process: string;
  topic: string;
  partition: number;
  key: string | null;
  /** Unique per write in a run: what makes a record recognisable when read back. */
  value: string;
  outcome: Outcome;
  /** The offset the acknowledgement named (ok only). */
  offset?: number;
  /** Why the client gave up (unknown only): its error's name and message, shortened. */
  error?: string;
  /** Milliseconds since the run began: when the call was made and when it returned. */
  invoked_ms: number;
  completed_ms: number;
}

/** A record seen at an offset, by a consumer or in a replica's log at the end of the run. */
export interface ReadOp {
  kind: 'read';
  /** A consumer's process name, or `replica-<node id>` for a log read back from disk. */
  reader: string;
  topic: string;
  partition: number;
  offset: number;
  key: string | null;
  value: string;
  at_ms: number;
  /**
   * Replica reads only: the record's batch (its base offset) and the batch's producer id and
   * epoch, which tell a client's resend under a new epoch from a record the broker stored twice.
   */
  batch?: { base_offset: number; producer_id: number; producer_epoch: number };
}

/** A consumer group's offset commit that was acknowledged, in the order the acknowledgements came. */
export interface CommitOp {
  kind: 'commit';
  group: string;
  topic: string;
  partition: number;
  offset: number;
  at_ms: number;
}

/** A queue (share group) message handed to a consumer's handler and accepted by it. */
export interface AcceptOp {
  kind: 'accept';
  group: string;
  topic: string;
  partition: number;
  offset: number;
  value: string;
  at_ms: number;
}

/** A delayed message, as produced (acknowledged) and as delivered. */
export interface DelayedWriteOp {
  kind: 'delayed_write';
  topic: string;
  value: string;
  /** When the produce was made and when it may be delivered, milliseconds since the run began. */
  invoked_ms: number;
  deliver_at_ms: number;
  outcome: Outcome;
}

export interface DelayedReadOp {
  kind: 'delayed_read';
  topic: string;
  value: string;
  at_ms: number;
}

/** One AMQP publish with confirms, as the publisher saw it (ok: confirmed, fail: nacked). */
export interface AmqpPublishOp {
  kind: 'amqp_publish';
  process: string;
  queue: string;
  /** Unique per publish in a run. */
  value: string;
  outcome: Outcome;
  invoked_ms: number;
  completed_ms: number;
}

/** An AMQP delivery its consumer acknowledged (basic.ack sent). */
export interface AmqpAckOp {
  kind: 'amqp_ack';
  consumer: string;
  queue: string;
  value: string;
  redelivered: boolean;
  at_ms: number;
}

/** An input of the consume-transform-produce workload, written by an idempotent producer. */
export interface TxnInputOp {
  kind: 'txn_input';
  value: string;
  outcome: Outcome;
  invoked_ms: number;
}

/**
 * A record of the workload's output topic seen by a read_committed consumer: `live` while the
 * loop and the faults ran, `final` by a fresh reader at the end.
 */
export interface TxnOutputOp {
  kind: 'txn_output';
  reader: 'live' | 'final';
  partition: number;
  offset: number;
  value: string;
  at_ms: number;
}

/**
 * What the check-back workload decided for a half message, from its value: settled by its
 * producer (`commit`, `rollback`), or left open by a producer that is then abandoned, its group's
 * check answered with `open_commit` / `open_rollback`'s outcome, or 'unknown' every time.
 */
export type HalfDecision = 'commit' | 'rollback' | 'open_commit' | 'open_rollback' | 'open_unknown';

/** One `sendHalf` of the check-back workload (ok: the half message was written, still invisible). */
export interface HalfSendOp {
  kind: 'half_send';
  process: string;
  /** Unique per half message in a run. */
  value: string;
  decision: HalfDecision;
  outcome: Outcome;
  /** The transaction that carries it and where its record went (ok only), to look it up in the logs. */
  transactional_id?: string;
  partition?: number;
  offset?: number;
  error?: string;
  invoked_ms: number;
  completed_ms: number;
}

/** A half message's commit() or rollback() by the producer that wrote it. */
export interface HalfEndOp {
  kind: 'half_end';
  value: string;
  commit: boolean;
  outcome: Outcome;
  invoked_ms: number;
  completed_ms: number;
}

/** A check of a half message, as the group's checker answered it (whether its EndTxn took is not seen). */
export interface HalfCheckOp {
  kind: 'half_check';
  /** Empty when the coordinator found no record of the transaction (its produce never landed). */
  value: string;
  transactional_id: string;
  check: number;
  checks_max: number;
  answer: 'commit' | 'rollback' | 'unknown';
  at_ms: number;
}

/**
 * A half message seen by a read_committed consumer: in the workload's topic `live` while the
 * faults ran (the first sight of each offset), or `final` by a fresh reader at the end; or in the
 * unresolved topic (`unresolved`, a fresh reader at the end; one op per copy).
 */
export interface HalfReadOp {
  kind: 'half_read';
  reader: 'live' | 'final' | 'unresolved';
  partition: number;
  offset: number;
  value: string;
  at_ms: number;
}

/** Where a replica's log of a partition ended: its records are ReadOps with `replica-<id>`. */
export interface ReplicaEndOp {
  kind: 'replica_end';
  node_id: number;
  topic: string;
  partition: number;
  high_watermark: number;
}

/**
 * A broker's wall clock set wrong from `from_ms` to `to_ms` (since the run began), by at most
 * `error_ms` either way. Delays are measured on the brokers' wall clocks, so a delayed message
 * pending while some clock was wrong may arrive early by that much (docs/guarantees.md).
 */
export interface ClockFaultOp {
  kind: 'clock_fault';
  node_id: number;
  from_ms: number;
  to_ms: number;
  error_ms: number;
}

/** A user looking, through its own login, at a topic no ACL lets it describe or read: what it saw. */
export interface AclProbeOp {
  kind: 'acl_probe';
  broker: string;
  /** Metadata of every topic listed it (it must not). */
  listed: boolean;
  /** Records a fetch of it returned (there must be none). */
  records: number;
  /** The fetch's error code (TOPIC_AUTHORIZATION_FAILED), null when the probe failed before it. */
  error_code: number | null;
  at_ms: number;
}

/**
 * After the faults: whether a user the admin last added (`present`) or removed (`absent`), with
 * the change acknowledged, logs in on a broker.
 */
export interface UserLoginOp {
  kind: 'user_login';
  user: string;
  expected: 'present' | 'absent';
  broker: string;
  logged_in: boolean;
  at_ms: number;
}

/** After the faults: the value a broker describes for a cluster-wide config the admin kept changing. */
export interface BrokerConfigOp {
  kind: 'broker_config';
  broker: number;
  name: string;
  /** null: the broker could not be asked. */
  value: string | null;
  /** The last acknowledged value and those tried after it (their outcome unknown). */
  allowed: string[];
  at_ms: number;
}

/** What a producer over a byte-rate quota had acknowledged, over how long, and its quota per broker. */
export interface QuotaUseOp {
  kind: 'quota_use';
  bytes: number;
  seconds: number;
  bytes_per_s: number;
  brokers: number;
}

/** A keyed write to the compacted topic (a tombstone has no value; `id` travels in a header). */
export interface CompactWriteOp {
  kind: 'compact_write';
  key: string;
  id: string;
  tombstone: boolean;
  outcome: 'ok' | 'unknown';
  invoked_ms: number;
}

/** A record of the compacted topic read back at the end, from its start. */
export interface CompactReadOp {
  kind: 'compact_read';
  partition: number;
  offset: number;
  key: string;
  id: string;
}

export type HistoryOp =
  | CompactWriteOp
  | CompactReadOp
  | AclProbeOp
  | UserLoginOp
  | BrokerConfigOp
  | QuotaUseOp
  | WriteOp
  | ReadOp
  | CommitOp
  | AcceptOp
  | DelayedWriteOp
  | DelayedReadOp
  | AmqpPublishOp
  | AmqpAckOp
  | TxnInputOp
  | TxnOutputOp
  | HalfSendOp
  | HalfEndOp
  | HalfCheckOp
  | HalfReadOp
  | ReplicaEndOp
  | ClockFaultOp;

/** The bounds docs/guarantees.md gives, which the checker holds the run to. */
export interface CheckBounds {
  /**
   * Times one queue message may be accepted (at-least-once redeliveries after faults), over the
   * Kafka share-group API or acknowledged over AMQP (an ack lost with its connection redelivers).
   */
  queue_accepts_max: number;
  /** How early a delayed message may arrive with every clock right (the broker's timer granularity). */
  delayed_early_ms: number;
  /** Whether writes come from idempotent producers: then no record may be stored twice. */
  idempotent_writes: boolean;
}

/**
 * docs/guarantees.md: queue delivery is at least once, each delivery raising the record's delivery
 * count, and a record reaching the delivery limit (`deliveryCountLimit`, 5) is dead-lettered, so
 * a handler may accept one record at most 5 times.
 */
export const DEFAULT_BOUNDS: CheckBounds = { queue_accepts_max: 5, delayed_early_ms: 50, idempotent_writes: true };

/** One broken property, with the operations that show it. */
export interface Failure {
  property: string;
  detail: string;
  ops: HistoryOp[];
}
