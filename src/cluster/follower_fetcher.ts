// A follower's fetcher for one leader broker: one connection, one Fetch (with this broker's replica
// id) for all partitions it follows there. Before a partition's first fetch in a leader epoch it
// asks the leader where its own latest epoch ends (OffsetForLeaderEpoch) and truncates there, so
// the replicas never diverge. Fetched batches are appended as they are, and the next fetch goes out
// only once they are durable: a follower's fetch offset is what it has made durable.
import type { Connection } from '../protocol/kafka/client_connection.ts';
import type { PeerDialer } from './peer_dialer.ts';
import { FETCH } from '../protocol/kafka/messages/01_fetch.ts';
import type { ResponseOf, Row } from '../protocol/kafka/schema.ts';
import { PEER_FETCH_VERSION, peer_fetch_request } from './fetch_request.ts';
import { OFFSET_FOR_LEADER_EPOCH } from '../protocol/kafka/messages/23_offset_for_leader_epoch.ts';
import { ErrorCode } from '../protocol/kafka/error_codes.ts';
import type { Logger, PartitionLog } from '../storage/index.ts';
import {
  BATCH_HEADER_BYTES,
  OFFSET_LAST_OFFSET_DELTA,
  OFFSET_LEADER_EPOCH,
  batch_base_offset,
  batch_size_at,
} from '../format/batch_layout.ts';
import { invariant, rethrow_invariant } from '../core/invariants.ts';
import type { BrokerRegistration } from './model.ts';
import type { Replica, ReplicaHost, ReplicaSettings } from './replica.ts';

const OFFSET_FOR_LEADER_EPOCH_VERSION = 4;
/** Pause after a failed round (leader unreachable, errors) before the next. */
const RETRY_BACKOFF_MS = 200;
const REQUEST_TIMEOUT_MS = 10_000;

/** One partition of a Fetch answer, as decoded. */
type FetchedRow = Row<Row<ResponseOf<typeof FETCH>['responses']>['partitions']>;

export class FollowerFetcher {
  private readonly partitions = new Map<string, Replica>();
  private address: BrokerRegistration | null = null;
  private connection: Connection | null = null;
  private running = false;
  private closed = false;
  /** Per partition, the last error code its leader answered with (each new one is logged once). */
  private readonly errors = new Map<string, number>();

  constructor(
    private readonly node_id: number,
    readonly leader_id: number,
    private readonly settings: ReplicaSettings,
    private readonly host: ReplicaHost,
    private readonly logger: Logger,
    private readonly request_refresh: () => void,
    private readonly dial: PeerDialer,
    /** The leader's port refused a connection: it may have died (src/cluster/dead_peers.ts). */
    private readonly on_refused: (leader_id: number) => void,
  ) {}

  set_address(address: BrokerRegistration | null): void {
    const changed = address?.host !== this.address?.host || address?.port !== this.address?.port;
    this.address = address;
    if (changed) this.drop_connection();
  }

  add(replica: Replica): void {
    this.partitions.set(replica.name, replica);
    if (!this.running) void this.run();
  }

  remove(replica: Replica): void {
    this.partitions.delete(replica.name);
  }

  close(): void {
    this.closed = true;
    this.partitions.clear();
    this.drop_connection();
  }

  private drop_connection(): void {
    this.connection?.close();
    this.connection = null;
  }

  private async run(): Promise<void> {
    this.running = true;
    try {
      while (!this.closed && this.partitions.size > 0) {
        try {
          await this.round();
        } catch (error) {
          rethrow_invariant(error);
          if (!this.closed)
            this.logger.info({ leader: this.leader_id, error: String(error) }, 'replica fetch failed; retrying');
          this.drop_connection();
          if ((error as NodeJS.ErrnoException).code === 'ECONNREFUSED') this.on_refused(this.leader_id);
          await sleep(RETRY_BACKOFF_MS);
        }
      }
    } finally {
      this.running = false;
    }
  }

  private async connect(): Promise<Connection> {
    if (this.connection && !this.connection.is_closed) return this.connection;
    const address = this.address;
    if (!address) throw new Error(`leader ${this.leader_id} is not registered`);
    this.connection = await this.dial(address.host, address.port, {
      client_id: `sluice-replica-${this.node_id}`,
      request_timeout_ms: REQUEST_TIMEOUT_MS,
    });
    return this.connection;
  }

  private async round(): Promise<void> {
    const connection = await this.connect();
    for (const replica of [...this.partitions.values()])
      if (replica.needs_truncation) await this.truncate(connection, replica);
    const sent = [...this.partitions.values()].filter((replica) => !replica.needs_truncation);
    if (sent.length === 0) return sleep(RETRY_BACKOFF_MS);
    const epochs = new Map<string, number>();
    for (const replica of sent) epochs.set(replica.name, replica.epoch);
    const wanted = sent.map((replica) => ({
      topic: replica.topic,
      partition: replica.partition,
      current_leader_epoch: replica.epoch,
      fetch_offset: replica.log.next_offset,
      partition_bytes_max: this.settings.replica_fetch_bytes_max,
    }));
    const request = peer_fetch_request(
      this.node_id,
      wanted,
      this.settings.replica_fetch_wait_ms,
      1,
      this.settings.replica_fetch_bytes_max,
    );
    const response = await connection.call(FETCH, PEER_FETCH_VERSION, request);
    let refresh = false;
    // Partitions are appended side by side, so one group-commit fsync covers them all.
    const applying: Promise<void>[] = [];
    for (const topic of response.responses) {
      for (const row of topic.partitions) {
        const name = `${topic.topic}-${row.partition_index}`;
        const replica = this.partitions.get(name);
        if (!replica || replica.epoch !== epochs.get(name) || replica.role !== 'follower') continue;
        const error_code = row.error_code;
        this.note_error(name, error_code, 'fetch');
        if (error_code === ErrorCode.OFFSET_OUT_OF_RANGE && row.log_start_offset > replica.log.next_offset)
          applying.push(this.restart(replica, row.log_start_offset, epochs.get(name)!));
        else if (error_code === ErrorCode.OFFSET_OUT_OF_RANGE) replica.needs_truncation = true;
        else if (error_code !== ErrorCode.NONE) refresh = true;
        else applying.push(this.apply(replica, row, epochs.get(name)!));
      }
    }
    await Promise.all(applying);
    if (refresh) {
      this.request_refresh();
      await sleep(RETRY_BACKOFF_MS);
    }
  }

  /**
   * Appends a fetched partition's batches. Leadership may move while this runs (a follower made
   * leader, or made to follow another epoch): each append and epoch entry is made only while the
   * replica still follows in the fetch's epoch, checked in the same tick as the call, so nothing
   * from the old leader lands after a new role began.
   */
  private async apply(replica: Replica, row: FetchedRow, fetch_epoch: number): Promise<void> {
    const { log } = replica;
    const current = () => replica.role === 'follower' && replica.epoch === fetch_epoch;
    const records = row.records;
    if (records && records.length > 0) {
      // Whole batches only, from where this log ends.
      let position = 0;
      let start = -1;
      while (position + BATCH_HEADER_BYTES <= records.length) {
        const size = batch_size_at(records, position);
        if (position + size > records.length) break;
        const base = batch_base_offset(records, position);
        const epoch = records.readInt32BE(position + OFFSET_LEADER_EPOCH);
        if (start < 0 && straddles(records, position, log)) {
          if (!current()) return;
          await log.restart_at(base);
          this.host.on_truncated(log, base);
        } else if (start < 0 && straddles_end(records, position, log)) {
          // The leader's batch covers this log's end, so this copy of [base, end) was cut into
          // other batches: a deposed leader's (seed 1616, a follower paused through a leader
          // change that the new leader's epoch cache had not recorded). The batch is taken whole.
          if (!current()) return;
          await this.cut(replica, base);
        }
        if (base >= log.next_offset && start < 0) start = position;
        if (start >= 0 && epoch > log.epochs.latest_epoch) {
          // Appends before this batch must land first: the epoch cache entry names its offset.
          if (position > start) {
            if (!current()) return;
            await this.append(replica, records.subarray(start, position));
          }
          start = position;
          if (!current()) return;
          await log.epochs.assign(epoch, base);
        }
        position += size;
      }
      if (start >= 0 && position > start) {
        if (!current()) return;
        await this.append(replica, records.subarray(start, position));
      }
    }
    if (!current()) return;
    const leader_hw = row.high_watermark;
    const hw = Math.min(leader_hw, log.written_offset);
    if (hw > log.high_watermark) log.set_high_watermark(hw);
    // The leader's log start moves on (delete-records, retention, a pruned internal log): so does
    // this copy's, or records deleted there would be served again after a failover.
    const log_start = Math.min(row.log_start_offset, log.high_watermark);
    if (log_start > log.log_start_offset && current()) await log.delete_records_before(log_start);
  }

  private async append(replica: Replica, batches: Buffer): Promise<void> {
    // At the log's end, or after it where the leader's cleaner removed batches (a compacted log).
    invariant(
      batch_base_offset(batches, 0) >= replica.log.next_offset,
      () =>
        `${replica.name}: a copied batch at ${batch_base_offset(batches, 0)} does not continue the log at ` +
        `${replica.log.next_offset}`,
    );
    // Kept as is, not copied: a response frame belongs to this fetch alone, and a replicated
    // append does not write into the buffer.
    const appended = replica.log.append(batches, { replicated: true, local_ack: true });
    // The producer state learns the batches as they enter the log, not once they are durable: if
    // this replica is made leader meanwhile, a producer's retry of one of them is a duplicate.
    this.host.on_replicated(replica.log, batches);
    try {
      await appended;
    } catch (error) {
      // A failed write (a full disk) hands its offsets back, and so must the producer state: a
      // batch it still listed would answer a producer's next send as a duplicate, with offsets
      // that later hold other records (finding 25, seed 1717).
      this.host.on_truncated(replica.log, batch_base_offset(batches, 0));
      throw error;
    }
  }

  /**
   * A replica that fell behind the leader's log start (retention or delete-records there while it
   * was away) starts its log again where the leader's begins, then fetches from there.
   */
  private async restart(replica: Replica, log_start_offset: number, fetch_epoch: number): Promise<void> {
    if (replica.role !== 'follower' || replica.epoch !== fetch_epoch) return;
    await replica.log.restart_at(log_start_offset);
    this.host.on_truncated(replica.log, log_start_offset);
  }

  /** Truncates the replica where its log diverges from the leader's (unless its role changed meanwhile). */
  private async truncate(connection: Connection, replica: Replica): Promise<void> {
    await replica.truncating; // one begun under an earlier leader
    const { log } = replica;
    if (replica.refetch_from !== null && replica.role === 'follower') {
      await this.cut(replica, replica.refetch_from); // a corrupt batch: fetched again from the leader
      replica.refetch_from = null;
    }
    const fetch_epoch = replica.epoch;
    const current = () => replica.role === 'follower' && replica.epoch === fetch_epoch;
    const epoch = log.epochs.latest_epoch;
    if (epoch < 0) {
      if (log.next_offset > 0) await this.cut(replica, 0);
      replica.needs_truncation = false;
      return;
    }
    const response = await connection.call(OFFSET_FOR_LEADER_EPOCH, OFFSET_FOR_LEADER_EPOCH_VERSION, {
      replica_id: this.node_id,
      topics: [
        {
          topic: replica.topic,
          partitions: [{ partition: replica.partition, current_leader_epoch: replica.epoch, leader_epoch: epoch }],
        },
      ],
    });
    const row = response.topics[0]?.partitions[0];
    this.note_error(replica.name, row?.error_code ?? ErrorCode.UNKNOWN_SERVER_ERROR, 'offset for leader epoch');
    if (!row || row.error_code !== ErrorCode.NONE) {
      this.request_refresh();
      await sleep(RETRY_BACKOFF_MS);
      return;
    }
    if (!current()) return;
    const target = divergence_point(row.leader_epoch, row.end_offset, epoch, log);
    if (target < log.next_offset) await this.cut(replica, target);
    replica.needs_truncation = false;
  }

  /** Logs a partition's error answers when they change, so a follower stuck on one is visible once. */
  private note_error(name: string, error_code: number, request: string): void {
    const last = this.errors.get(name) ?? ErrorCode.NONE;
    if (error_code === last) return;
    if (error_code === ErrorCode.NONE) this.errors.delete(name);
    else this.errors.set(name, error_code);
    this.logger.info(
      { partition: name, leader: this.leader_id, request, error_code },
      error_code === ErrorCode.NONE ? 'leader answers again' : 'leader refused a replica request',
    );
  }

  private async cut(replica: Replica, offset: number): Promise<void> {
    const before = replica.log.next_offset;
    const cutting = replica.log.truncate_to(offset);
    const done = cutting.then(
      () => undefined,
      () => undefined,
    );
    replica.truncating = done;
    void done.then(() => {
      if (replica.truncating === done) replica.truncating = null;
    });
    const end = await cutting;
    this.logger.warn(
      { partition: replica.name, from: before, to: end, leader: this.leader_id },
      'truncated a divergent tail',
    );
    this.host.on_truncated(replica.log, end);
  }
}

/**
 * Where this log stops agreeing with the leader's, from the leader's answer for this log's latest
 * epoch. When the leader knows only an older epoch, it answered that epoch and where it ends in
 * its log; this log may have begun a later epoch before that point (records the leader never got,
 * under a leader since deposed), so it is cut where its own copy of the answered epoch ends too.
 */
export function divergence_point(
  answered_epoch: number,
  leader_end_offset: number,
  asked_epoch: number,
  log: Pick<PartitionLog, 'next_offset' | 'epochs'>,
): number {
  if (leader_end_offset < 0) return 0;
  let end = Math.min(leader_end_offset, log.next_offset);
  if (answered_epoch >= 0 && answered_epoch < asked_epoch)
    end = Math.min(end, log.epochs.end_offset_for(answered_epoch, log.next_offset).end_offset);
  return Math.max(0, end);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * True when `log` holds no records and the batch at `position` begins below its start and ends at
 * or past it: the leader's log start falls inside that batch (delete-records, a pruned internal
 * log), and an empty log started there takes the whole batch from its base offset.
 */
/** A batch that begins below this log's end and ends at or past it. */
function straddles_end(records: Buffer, position: number, log: Pick<PartitionLog, 'next_offset'>): boolean {
  const base = batch_base_offset(records, position);
  const last = base + records.readInt32BE(position + OFFSET_LAST_OFFSET_DELTA);
  return base < log.next_offset && last >= log.next_offset;
}

function straddles(records: Buffer, position: number, log: PartitionLog): boolean {
  const base = batch_base_offset(records, position);
  const last = base + records.readInt32BE(position + OFFSET_LAST_OFFSET_DELTA);
  return log.next_offset === log.log_start_offset && base < log.next_offset && last >= log.next_offset;
}
