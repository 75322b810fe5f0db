// Delivery: sealed batches go to the partition leader, one batch per partition per Produce request,
// at most `maxInFlightRequests` requests per broker. A partition's batches are never reordered: with
// idempotence up to `maxInFlightRequests` of them may be in flight (the broker checks sequence
// numbers), without it one at a time. After an error the partition stops sending until its
// in-flight batches are answered, then resends the failed ones first, in order, after a backoff.
// Missing leaders are looked up (metadata, with backoff). Batching is producer_accumulator.ts's;
// the numbering of batches and new epochs producer_idempotence.ts's.
import { performance } from 'node:perf_hooks';
import type { BrokerConnection, Cluster } from './cluster.ts';
import { ConnectionError, KafkaProtocolError, SluiceError, is_retriable } from './errors.ts';
import { ErrorCode } from '../protocol/kafka/error_codes.ts';
import { PRODUCE } from '../protocol/kafka/messages/00_produce.ts';
import type { RequestIn, ResponseOf, Row } from '../protocol/kafka/schema.ts';
import type { Accumulator, Batch, PartitionState } from './producer_accumulator.ts';
import type { Idempotence } from './producer_idempotence.ts';
import type { ProducerRetry, ProducerSettings, ProducerStatus } from './producer_shared.ts';

/** Recheck delay when a connection shared with other clients has no free request slot. */
const BUSY_CONNECTION_RETRY_MS = 5;

const LEADER_ERRORS = new Set<number>([
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.LEADER_NOT_AVAILABLE,
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  74 /* FENCED_LEADER_EPOCH */,
  ErrorCode.UNKNOWN_LEADER_EPOCH,
]);

type ProduceRequest = RequestIn<typeof PRODUCE>;
type ProduceResponse = ResponseOf<typeof PRODUCE>;
type PartitionResponse = Row<Row<ProduceResponse['responses']>['partition_responses']>;

/** One broker's request lane. */
interface Lane {
  connection: BrokerConnection | null;
  opening: boolean;
  /** The last connect failure, charged to the batches waiting for this broker. */
  error: unknown;
  in_flight: number;
  /** Rotates the partition the next request starts with, for fairness. */
  cursor: number;
}

interface TopicMetaState {
  pending: boolean;
  failures: number;
  retry_at: number;
}

export class Sender {
  private readonly lanes = new Map<number, Lane>();
  private readonly topic_meta = new Map<string, TopicMetaState>();
  private drain_scheduled = false;
  private wake_timer: NodeJS.Timeout | null = null;
  private wake_at = Infinity;

  constructor(
    private readonly cluster: Cluster,
    private readonly settings: ProducerSettings,
    private readonly status: ProducerStatus,
    private readonly retry: ProducerRetry,
    private readonly accumulator: Accumulator,
    private readonly idempotence: Idempotence,
  ) {}

  schedule_drain(): void {
    if (this.drain_scheduled) return;
    this.drain_scheduled = true;
    setImmediate(() => {
      this.drain_scheduled = false;
      this.drain();
    });
  }

  /** The producer is disconnected: no wake-up is pending any more. */
  stop_timers(): void {
    if (this.wake_timer) clearTimeout(this.wake_timer);
    this.wake_timer = null;
  }

  private wake_in(ms: number): void {
    const at = performance.now() + ms;
    if (this.wake_timer && at >= this.wake_at) return;
    if (this.wake_timer) clearTimeout(this.wake_timer);
    this.wake_at = at;
    this.wake_timer = setTimeout(
      () => {
        this.wake_timer = null;
        this.wake_at = Infinity;
        this.drain();
      },
      Math.max(0, Math.ceil(ms)),
    );
  }

  private due(batch: Batch, now: number): boolean {
    return (
      batch.bytes >= this.settings.batch_bytes ||
      batch.lingered ||
      now - batch.created >= this.settings.linger_ms ||
      this.status.flushing > 0 ||
      this.accumulator.waiting_for_buffer ||
      this.status.state === 'disconnecting'
    );
  }

  private get partition_in_flight_max(): number {
    // Without sequence numbers a retry could overtake a later batch: one at a time.
    return this.idempotence.enabled ? this.settings.max_in_flight : 1;
  }

  /** The leader of the partition from cached metadata, or null (metadata is then requested). */
  private leader_of(state: PartitionState, now: number): number | null {
    const info = this.cluster.topics.get(state.topic);
    const partition = info?.partitions.find((p) => p.partition === state.partition);
    if (partition && partition.leader >= 0) return partition.leader;
    this.request_metadata(state.topic, now);
    return null;
  }

  /** Sends every batch that can go now. Runs on every event that may unblock one. */
  private drain(): void {
    if (this.status.state === 'disconnected') return;
    const now = performance.now();
    const by_node = new Map<number, PartitionState[]>();
    for (const state of this.accumulator.partitions.values()) {
      if (state.recovering) {
        if (state.in_flight.length > 0) continue;
        this.finish_recovery(state, now);
      }
      if (state.identity_pending) continue;
      if (now < state.retry_at) {
        this.wake_in(state.retry_at - now);
        continue;
      }
      if (state.queue.length === 0 && (!state.open || !this.due(state.open, now))) continue;
      if (state.in_flight.length >= this.partition_in_flight_max) continue;
      const leader = this.leader_of(state, now);
      if (leader === null) continue;
      if (state.in_flight.length > 0 && state.in_flight_node !== leader) continue; // let the old leader answer first
      let list = by_node.get(leader);
      if (!list) by_node.set(leader, (list = []));
      list.push(state);
    }
    for (const [node, states] of by_node) this.drain_node(node, states, now);
  }

  private lane(node: number): Lane {
    let lane = this.lanes.get(node);
    if (!lane) {
      lane = { connection: null, opening: false, error: null, in_flight: 0, cursor: 0 };
      this.lanes.set(node, lane);
    }
    return lane;
  }

  /** The head batch of a partition if it can be sent now (sealing the open batch when due). */
  private sendable(state: PartitionState, now: number): Batch | null {
    if (state.recovering || state.identity_pending || now < state.retry_at) return null;
    if (state.in_flight.length >= this.partition_in_flight_max) return null;
    if (state.queue.length === 0 && state.open && this.due(state.open, now)) this.accumulator.seal(state);
    const head = state.queue[0];
    return head && head.encoded ? head : null;
  }

  private drain_node(node: number, states: PartitionState[], now: number): void {
    const lane = this.lane(node);
    if (!lane.connection || lane.connection.closed) {
      lane.connection = null;
      this.open_lane(lane, node, states, now);
      return;
    }
    const connection = lane.connection;
    const lane_max = Math.min(this.settings.max_in_flight, connection.connection.max_in_flight);
    while (lane.in_flight < lane_max) {
      if (connection.connection.in_flight >= connection.connection.max_in_flight) {
        // Another client of this cluster fills the connection: waiting in it could reorder ours.
        this.wake_in(BUSY_CONNECTION_RETRY_MS);
        return;
      }
      const batches: Batch[] = [];
      let bytes = 0;
      let acks: number | null = null;
      const start = lane.cursor++ % states.length;
      for (let i = 0; i < states.length && bytes < this.settings.max_request_bytes; i++) {
        const state = states[(start + i) % states.length]!;
        const batch = this.sendable(state, now);
        if (!batch || (acks !== null && batch.acks !== acks)) continue;
        if (batches.length > 0 && bytes + batch.encoded!.length > this.settings.max_request_bytes) continue;
        acks = batch.acks;
        bytes += batch.encoded!.length;
        batches.push(batch);
      }
      if (batches.length === 0) return;
      for (const batch of batches) this.take(batch, node);
      this.send_request(lane, connection, batches, acks!);
    }
  }

  /**
   * A lane without a connection: opens one, or, when the last attempt failed, charges that
   * failure to the batches waiting for this broker.
   */
  private open_lane(lane: Lane, node: number, states: PartitionState[], now: number): void {
    if (lane.error !== null) {
      const error = lane.error;
      lane.error = null;
      const batches = states
        .map((state) => this.sendable(state, now))
        .filter((batch): batch is Batch => batch !== null);
      for (const batch of batches) this.take(batch, node);
      this.on_request_error(batches, error);
      return;
    }
    if (lane.opening) return;
    lane.opening = true;
    this.cluster
      .node(node)
      .then(
        (connection) => {
          lane.connection = connection;
        },
        (error: unknown) => {
          lane.error = error;
        },
      )
      .finally(() => {
        lane.opening = false;
        this.schedule_drain();
      });
  }

  /** Moves the queue head into flight, numbering it on its first send. */
  private take(batch: Batch, node: number): void {
    const state = batch.partition;
    state.queue.shift();
    state.in_flight.push(batch);
    state.in_flight_node = node;
    this.idempotence.number(batch, state);
  }

  private send_request(lane: Lane, connection: BrokerConnection, batches: Batch[], acks: number): void {
    const topics = new Map<string, Array<{ index: number; records: Buffer }>>();
    let timeout_ms = 0;
    for (const batch of batches) {
      let list = topics.get(batch.partition.topic);
      if (!list) topics.set(batch.partition.topic, (list = []));
      list.push({ index: batch.partition.partition, records: batch.encoded! });
      timeout_ms = Math.max(timeout_ms, batch.timeout_ms);
    }
    const body: ProduceRequest = {
      transactional_id: this.settings.transactional_id,
      acks,
      timeout_ms,
      topic_data: [...topics].map(([name, partition_data]) => ({ name, partition_data })),
    };
    lane.in_flight++;
    if (acks === 0) {
      this.send_unacknowledged(lane, connection, batches, body);
      return;
    }
    let sent: Promise<{ response: ProduceResponse }>;
    try {
      // Written to the socket synchronously, so requests leave in the order they are made here.
      sent = connection.send(PRODUCE, 3, 12, body);
    } catch (error) {
      sent = Promise.reject(error);
    }
    sent
      .then(
        ({ response }) => {
          try {
            this.on_response(batches, response);
          } catch (error) {
            // A malformed answer: whatever it did not settle is treated as a failed request.
            this.on_request_error(
              batches,
              new ConnectionError(`unreadable Produce response: ${String(error)}`, { cause: error }),
            );
          }
        },
        (error: unknown) => this.on_request_error(batches, error),
      )
      .finally(() => {
        lane.in_flight--;
        this.schedule_drain();
      });
  }

  /**
   * acks 0: the broker sends no answer, so a send is done once the socket took the request (its
   * offsets are -1). A refusal shows only as the broker closing the connection, which fails the
   * sends still in flight on it and those that follow until a reconnect.
   */
  private send_unacknowledged(lane: Lane, connection: BrokerConnection, batches: Batch[], body: ProduceRequest): void {
    let sent: Promise<unknown>;
    try {
      sent = connection.send_without_response(PRODUCE, 3, 12, body);
    } catch (error) {
      sent = Promise.reject(error);
    }
    sent
      .then(
        () => {
          for (const batch of batches) this.complete(batch, -1, -1, -1);
        },
        (error: unknown) => this.on_request_error(batches, error),
      )
      .finally(() => {
        lane.in_flight--;
        this.schedule_drain();
      });
  }

  private on_response(batches: Batch[], response: ProduceResponse): void {
    const rows = new Map<string, PartitionResponse>();
    for (const topic of response.responses) {
      for (const partition of topic.partition_responses) rows.set(`${partition.index}:${topic.name}`, partition);
    }
    for (const batch of batches) {
      const state = batch.partition;
      const what = `produce to ${state.topic}-${state.partition}`;
      const row = rows.get(`${state.partition}:${state.topic}`);
      if (!row) {
        this.on_batch_error(
          batch,
          new KafkaProtocolError(ErrorCode.UNKNOWN_SERVER_ERROR, what, 'no answer for the partition'),
        );
        continue;
      }
      const code = row.error_code;
      if (code === ErrorCode.NONE || code === ErrorCode.DUPLICATE_SEQUENCE_NUMBER) {
        this.complete(batch, row.base_offset, row.log_append_time_ms, row.log_start_offset);
      } else {
        this.on_batch_error(batch, new KafkaProtocolError(code, what, row.error_message));
      }
    }
  }

  private on_request_error(batches: Batch[], error: unknown): void {
    const wrapped =
      error instanceof SluiceError
        ? error
        : new ConnectionError(`produce request failed: ${String(error)}`, { cause: error });
    for (const batch of batches) this.on_batch_error(batch, wrapped);
  }

  /** Takes the batch out of flight; false when it was not in flight (already handled). */
  private remove_in_flight(batch: Batch): boolean {
    const list = batch.partition.in_flight;
    const at = list.indexOf(batch);
    if (at < 0) return false;
    list.splice(at, 1);
    return true;
  }

  private complete(batch: Batch, base_offset: number, log_append_time: number, log_start_offset: number): void {
    if (!this.remove_in_flight(batch) || batch.done) return;
    batch.done = true;
    let first = 0;
    for (let run = 0; run < batch.owners.length; run++) {
      const count = batch.owner_counts[run]!;
      const first_offset = base_offset < 0 ? -1 : base_offset + first;
      batch.owners[run]!.ack(batch.partition, first_offset, count, log_append_time, log_start_offset);
      first += count;
    }
    batch.owners = [];
    batch.owner_counts = [];
    batch.encoded = null;
    this.accumulator.release(batch.reserved);
  }

  private on_batch_error(batch: Batch, error: SluiceError): void {
    const state = batch.partition;
    if (!this.remove_in_flight(batch) || batch.done) return;
    const code = error instanceof KafkaProtocolError ? error.code : null;
    batch.last_error = error;
    // Refused only because an earlier batch of the partition failed: resend it after that one.
    if (code === ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER && state.recovering) {
      state.failed.push(batch);
      return;
    }
    state.recovering = true;
    batch.attempts++;
    const exhausted = batch.attempts > this.retry.retries || this.status.state === 'disconnected';
    if (code === ErrorCode.UNKNOWN_PRODUCER_ID && this.idempotence.enabled && !exhausted) {
      // The broker forgot this producer (state expired): start a new epoch and resend.
      state.bump_epoch = true;
      state.failed.push(batch);
      return;
    }
    if (is_retriable(error) && !exhausted) {
      if (code === null || LEADER_ERRORS.has(code)) this.cluster.topics.delete(state.topic); // look the leader up again
      state.failed.push(batch);
      return;
    }
    this.accumulator.fail_batch(batch, error);
  }

  /** Every error of the partition is answered: put failed batches back in front, after a backoff. */
  private finish_recovery(state: PartitionState, now: number): void {
    state.recovering = false;
    const retry = state.failed.sort((a, b) => a.order - b.order);
    state.failed = [];
    if (this.idempotence.new_epoch(state, [...retry, ...state.queue])) this.renew_identity(state);
    state.queue.unshift(...retry);
    const attempts = Math.max(0, ...retry.map((batch) => batch.attempts));
    if (attempts > 0) state.retry_at = now + this.retry.backoff(attempts - 1);
  }

  /** The epoch is exhausted: a new producer id for this partition; its batches fail when none comes. */
  private renew_identity(state: PartitionState): void {
    this.idempotence
      .renew(state)
      .catch((error: unknown) => {
        this.accumulator.abandon(state, [...state.queue, ...(state.open ? [state.open] : [])], error);
      })
      .finally(() => {
        state.identity_pending = false;
        this.schedule_drain();
      });
  }

  /** Refreshes one topic's metadata (once at a time, with backoff); fails its batches when it gives up. */
  private request_metadata(topic: string, now: number): void {
    let meta = this.topic_meta.get(topic);
    if (!meta) this.topic_meta.set(topic, (meta = { pending: false, failures: 0, retry_at: 0 }));
    if (meta.pending) return;
    if (now < meta.retry_at) {
      this.wake_in(meta.retry_at - now);
      return;
    }
    const state_meta = meta;
    state_meta.pending = true;
    this.cluster
      .refresh_metadata([topic], this.settings.allow_auto_topic_creation)
      .then((errors) => this.check_leaders(topic, errors))
      .then(
        () => {
          state_meta.failures = 0;
        },
        (error: unknown) => this.metadata_failed(topic, state_meta, error),
      )
      .finally(() => {
        state_meta.pending = false;
        this.schedule_drain();
      });
  }

  /** Throws unless fresh metadata shows a leader for every partition of `topic` with batches. */
  private check_leaders(topic: string, errors: Map<string, number>): void {
    const code = errors.get(topic);
    if (code !== undefined) throw new KafkaProtocolError(code, `topic ${topic}`);
    const info = this.cluster.topics.get(topic);
    for (const state of this.accumulator.partitions.values()) {
      if (state.topic !== topic || state.idle) continue;
      const partition = info?.partitions.find((p) => p.partition === state.partition);
      const where = `partition ${state.partition} of topic ${topic}`;
      if (!partition) throw new KafkaProtocolError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, where);
      if (partition.leader < 0) throw new KafkaProtocolError(ErrorCode.LEADER_NOT_AVAILABLE, where);
    }
  }

  private metadata_failed(topic: string, meta: TopicMetaState, error: unknown): void {
    meta.failures++;
    meta.retry_at = performance.now() + this.retry.backoff(meta.failures - 1);
    if (!is_retriable(error) || meta.failures > this.retry.retries || this.status.state === 'disconnected') {
      meta.failures = 0;
      meta.retry_at = 0;
      for (const state of this.accumulator.partitions.values()) {
        if (state.topic !== topic) continue;
        this.accumulator.abandon(state, [...state.failed, ...state.queue, ...(state.open ? [state.open] : [])], error);
      }
    }
  }
}
