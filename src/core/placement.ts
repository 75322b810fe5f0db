// Placement: where each partition lives and what this broker does for it — the one interface the
// broker core asks about partitions, with two implementations: a single node, which holds and
// leads every partition (single_node/local_placement.ts), and a member of a cluster in etcd, whose
// partitions are replicated with leaders, followers and an ISR (cluster/cluster_placement.ts). A
// single node is a cluster of one: the core never asks which of the two it runs on.
//
// The placement also owns topic records: creating a topic is placing its partitions. Either
// implementation tells the core what it holds through the PlacementHost: the topics as stored, the
// local logs of partitions it holds, and this broker's role for each.
import type { PartitionLog } from '../storage/index.ts';
import type { PartitionReader } from './partition_reader.ts';
import type {
  BrokerAddress,
  InternalTopic,
  PartitionInfo,
  PartitionReassignment,
  TopicConfigs,
  TopicPartition,
  TopicRecord,
  TxnMarker,
  TxnProducer,
} from './types.ts';

export type ReplicaRole = 'leader' | 'follower' | 'none';

/** What the broker core does as the placement changes; both implementations call these. */
export interface PlacementHost {
  /** The topics as stored now: the core indexes them and applies their configs to local logs. */
  apply_topics(topics: readonly TopicRecord[]): Promise<void>;
  /** Creates a topic through the core, checked as any other (the internal topics); one that exists is left alone. */
  create_topic(name: string, partitions: number, configs: TopicConfigs, placement: TopicPlacement): Promise<void>;
  /** The local log of a partition this broker holds, created when missing (its producer state loaded). */
  ensure_log(topic: string, partition: number): Promise<PartitionLog>;
  /**
   * How the broker's own readers read a local log (Placement.reader): with the transactions the
   * core learnt from its batches, which storage does not know.
   */
  reader_of(log: PartitionLog): PartitionReader;
  /** This broker's role for a partition changed (coordinators follow their internal partitions). */
  on_role(topic: string, partition: number, role: ReplicaRole, log: PartitionLog): Promise<void>;
  /** The end this log has made durable under the storage policy (the leader's share of the high watermark). */
  durable_end(log: PartitionLog): number;
  min_insync_replicas(topic: string): number;
  /** A follower appended copied batches (back to back in `batches`). */
  on_replicated(log: PartitionLog, batches: Buffer): void;
  /** A follower cut its log back to `end`. */
  on_truncated(log: PartitionLog, end: number): void;
  /** Deletes a local replica this broker no longer holds. */
  drop_log(log: PartitionLog): Promise<void>;
  /**
   * The local logs that may lack acknowledged records since the broker started: those recovery cut
   * short (a torn, cut or corrupt tail), and all of them after an unclean shutdown under a
   * durability policy other than fsync (acknowledged writes not yet flushed may be gone).
   */
  suspect_copies(): { topic: string; partition: number; why: string }[];
}

/** How a new topic's partitions are placed. */
export interface TopicPlacement {
  /** -1: the cluster's default. */
  replication_factor: number;
  /** Replica node ids per partition (the preferred leader first), when chosen by the caller. */
  assignment?: number[][];
}

/** ElectLeaders' election types. */
export type Election = 'preferred' | 'unclean';

export interface Placement {
  /** Said in descriptions (the admin API); the core never branches on it. */
  readonly clustered: boolean;
  /**
   * Starts placing partitions: from now on the host hears the topics and this broker's roles. The
   * internal topics are created once the placement can (a single node at once).
   */
  attach(host: PlacementHost, internal_topics: readonly InternalTopic[]): Promise<void>;
  /** Joins at the address clients and replicas reach this broker (a single node has nothing to join). */
  join(
    address: { host: string; port: number },
    listeners: Readonly<Record<string, { host: string; port: number }>>,
  ): Promise<void>;
  /** Stops leading and following; the core closes storage afterwards. */
  close(): Promise<void>;

  // ---------------------------------------------------------------- topics
  /** Resolves once the topic is in the host's view (apply_topics), its local partitions created. */
  create_topic(record: TopicRecord, placement: TopicPlacement): Promise<void>;
  delete_topic(name: string): Promise<void>;
  /** Applies `change` to the stored record (configs, a larger partition count). */
  /**
   * Writes a changed topic record; partitions it adds get `new_replicas` (one list each, checked
   * like a new topic's manual assignment) or are spread over the brokers.
   */
  update_topic(name: string, change: (record: TopicRecord) => TopicRecord, new_replicas?: number[][]): Promise<void>;

  // ---------------------------------------------------------------- where partitions are
  /** Brokers clients may connect to on the listener named `listener`; `self` is this broker's address on it. */
  brokers(self: { host: string; port: number }, listener: string): BrokerAddress[];
  /** The node ids of the brokers registered now (a single node: its own). */
  broker_ids(): number[];
  /** -1 while there is none. */
  controller_id(): number;
  partition_info(topic: string, partition: number): PartitionInfo;
  partition_reassignment(topic: string, partition: number): PartitionReassignment | null;
  reassign(topic: string, partition: number, replicas: number[] | null): Promise<void>;
  /**
   * Elects the preferred replica (alive and in sync) or, `unclean`, any live replica of a partition
   * without a live leader; resolves once the new leader is in the view. Throws election_not_needed,
   * preferred_leader_not_available or eligible_leaders_not_available.
   */
  elect_leader(topic: string, partition: number, election: Election): Promise<void>;
  /** Node id of the partition's leader; -1 while none. */
  leader_of(topic: string, partition: number): number;

  // ---------------------------------------------------------------- the data
  /**
   * Brings this broker's view of topics and partitions up to date with the metadata store (a
   * cluster member reads it once, concurrent calls sharing the read; a single node's view is the
   * store). For a request naming a topic this broker does not know yet.
   */
  catch_up(): Promise<void>;
  /**
   * While this broker is named the partition's leader and is still taking up the role: a promise
   * to wait on before leader_log (bounded; it may still refuse then). Null when there is nothing to
   * wait for, the usual case.
   */
  leadership_pending(topic: string, partition: number): Promise<void> | null;
  /** The log produces append to (this broker must lead); acks=all checks min.insync.replicas. */
  leader_log(topic: string, partition: number, acks_all: boolean): PartitionLog;
  /** The log consumers read from (this broker must lead). */
  read_log(topic: string, partition: number): PartitionLog;
  /** A follower's fetch reaching this leader: records its progress; returns the log to read. */
  replica_fetch(
    node_id: number,
    topic: string,
    partition: number,
    fetch_offset: number,
    current_leader_epoch: number,
  ): PartitionLog;
  end_offset_for_epoch(
    topic: string,
    partition: number,
    epoch: number,
    current_leader_epoch: number,
  ): { epoch: number; end_offset: number };
  /**
   * Where this broker reads a partition for its own work: its replica when it leads or is in sync,
   * else a view of the leader's copy whose bounds are known once `ready()` resolves.
   */
  reader(topic: string, partition: number): PartitionReader & { ready?(): Promise<PartitionReader> };
  /** True when this broker leads the partition now. */
  is_leader(topic: string, partition: number): boolean;
  /** Appends a batch the broker writes itself, on the partition's leader; resolves once acknowledged. */
  append(topic: string, partition: number, records: Buffer): Promise<void>;
  /**
   * Produces a batch on the partition's leader elsewhere; the base offset (-1 when not known).
   * `as_client`: the leader treats it as a client's produce (delay headers acted on).
   */
  forward(topic: string, partition: number, records: Buffer, as_client?: boolean): Promise<number>;

  // ---------------------------------------------------------------- transactions across brokers
  /**
   * Asks the transaction coordinator, on the leader of `coordinator` elsewhere, whether `partition`
   * is in the producer's ongoing transaction; throws its refusal (AddPartitionsToTxn, verify only).
   */
  verify_in_txn(coordinator: TopicPartition, producer: TxnProducer, partition: TopicPartition): Promise<void>;
  /** Has the transaction coordinator elsewhere add `partition` to the producer's ongoing transaction. */
  add_to_txn(coordinator: TopicPartition, producer: TxnProducer, partition: TopicPartition): Promise<void>;
  /** Writes a transaction marker through the partition's leader elsewhere (WriteTxnMarkers). */
  write_marker(where: TopicPartition, marker: TxnMarker): Promise<void>;
}
