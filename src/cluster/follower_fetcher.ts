// A follower's fetcher for one leader broker: one connection, one Fetch (with this broker's replica
// id) for all partitions it follows there. Before a partition's first fetch in a leader epoch it
// asks the leader where its own latest epoch ends (OffsetForLeaderEpoch) and truncates there, so
// the replicas never diverge. Fetched batches are appended as they are, and the next fetch goes out
// only once they are durable: a follower's fetch offset is what it has made durable.
import { Connection } from '../protocol/kafka/client_connection.ts';
import { FETCH } from '../protocol/kafka/messages/01_fetch.ts';
import { OFFSET_FOR_LEADER_EPOCH } from '../protocol/kafka/messages/23_offset_for_leader_epoch.ts';
import { ErrorCode } from '../protocol/kafka/error_codes.ts';
import type { Logger } from '../storage/index.ts';
import { batch_format } from '../storage/index.ts';
import type { BrokerRegistration } from './model.ts';
import type { Replica, ReplicaHost, ReplicaSettings } from './replica_manager.ts';

const FETCH_VERSION = 12;
const OFFSET_FOR_LEADER_EPOCH_VERSION = 4;
/** Pause after a failed round (leader unreachable, errors) before the next. */
const RETRY_BACKOFF_MS = 200;
const REQUEST_TIMEOUT_MS = 10_000;

type Row = Record<string, unknown>;

export class FollowerFetcher {
  private readonly partitions = new Map<string, Replica>();
  private address: BrokerRegistration | null = null;
  private connection: Connection | null = null;
  private running = false;
  private closed = false;

  constructor(
    private readonly node_id: number,
    readonly leader_id: number,
    private readonly settings: ReplicaSettings,
    private readonly host: ReplicaHost,
    private readonly logger: Logger,
    private readonly request_refresh: () => void,
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
          if (!this.closed) this.logger.info({ leader: this.leader_id, error: String(error) }, 'replica fetch failed; retrying');
          this.drop_connection();
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
    this.connection = await Connection.connect(address.host, address.port, { client_id: `sluice-replica-${this.node_id}`, request_timeout_ms: REQUEST_TIMEOUT_MS });
    return this.connection;
  }

  private async round(): Promise<void> {
    const connection = await this.connect();
    for (const replica of [...this.partitions.values()]) if (replica.needs_truncation) await this.truncate(connection, replica);
    const sent = [...this.partitions.values()].filter((replica) => !replica.needs_truncation);
    if (sent.length === 0) return sleep(RETRY_BACKOFF_MS);
    const by_topic = new Map<string, Row[]>();
    const epochs = new Map<string, number>();
    for (const replica of sent) {
      epochs.set(replica.name, replica.epoch);
      if (!by_topic.has(replica.topic)) by_topic.set(replica.topic, []);
      by_topic.get(replica.topic)!.push({
        partition: replica.partition,
        current_leader_epoch: replica.epoch,
        fetch_offset: replica.log.next_offset,
        last_fetched_epoch: -1,
        log_start_offset: -1,
        partition_max_bytes: this.settings.replica_fetch_bytes_max,
      });
    }
    const response = (await connection.call(FETCH, FETCH_VERSION, {
      replica_id: this.node_id,
      max_wait_ms: this.settings.replica_fetch_wait_ms,
      min_bytes: 1,
      max_bytes: this.settings.replica_fetch_bytes_max,
      isolation_level: 0,
      session_id: 0,
      session_epoch: -1,
      topics: [...by_topic].map(([topic, partitions]) => ({ topic, partitions })),
      forgotten_topics_data: [],
      rack_id: '',
    })) as Row;
    let refresh = false;
    // Partitions are appended side by side, so one group-commit fsync covers them all.
    const applying: Promise<void>[] = [];
    for (const topic of response.responses as Row[]) {
      for (const row of topic.partitions as Row[]) {
        const name = `${topic.topic as string}-${row.partition_index as number}`;
        const replica = this.partitions.get(name);
        if (!replica || replica.epoch !== epochs.get(name) || replica.role !== 'follower') continue;
        const error_code = row.error_code as number;
        if (error_code === ErrorCode.OFFSET_OUT_OF_RANGE) replica.needs_truncation = true;
        else if (error_code !== ErrorCode.NONE) refresh = true;
        else applying.push(this.apply(replica, row));
      }
    }
    await Promise.all(applying);
    if (refresh) {
      this.request_refresh();
      await sleep(RETRY_BACKOFF_MS);
    }
  }

  private async apply(replica: Replica, row: Row): Promise<void> {
    const { log } = replica;
    const records = row.records as Buffer | null;
    if (records && records.length > 0) {
      // Whole batches only, from where this log ends.
      let position = 0;
      let start = -1;
      while (position + batch_format.BATCH_HEADER_BYTES <= records.length) {
        const size = batch_format.batch_size_at(records, position);
        if (position + size > records.length) break;
        const base = batch_format.batch_base_offset(records, position);
        const epoch = records.readInt32BE(position + batch_format.OFFSET_LEADER_EPOCH);
        if (base >= log.next_offset && start < 0) start = position;
        if (start >= 0 && epoch > log.epochs.latest_epoch) {
          // Appends before this batch must land first: the epoch cache entry names its offset.
          if (position > start) await this.append(replica, records.subarray(start, position));
          start = position;
          await log.epochs.assign(epoch, base);
        }
        position += size;
      }
      if (start >= 0 && position > start) await this.append(replica, records.subarray(start, position));
      if (replica.role !== 'follower') return;
    }
    const leader_hw = row.high_watermark as number;
    const hw = Math.min(leader_hw, log.written_offset);
    if (hw > log.high_watermark) log.set_high_watermark(hw);
  }

  private async append(replica: Replica, batches: Buffer): Promise<void> {
    // Kept as is, not copied: a response frame belongs to this fetch alone, and a replicated
    // append does not write into the buffer.
    await replica.log.append(batches, { replicated: true, local_ack: true });
    this.host.on_replicated(replica.log, batches);
  }

  /** Truncates the replica where its log diverges from the leader's. */
  private async truncate(connection: Connection, replica: Replica): Promise<void> {
    const { log } = replica;
    const epoch = log.epochs.latest_epoch;
    if (epoch < 0) {
      if (log.next_offset > 0) await this.cut(replica, 0);
      replica.needs_truncation = false;
      return;
    }
    const response = (await connection.call(OFFSET_FOR_LEADER_EPOCH, OFFSET_FOR_LEADER_EPOCH_VERSION, {
      replica_id: this.node_id,
      topics: [{ topic: replica.topic, partitions: [{ partition: replica.partition, current_leader_epoch: replica.epoch, leader_epoch: epoch }] }],
    })) as Row;
    const row = ((response.topics as Row[])[0]?.partitions as Row[] | undefined)?.[0];
    if (!row || (row.error_code as number) !== ErrorCode.NONE) {
      this.request_refresh();
      await sleep(RETRY_BACKOFF_MS);
      return;
    }
    const end_offset = row.end_offset as number;
    const target = end_offset < 0 ? 0 : Math.min(end_offset, log.next_offset);
    if (target < log.next_offset) await this.cut(replica, target);
    replica.needs_truncation = false;
  }

  private async cut(replica: Replica, offset: number): Promise<void> {
    const before = replica.log.next_offset;
    const end = await replica.log.truncate_to(offset);
    this.logger.warn({ partition: replica.name, from: before, to: end, leader: this.leader_id }, 'truncated a divergent tail');
    this.host.on_truncated(replica.log, end);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
