// The consumer's reads: starting positions (a seek, the committed offset, or earliest/latest by
// ListOffsets), then rounds of one Fetch per partition leader (isolation level read_committed
// unless `readUncommitted`), decoded into messages and handed to the runner (consumer_runner.ts).
// While a response is decoded and its handlers run, the next round's Fetch is already on its
// way, from the offsets the response's batch headers show. Commits are consumer_committer.ts's;
// which partitions are assigned is decided by consumer.ts and consumer_group.ts.
import type { TopicInfo } from './cluster.ts';
import { ConnectionError, KafkaProtocolError, check_code } from './errors.ts';
import { decode_fetched, next_fetch_offset } from './records.ts';
import { EARLIEST, LATEST, group_by, key_of, type ConsumerContext, type PartitionState } from './consumer_state.ts';
import type { OffsetCommitter } from './consumer_committer.ts';
import { PartitionPool, type OrderedRound, type Runner } from './consumer_runner.ts';
import type { ResponseOf, Row } from '../protocol/kafka/schema.ts';
import { ErrorCode } from '../protocol/kafka/error_codes.ts';
import { FETCH } from '../protocol/kafka/messages/01_fetch.ts';
import { FetchSession, SESSION_ERRORS, type SessionFetchPartition, type SessionRequest } from './fetch_session.ts';
import { LIST_OFFSETS } from '../protocol/kafka/messages/02_list_offsets.ts';

/** Fetch and ListOffsets errors cured by fresh metadata. */
const METADATA_CODES = new Set<number>([
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.LEADER_NOT_AVAILABLE,
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.UNKNOWN_LEADER_EPOCH,
  74, // FENCED_LEADER_EPOCH
  ErrorCode.KAFKA_STORAGE_ERROR,
  ErrorCode.UNKNOWN_TOPIC_ID,
]);

type FetchResponse = ResponseOf<typeof FETCH>;

/** A Fetch outside any session: every partition named. */
const sessionless = (wanted: SessionFetchPartition[]): SessionRequest => ({
  session_id: 0,
  session_epoch: -1,
  named: wanted,
  forgotten: [],
});
type FetchedPartition = Row<Row<FetchResponse['responses']>['partitions']>;

/** A partition in a Fetch: its state, the offset asked for and the state's epoch at the time. */
interface FetchSnapshotEntry {
  state: PartitionState;
  offset: number;
  epoch: number;
}

/** A Fetch sent, with the session fields it carried. */
interface SentFetch {
  response: FetchResponse;
  session: SessionRequest;
}

/** The Fetch sent to a leader for the next round while the current round's handlers ran. */
interface Prefetch {
  snapshot: Map<string, FetchSnapshotEntry>;
  response: Promise<SentFetch>;
}

/** What one fetch round collects across its leaders. */
interface Round {
  pool: PartitionPool;
  ordered: OrderedRound | null;
  jobs: Array<Promise<void>>;
  metadata_stale: boolean;
}

/**
 * Where each partition of `snapshot` fetches next if the response is taken as it is (one an
 * incremental answer leaves out stays where it is); null when that cannot be known now (an error).
 */
function predict_next(
  response: FetchResponse,
  snapshot: Map<string, FetchSnapshotEntry>,
): Map<string, FetchSnapshotEntry> | null {
  const next = new Map<string, FetchSnapshotEntry>(snapshot);
  for (const topic of response.responses) {
    for (const partition of topic.partitions) {
      const entry = snapshot.get(key_of(topic.topic, partition.partition_index));
      if (!entry) continue;
      if (partition.error_code !== ErrorCode.NONE) return null;
      const offset = next_fetch_offset(partition.records, entry.offset);
      next.set(entry.state.key, { state: entry.state, offset, epoch: entry.epoch });
    }
  }
  return next;
}

export class Fetcher {
  /** Per partition leader: the Fetch sent for the next round while the current round's handlers ran. */
  private prefetched = new Map<number, Prefetch>();
  /** Per partition leader: the fetch session (KIP-227). */
  private readonly sessions = new Map<number, FetchSession>();

  constructor(
    private readonly ctx: ConsumerContext,
    private readonly committer: OffsetCommitter,
    private readonly runner: Runner,
  ) {}

  /** Drops the prefetched responses (the assignment changes or the consumer stops). */
  clear_prefetched(): void {
    this.prefetched.clear();
  }

  // ---------------------------------------------------------------- positions

  /** Positions for assigned partitions without one: seek, committed offset, or earliest/latest. */
  async resolve_positions(): Promise<void> {
    const ctx = this.ctx;
    const unknown = [...ctx.assignment.values()].filter((s) => s.position === null);
    if (unknown.length === 0) return;
    const epochs = new Map(unknown.map((s) => [s, s.epoch]));
    const current = (s: PartitionState) =>
      ctx.assignment.get(s.key) === s && s.epoch === epochs.get(s) && s.position === null;
    const need_committed = ctx.group_id ? unknown.filter((s) => s.reset === null) : [];
    if (need_committed.length > 0) {
      const committed = await this.committer.fetch_committed(need_committed);
      for (const state of need_committed) {
        if (!current(state)) continue;
        const offset = committed.get(state.key) ?? -1;
        if (offset >= 0) {
          state.position = offset;
          state.committed = offset;
        } else state.reset = ctx.default_reset(state.topic);
      }
    }
    const to_list = unknown.filter((s) => current(s));
    for (const state of to_list) state.reset ??= ctx.default_reset(state.topic);
    if (to_list.length === 0) return;
    const offsets = await this.list_offsets(
      to_list.map((s) => ({
        topic: s.topic,
        partition: s.partition,
        timestamp: s.reset === 'earliest' ? EARLIEST : LATEST,
      })),
    );
    for (const state of to_list) {
      const offset = offsets.get(state.key);
      if (!current(state) || offset === undefined || offset < 0) continue;
      state.position = offset;
      state.reset = null;
      if (state.commit_on_resolve) {
        state.resolved = offset;
        state.commit_on_resolve = false;
      }
    }
  }

  private async leader_of(topic: string, partition: number): Promise<number> {
    const leader = await this.leader_or_none(topic, partition);
    if (leader < 0) throw new KafkaProtocolError(ErrorCode.LEADER_NOT_AVAILABLE, `partition ${topic}/${partition}`);
    return leader;
  }

  /**
   * The partition's leader, from metadata fetched again when the cache has the partition without
   * one (a leader being elected): -1 while there is none.
   */
  private async leader_or_none(topic: string, partition: number): Promise<number> {
    const cluster = this.ctx.cluster;
    const leader_in = (info: TopicInfo | undefined) =>
      info?.partitions.find((p) => p.partition === partition)?.leader ?? -1;
    const cached = leader_in(cluster.topics.get(topic));
    if (cached >= 0) return cached;
    cluster.topics.delete(topic);
    return leader_in(await cluster.topic(topic));
  }

  /** ListOffsets (by leader): the offset for each timestamp (-2 earliest, -1 latest); -1 when none. */
  async list_offsets(
    requests: Array<{ topic: string; partition: number; timestamp: number }>,
  ): Promise<Map<string, number>> {
    const cluster = this.ctx.cluster;
    return cluster.with_retry('ListOffsets', async () => {
      const out = new Map<string, number>();
      const with_leaders = await Promise.all(
        requests.map(async (r) => ({ ...r, leader: await this.leader_of(r.topic, r.partition) })),
      );
      await Promise.all(
        [...group_by(with_leaders, (r) => String(r.leader))].map(async ([leader, list]) => {
          const connection = await cluster.node(Number(leader));
          const { response } = await connection.send(LIST_OFFSETS, 1, 6, {
            replica_id: -1,
            isolation_level: this.ctx.config.readUncommitted ? 0 : 1,
            topics: [...group_by(list, (r) => r.topic)].map(([name, parts]) => ({
              name,
              partitions: parts.map((r) => ({
                partition_index: r.partition,
                current_leader_epoch: -1,
                timestamp: r.timestamp,
              })),
            })),
            timeout_ms: cluster.options.request_timeout_ms,
          });
          for (const topic of response.topics) {
            for (const partition of topic.partitions) {
              check_code(partition.error_code, `ListOffsets ${topic.name}/${partition.partition_index}`);
              out.set(key_of(topic.name, partition.partition_index), partition.offset);
            }
          }
        }),
      );
      return out;
    });
  }

  // ---------------------------------------------------------------- fetching

  /** One round: a Fetch per leader, the fetched partitions handed to the handlers, all awaited. */
  async fetch_round(): Promise<void> {
    const ctx = this.ctx;
    const run = ctx.run_config!;
    // Prefetches of the previous round that no longer match what this round fetches are dropped.
    const prefetched = this.prefetched;
    this.prefetched = new Map();
    const fetchable = [...ctx.assignment.values()].filter((s) => s.position !== null && !ctx.is_paused(s));
    if (fetchable.length === 0) {
      await ctx.wakeup.wait(ctx.config.maxWaitTimeInMs);
      return;
    }
    const by_leader = new Map<number, PartitionState[]>();
    for (const state of fetchable) {
      // A partition without a leader waits for the next round; the others are fetched (a cached
      // leaderless partition held every partition back until the metadata max age: seed 4343).
      const leader = await this.leader_or_none(state.topic, state.partition);
      if (leader < 0) continue;
      const list = by_leader.get(leader);
      if (list) list.push(state);
      else by_leader.set(leader, [state]);
    }
    if (by_leader.size === 0) {
      await ctx.wakeup.wait(ctx.config.maxWaitTimeInMs);
      return;
    }
    const round: Round = {
      // Partitions handed to the handlers, at most partitionsConsumedConcurrently at once.
      pool: new PartitionPool(run.partitionsConsumedConcurrently),
      ordered: run.ordered ? this.runner.ordered_round(run) : null,
      jobs: [],
      metadata_stale: false,
    };
    const fetches = [...by_leader].map(([leader, states]) => this.fetch_from(leader, states, prefetched, round));
    const fetch_results = await Promise.allSettled(fetches);
    if (round.ordered) round.jobs.push(round.ordered.finish());
    const job_results = await Promise.allSettled(round.jobs);
    const failure = [...fetch_results, ...job_results].find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failure) {
      if (failure.reason instanceof ConnectionError) ctx.cluster.topics.clear();
      throw failure.reason;
    }
    if (round.metadata_stale) await ctx.wakeup.wait(ctx.cluster.options.retry.initial_retry_ms);
  }

  /** The Fetch of one leader's partitions (or its prefetch), handed over partition by partition. */
  private async fetch_from(
    leader: number,
    states: PartitionState[],
    prefetched: Map<number, Prefetch>,
    round: Round,
  ): Promise<void> {
    const ctx = this.ctx;
    const snapshot = new Map(states.map((s) => [s.key, { state: s, offset: s.position!, epoch: s.epoch }]));
    const earlier = prefetched.get(leader);
    prefetched.delete(leader);
    const sent =
      earlier && this.prefetch_matches(earlier.snapshot, snapshot)
        ? await earlier.response
        : await this.send_fetch(leader, states, snapshot);
    const response = sent.response;
    this.session_of(leader).answered(response, sent.session);
    // A session the broker no longer knows (or an epoch out of step): the next round opens another.
    if (SESSION_ERRORS.has(response.error_code)) return;
    check_code(response.error_code, `Fetch from broker ${leader}`);
    // The next round is fetched from this broker before this one is decoded and handled, from the
    // offsets read off the batch headers. It is used when every partition ends the round where
    // predicted (no error, seek, pause, failure, rebalance or leader change).
    const next = ctx.running && !ctx.needs_rejoin ? predict_next(response, snapshot) : null;
    let ahead: Prefetch | null = null;
    if (next) {
      ahead = {
        snapshot: next,
        response: this.send_fetch(
          leader,
          [...next.values()].map((e) => e.state),
          next,
        ),
      };
      ahead.response.catch(() => {}); // a dropped prefetch's failure is nobody's concern; a used one's is rethrown
      this.prefetched.set(leader, ahead);
    }
    let as_predicted = ahead !== null;
    for (const topic of response.responses) {
      for (const partition of topic.partitions) {
        const key = key_of(topic.topic, partition.partition_index);
        const entry = snapshot.get(key);
        if (!entry) continue;
        const taken = await this.take_partition(entry, partition, round);
        if (taken === null || taken.offset !== next?.get(key)?.offset) as_predicted = false;
      }
    }
    if (!as_predicted && ahead && this.prefetched.get(leader) === ahead) this.prefetched.delete(leader);
  }

  /**
   * One fetched partition: an error handled, or its messages decoded and handed to the handlers.
   * Returns where the partition's next fetch starts, or null when it cannot be predicted.
   */
  private async take_partition(
    entry: FetchSnapshotEntry,
    partition: FetchedPartition,
    round: Round,
  ): Promise<FetchSnapshotEntry | null> {
    const ctx = this.ctx;
    const { state, offset, epoch } = entry;
    const stale = () => ctx.assignment.get(state.key) !== state || state.epoch !== epoch;
    if (stale()) return null;
    const code = partition.error_code;
    if (code === ErrorCode.OFFSET_OUT_OF_RANGE) {
      state.position = null;
      state.reset = ctx.default_reset(state.topic);
      state.done_ahead.clear();
      return null;
    }
    if (METADATA_CODES.has(code)) {
      ctx.cluster.topics.delete(state.topic);
      round.metadata_stale = true;
      return null;
    }
    check_code(code, `Fetch ${state.topic}/${state.partition}`);
    const fetched = await decode_fetched(partition.records, offset, {
      aborted_transactions: ctx.config.readUncommitted ? null : partition.aborted_transactions,
    });
    if (stale()) return null;
    const high_watermark = String(partition.high_watermark);
    const predicted = { state, offset: fetched.next_offset, epoch };
    if (fetched.messages.length === 0) {
      state.position = fetched.next_offset; // control batches, aborted records or nothing
      return predicted;
    }
    if (round.ordered) round.ordered.submit(state, epoch, offset, fetched.messages, fetched.next_offset);
    else {
      round.jobs.push(
        round.pool.run(() => this.runner.process(state, epoch, fetched.messages, fetched.next_offset, high_watermark)),
      );
    }
    return predicted;
  }

  private session_of(leader: number): FetchSession {
    let session = this.sessions.get(leader);
    if (!session) this.sessions.set(leader, (session = new FetchSession()));
    return session;
  }

  /**
   * Sends one Fetch to `leader` for `states`, each from the offset in `snapshot`: within the
   * leader's fetch session (naming only what changed) unless `fetchSessions` is false.
   */
  private async send_fetch(
    leader: number,
    states: PartitionState[],
    snapshot: Map<string, FetchSnapshotEntry>,
  ): Promise<SentFetch> {
    const config = this.ctx.config;
    const connection = await this.ctx.cluster.node(leader);
    const wanted = states.map((s) => ({
      key: s.key,
      topic: s.topic,
      partition: s.partition,
      offset: snapshot.get(s.key)!.offset,
    }));
    const session = this.session_of(leader);
    const request = config.fetchSessions === false ? sessionless(wanted) : session.request(wanted, connection);
    try {
      const { response } = await connection.send(FETCH, 4, 12, {
        replica_id: -1,
        max_wait_ms: config.maxWaitTimeInMs,
        min_bytes: config.minBytes,
        max_bytes: config.maxBytes,
        isolation_level: config.readUncommitted ? 0 : 1,
        session_id: request.session_id,
        session_epoch: request.session_epoch,
        topics: [...group_by(request.named, (p) => p.topic)].map(([topic, list]) => ({
          topic,
          partitions: list.map((p) => ({
            partition: p.partition,
            current_leader_epoch: -1,
            fetch_offset: p.offset,
            last_fetched_epoch: -1,
            log_start_offset: -1,
            partition_max_bytes: config.maxBytesPerPartition,
          })),
        })),
        forgotten_topics_data: request.forgotten,
        rack_id: config.rackId ?? '',
      });
      return { response, session: request };
    } catch (error) {
      session.reset(null); // the broker may or may not have seen it: its session is unknown now
      throw error;
    }
  }

  /**
   * A prefetch serves this round when it asked for exactly these partitions, from their positions
   * now, in the same epochs.
   */
  private prefetch_matches(ahead: Map<string, FetchSnapshotEntry>, now: Map<string, FetchSnapshotEntry>): boolean {
    if (ahead.size !== now.size) return false;
    for (const [key, entry] of now) {
      const predicted = ahead.get(key);
      if (
        !predicted ||
        predicted.state !== entry.state ||
        predicted.offset !== entry.offset ||
        predicted.epoch !== entry.epoch
      ) {
        return false;
      }
    }
    return true;
  }
}
