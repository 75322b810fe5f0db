// Partitions this broker reads without an in-sync replica of its own (share groups it coordinates,
// dead letters, the admin API): a view of the partition on its leader. While a partition is in use,
// one long-polling Fetch per leader keeps its bounds fresh and wakes its high-watermark listeners;
// the batches that poll brings back are kept, so the read that usually follows is served without
// another round trip. Other reads are Fetches on a second connection. Reads stop at the leader's
// high watermark, as every consumer's do; read_committed reads at its last stable offset, which
// every Fetch answer carries, with the aborted transactions the leader lists.
import { setTimeout as sleep } from 'node:timers/promises';
import { FETCH } from '../protocol/kafka/messages/01_fetch.ts';
import type { RequestIn, ResponseOf, Row } from '../protocol/kafka/schema.ts';
import { LIST_OFFSETS } from '../protocol/kafka/messages/02_list_offsets.ts';
import { ErrorCode } from '../protocol/kafka/error_codes.ts';
import { BrokerError } from '../core/errors.ts';
import type { CommittedRead, PartitionReader } from '../core/partition_reader.ts';
import type { Clock, Logger } from '../core/clock.ts';
import { OffsetOutOfRangeError } from '../storage/index.ts';
import {
  ATTRIBUTE_TRANSACTIONAL,
  batch_attributes,
  batch_base_offset,
  batch_last_offset,
  whole_batches,
} from '../format/batch_layout.ts';
import { type ClusterView, partition_key } from './model.ts';
import { PeerConnections } from './peer_connections.ts';
import type { PeerDialer } from './peer_dialer.ts';
import { PEER_FETCH_VERSION, peer_fetch_request } from './fetch_request.ts';
import { rethrow_invariant } from '../core/invariants.ts';

/** 7: the leader also looks up MAX_TIMESTAMP (-3). */
const LIST_OFFSETS_VERSION = 7;
/** How long a watching Fetch waits on the leader for the high watermark to move. */
const WATCH_WAIT_MS = 500;
/** Batch bytes a watching Fetch brings back per partition (kept for the next read). */
const WATCH_PARTITION_BYTES_MAX = 256 * 1024;
const WATCH_BYTES_MAX = 4 * 1024 * 1024;
/** A partition neither read nor listened to for this long is no longer watched. */
const IDLE_MS = 30_000;
/** A read retries this long while the partition has no reachable leader. */
const READ_DEADLINE_MS = 5_000;
const RETRY_BACKOFF_MS = 100;
const REQUEST_TIMEOUT_MS = 10_000;

/** Leadership moving or not yet known here: worth another try after the view catches up. */
const RETRIABLE = new Set<number>([
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.LEADER_NOT_AVAILABLE,
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.FENCED_LEADER_EPOCH,
  ErrorCode.UNKNOWN_LEADER_EPOCH,
  ErrorCode.REQUEST_TIMED_OUT,
]);

/** One partition of a Fetch answer, as decoded. */
type FetchedRow = Row<Row<ResponseOf<typeof FETCH>['responses']>['partitions']>;

class RetriableError extends Error {}

export class RemotePartition implements PartitionReader {
  log_start_offset = 0;
  high_watermark = 0;
  last_stable_offset = 0;
  /** When the partition was last read or asked about. */
  used_ms: number;
  private known = false;
  /** Whole batches from the last fetch, in offset order (at most WATCH_PARTITION_BYTES_MAX). */
  private kept: Buffer[] = [];
  readonly listeners = new Set<(high_watermark: number) => void>();

  constructor(
    readonly topic: string,
    readonly partition: number,
    private readonly owner: RemotePartitions,
  ) {
    this.used_ms = owner.clock.now_ms();
  }

  get name(): string {
    return `${this.topic}-${this.partition}`;
  }

  /** Resolves once the bounds have been heard from the leader at least once. */
  async ready(): Promise<this> {
    this.touch();
    if (this.known) return this;
    try {
      await this.owner.fetch(this, this.high_watermark, 1);
    } catch (error) {
      // The answer carried the bounds all the same.
      if (!(error instanceof OffsetOutOfRangeError)) throw error;
    }
    return this;
  }

  async read(offset: number, bytes_max: number): Promise<{ batches: Buffer[] }> {
    this.touch();
    const kept = this.from_kept(offset, bytes_max);
    if (kept) return { batches: kept };
    const batches = await this.owner.fetch(this, offset, Math.max(1, bytes_max));
    return { batches };
  }

  async read_committed(offset: number, bytes_max: number): Promise<CommittedRead> {
    this.touch();
    if (offset >= this.last_stable_offset) return { batches: [], aborted: [] };
    const kept = this.committed_from_kept(offset, bytes_max);
    if (kept) return { batches: kept, aborted: [] };
    return this.owner.fetch_committed(this, offset, Math.max(1, bytes_max));
  }

  on_high_watermark(listener: (high_watermark: number) => void): () => void {
    this.touch();
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
      this.used_ms = this.owner.clock.now_ms();
    };
  }

  offset_for_timestamp(timestamp_ms: number): Promise<{ offset: number; timestamp_ms: number } | null> {
    this.touch();
    return this.owner.offset_for_timestamp(this, timestamp_ms);
  }

  wanted(now_ms: number): boolean {
    return this.listeners.size > 0 || now_ms - this.used_ms < IDLE_MS;
  }

  /** Takes in a Fetch answer from the leader: bounds always, batches when there are any. */
  apply(row: FetchedRow): void {
    const { high_watermark, log_start_offset } = row;
    if (log_start_offset >= 0) this.log_start_offset = log_start_offset;
    const advanced = high_watermark >= 0 && high_watermark > this.high_watermark;
    if (high_watermark >= 0) {
      this.high_watermark = high_watermark;
      this.known = true;
    }
    // Every consumer's Fetch answer carries it, whatever its isolation; set before listeners run.
    if (row.last_stable_offset >= 0) this.last_stable_offset = Math.min(row.last_stable_offset, this.high_watermark);
    const records = row.records;
    if (row.error_code === ErrorCode.NONE && records && records.length > 0) this.kept = whole_batches(records);
    if (advanced) for (const listener of [...this.listeners]) listener(this.high_watermark);
  }

  private touch(): void {
    this.used_ms = this.owner.clock.now_ms();
    this.owner.watch(this);
  }

  /**
   * The kept batches a read_committed read may have, when none is transactional: then no aborted
   * transaction has records among them. Null when the leader must be asked.
   */
  private committed_from_kept(offset: number, bytes_max: number): Buffer[] | null {
    const kept = this.from_kept(offset, bytes_max);
    if (!kept) return null;
    const stable = kept.filter((batch) => batch_base_offset(batch, 0) < this.last_stable_offset);
    const transactional = stable.some((batch) => (batch_attributes(batch, 0) & ATTRIBUTE_TRANSACTIONAL) !== 0);
    return transactional ? null : stable;
  }

  /** The kept batches from the one holding `offset`, or null when they do not hold it. */
  private from_kept(offset: number, bytes_max: number): Buffer[] | null {
    if (offset < this.log_start_offset || offset >= this.high_watermark) return null;
    const first = this.kept.findIndex(
      (batch) => batch_base_offset(batch, 0) <= offset && offset <= batch_last_offset(batch, 0),
    );
    if (first < 0) return null;
    const out: Buffer[] = [];
    let bytes = 0;
    for (let i = first; i < this.kept.length && (out.length === 0 || bytes < bytes_max); i++) {
      const batch = this.kept[i]!;
      if (batch_base_offset(batch, 0) >= this.high_watermark) break;
      out.push(batch);
      bytes += batch.length;
    }
    return out;
  }
}

export class RemotePartitions {
  private readonly partitions = new Map<string, RemotePartition>();
  /** Leaders with a watching loop running. */
  private readonly watching = new Set<number>();
  private readonly reads: PeerConnections;
  private readonly watches: PeerConnections;
  private closed = false;

  constructor(
    node_id: number,
    private readonly view: () => ClusterView,
    private readonly logger: Logger,
    dial: PeerDialer,
    readonly clock: Clock,
  ) {
    const options = { client_id: `sluice-reader-${node_id}`, request_timeout_ms: REQUEST_TIMEOUT_MS };
    this.reads = new PeerConnections(view, options, dial);
    this.watches = new PeerConnections(view, options, dial);
  }

  /** The view of a partition on its leader, in use from now (bounds may not be known yet: see ready()). */
  get(topic: string, partition: number): RemotePartition {
    const key = partition_key(topic, partition);
    let remote = this.partitions.get(key);
    if (!remote) this.partitions.set(key, (remote = new RemotePartition(topic, partition, this)));
    remote.used_ms = this.clock.now_ms();
    this.watch(remote);
    return remote;
  }

  close(): void {
    this.closed = true;
    this.reads.close();
    this.watches.close();
    for (const remote of this.partitions.values())
      for (const listener of [...remote.listeners]) listener(remote.high_watermark);
    this.partitions.clear();
  }

  private leader_of(remote: RemotePartition): number {
    return this.view().partitions.get(partition_key(remote.topic, remote.partition))?.value.leader ?? -1;
  }

  /** Makes sure the partition's current leader has a watching loop. */
  watch(remote: RemotePartition): void {
    const leader = this.leader_of(remote);
    if (this.closed || leader < 0 || this.watching.has(leader)) return;
    this.watching.add(leader);
    void this.watch_loop(leader);
  }

  /**
   * One Fetch at a time to `leader` for every wanted partition it leads, each at its high
   * watermark. The loop leaves `watching` in the same tick as it decides to end, so a partition
   * asked about just then starts a new loop instead of being left unwatched.
   */
  private async watch_loop(leader: number): Promise<void> {
    let failing = false;
    for (;;) {
      if (this.closed) {
        this.watching.delete(leader);
        return;
      }
      const now = this.clock.now_ms();
      const watched: RemotePartition[] = [];
      for (const [key, remote] of this.partitions) {
        if (!remote.wanted(now)) this.partitions.delete(key);
        else if (this.leader_of(remote) === leader) watched.push(remote);
        else this.watch(remote); // moved to another leader: that leader's loop takes it
      }
      if (watched.length === 0) {
        this.watching.delete(leader);
        return;
      }
      try {
        const connection = await this.watches.get(leader);
        const response = await connection.call(
          FETCH,
          PEER_FETCH_VERSION,
          fetch_request(
            watched.map((remote) => ({ remote, offset: remote.high_watermark, bytes_max: WATCH_PARTITION_BYTES_MAX })),
            WATCH_WAIT_MS,
            WATCH_BYTES_MAX,
          ),
        );
        let failed = false;
        for (const { remote, row } of rows_of(response, watched)) {
          remote.apply(row);
          if (row.error_code !== ErrorCode.NONE) failed = true;
        }
        if (failed) await sleep(RETRY_BACKOFF_MS);
        if (failing) this.logger.info({ leader }, 'watching remote partitions again');
        failing = false;
      } catch (error) {
        rethrow_invariant(error);
        if (this.closed) continue;
        if (!failing) this.logger.warn({ leader, error: String(error) }, 'watching remote partitions failed; retrying');
        failing = true;
        this.watches.drop(leader);
        await sleep(RETRY_BACKOFF_MS);
      }
    }
  }

  /** Reads batches at `offset` from the leader, retrying while leadership moves. */
  async fetch(remote: RemotePartition, offset: number, bytes_max: number): Promise<Buffer[]> {
    return (await this.fetch_from_leader(remote, offset, bytes_max, 0)).batches;
  }

  /** fetch() as a read_committed consumer: to the leader's last stable offset, with the aborted transactions. */
  fetch_committed(remote: RemotePartition, offset: number, bytes_max: number): Promise<CommittedRead> {
    return this.fetch_from_leader(remote, offset, bytes_max, 1);
  }

  private async fetch_from_leader(
    remote: RemotePartition,
    offset: number,
    bytes_max: number,
    isolation_level: 0 | 1,
  ): Promise<CommittedRead> {
    const row = await this.with_leader(remote, async (leader) => {
      const connection = await this.reads.get(leader);
      const response = await connection.call(
        FETCH,
        PEER_FETCH_VERSION,
        fetch_request([{ remote, offset, bytes_max }], 0, bytes_max, isolation_level),
      );
      const found = rows_of(response, [remote])[0]?.row;
      if (!found) throw new RetriableError(`${remote.name} missing from the leader's answer`);
      remote.apply(found);
      return found;
    });
    const error_code = row.error_code;
    if (error_code === ErrorCode.OFFSET_OUT_OF_RANGE)
      throw new OffsetOutOfRangeError(remote.name, offset, remote.log_start_offset, remote.high_watermark);
    if (error_code !== ErrorCode.NONE)
      throw new BrokerError(
        'leader_not_available',
        `reading ${remote.name} from its leader failed with error ${error_code}`,
      );
    const records = row.records;
    const aborted = (row.aborted_transactions ?? []).map(({ producer_id, first_offset }) => ({
      producer_id,
      first_offset,
    }));
    return { batches: records && records.length > 0 ? whole_batches(records) : [], aborted };
  }

  async offset_for_timestamp(
    remote: RemotePartition,
    timestamp_ms: number,
  ): Promise<{ offset: number; timestamp_ms: number } | null> {
    const row = await this.with_leader(remote, async (leader) => {
      const connection = await this.reads.get(leader);
      const response = await connection.call(LIST_OFFSETS, LIST_OFFSETS_VERSION, {
        replica_id: -1,
        isolation_level: 0,
        topics: [
          {
            name: remote.topic,
            partitions: [{ partition_index: remote.partition, current_leader_epoch: -1, timestamp: timestamp_ms }],
          },
        ],
      });
      const found = response.topics[0]?.partitions[0];
      if (!found) throw new RetriableError(`${remote.name} missing from the leader's answer`);
      return found;
    });
    if (row.error_code !== ErrorCode.NONE)
      throw new BrokerError(
        'leader_not_available',
        `looking up a timestamp in ${remote.name} failed with error ${row.error_code}`,
      );
    return row.offset < 0 ? null : { offset: row.offset, timestamp_ms: row.timestamp };
  }

  /**
   * Runs `request` against the partition's leader; a connection failure, a missing leader or a
   * retriable error code tries again (with the view refreshed meanwhile) until READ_DEADLINE_MS.
   */
  private async with_leader<R extends { error_code: number }>(
    remote: RemotePartition,
    request: (leader: number) => Promise<R>,
  ): Promise<R> {
    const deadline = this.clock.now_ms() + READ_DEADLINE_MS;
    let last = 'no leader';
    for (;;) {
      const leader = this.leader_of(remote);
      if (leader >= 0) {
        try {
          const row = await request(leader);
          if (!RETRIABLE.has(row.error_code)) return row;
          last = `error ${row.error_code}`;
        } catch (error) {
          rethrow_invariant(error);
          last = String(error);
          if (!(error instanceof RetriableError)) this.reads.drop(leader);
        }
      }
      if (this.closed || this.clock.now_ms() + RETRY_BACKOFF_MS > deadline) break;
      await sleep(RETRY_BACKOFF_MS);
    }
    throw new BrokerError('leader_not_available', `${remote.name} could not be read from its leader: ${last}`);
  }
}

function fetch_request(
  wanted: Array<{ remote: RemotePartition; offset: number; bytes_max: number }>,
  wait_ms: number,
  bytes_max: number,
  isolation_level: 0 | 1 = 0,
): RequestIn<typeof FETCH> {
  const partitions = wanted.map(({ remote, offset, bytes_max: partition_bytes_max }) => ({
    topic: remote.topic,
    partition: remote.partition,
    current_leader_epoch: -1,
    fetch_offset: offset,
    partition_bytes_max,
  }));
  return peer_fetch_request(-1, partitions, wait_ms, wait_ms > 0 ? 1 : 0, bytes_max, isolation_level);
}

/** Pairs the answer's rows with the partitions asked for. */
function rows_of(
  response: ResponseOf<typeof FETCH>,
  asked: RemotePartition[],
): Array<{ remote: RemotePartition; row: FetchedRow }> {
  const by_name = new Map(asked.map((remote) => [remote.name, remote]));
  const out: Array<{ remote: RemotePartition; row: FetchedRow }> = [];
  for (const topic of response.responses) {
    for (const row of topic.partitions) {
      const remote = by_name.get(`${topic.topic}-${row.partition_index}`);
      if (remote) out.push({ remote, row });
    }
  }
  return out;
}
