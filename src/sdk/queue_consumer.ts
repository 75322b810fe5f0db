// The queue consumer: a member of a share group (KIP-932). Many members may read the same
// partitions; each record goes to one of them at a time and is settled on its own:
//   const queue = sluice.queueConsumer({ groupId: 'mailers' });
//   await queue.subscribe({ topics: ['emails'] });
//   await queue.run({ concurrency: 8, eachMessage: async ({ message, deliveryCount }) => send(message) });
// A handler that resolves accepts the record; one that throws releases it (offered again after the
// group's backoff, dead-lettered at the delivery limit); `release({ delayMs, reason })` and
// `reject(reason)` settle explicitly. Acknowledgements ride on the next ShareFetch.
import crypto from 'node:crypto';
import { ErrorCode } from '../protocol/kafka/error_codes.ts';
import { COORDINATOR_KEY_GROUP, find_coordinator } from './find_coordinator.ts';
import { SHARE_GROUP_HEARTBEAT } from '../protocol/kafka/messages/76_share_group_heartbeat.ts';
import { SHARE_FETCH } from '../protocol/kafka/messages/78_share_fetch.ts';
import { SHARE_ACKNOWLEDGE } from '../protocol/kafka/messages/79_share_acknowledge.ts';
import type { RequestIn, ResponseOf, Row } from '../protocol/kafka/schema.ts';
import { Cluster, type BrokerConnection } from './cluster.ts';
import { ConnectionError, KafkaProtocolError, SluiceError, check_code } from './errors.ts';
import { decode_fetched, type KafkaMessage } from './records.ts';

export interface QueueConsumerConfig {
  groupId: string;
  /** How long a ShareFetch waits for records (default 500 ms). */
  maxWaitTimeInMs?: number;
  /** Records acquired per fetch at most (default 500). */
  maxRecords?: number;
  /** Bytes per fetch at most (default 16 MiB). */
  maxBytes?: number;
}

export interface QueueMessagePayload {
  topic: string;
  partition: number;
  message: KafkaMessage;
  /** 1 on the first delivery, raised by each release or lock timeout. */
  deliveryCount: number;
  /** Accept now (also what resolving the handler does). */
  ack(): void;
  /** Offer the record again: after `delayMs`, or the group's backoff; `reason` is kept if it is dead-lettered. */
  release(options?: { delayMs?: number; reason?: string }): void;
  /** Give up on the record: it goes to the dead-letter topic with `reason`. */
  reject(reason?: string): void;
}

export interface QueueRunConfig {
  eachMessage: (payload: QueueMessagePayload) => Promise<void>;
  /** Handlers running at once (default 1). */
  concurrency?: number;
}

const ACK = { accept: 1, release: 2, reject: 3 } as const;
/** The longest reason sent with an acknowledgement. */
const REASON_CHARS_MAX = 1000;
const HEARTBEAT_MS_DEFAULT = 3_000;
/** Waits after a failed fetch or heartbeat before trying again. */
const ERROR_BACKOFF_MS = 200;

interface PendingAck {
  offset: number;
  type: 1 | 2 | 3;
  reason: string | null;
  delay_ms: number;
}

/** The topics of a ShareFetch or ShareAcknowledge request (both declare them with one field). */
type RequestTopic = Row<RequestIn<typeof SHARE_FETCH>['topics']>;
type ForgottenTopic = Row<RequestIn<typeof SHARE_FETCH>['forgotten_topics_data']>;
type HeartbeatAssignment = NonNullable<ResponseOf<typeof SHARE_GROUP_HEARTBEAT>['assignment']>;

/** Acknowledgements of consecutive offsets with the same type, reason and delay. */
interface AckBatch {
  first_offset: number;
  last_offset: number;
  acknowledge_types: number[];
  sluice_failure_reason: string | null;
  sluice_release_delay_ms: number;
}

interface LeaderSession {
  epoch: number;
  /** Partition keys ("topic\0partition") the broker's session holds. */
  partitions: Set<string>;
}

const key_of = (topic: string, partition: number) => `${topic}\u0000${partition}`;

/** A Kafka-style member id: 16 random bytes, base64url. */
function new_member_id(): string {
  return crypto.randomBytes(16).toString('base64url');
}

export class QueueConsumer {
  readonly memberId = new_member_id();
  private readonly group_id: string;
  private topics: string[] = [];
  private member_epoch = 0;
  private heartbeat_ms = HEARTBEAT_MS_DEFAULT;
  /** Assigned partitions by topic name. */
  private assignment = new Map<string, number[]>();
  private readonly sessions = new Map<number, LeaderSession>();
  /** Settled offsets not yet sent, by partition key. */
  private readonly acks = new Map<string, PendingAck[]>();
  private running = false;
  private loop: Promise<void> | null = null;
  private heartbeat_timer: NodeJS.Timeout | null = null;
  private coordinator_cluster: Cluster | null = null;
  private joined: { resolve: () => void; reject: (error: unknown) => void } | null = null;
  private heartbeat_chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly cluster: Cluster,
    private readonly config: QueueConsumerConfig,
  ) {
    if (typeof config.groupId !== 'string' || config.groupId === '') {
      throw new TypeError('queueConsumer: groupId must be a non-empty string');
    }
    this.group_id = config.groupId;
  }

  async connect(): Promise<void> {
    await this.cluster.any();
  }

  async subscribe(options: { topics: string[] }): Promise<void> {
    if (this.running) throw new SluiceError('subscribe before run()', false);
    this.topics = [...new Set([...this.topics, ...options.topics])];
    for (const topic of options.topics) await this.cluster.topic(topic);
  }

  /** Joins the group and starts fetching; resolves once the first assignment has arrived. */
  async run(config: QueueRunConfig): Promise<void> {
    if (this.running) throw new SluiceError('run() was called already', false);
    if (this.topics.length === 0) throw new SluiceError('subscribe to at least one topic before run()', false);
    const concurrency = Math.max(1, Math.floor(config.concurrency ?? 1));
    this.running = true;
    const joined = new Promise<void>((resolve, reject) => (this.joined = { resolve, reject }));
    this.schedule_heartbeat(0);
    this.loop = this.fetch_loop(config.eachMessage, concurrency);
    await joined;
  }

  /** Stops fetching, lets running handlers finish, sends their acknowledgements and leaves the group. */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    await this.loop;
    if (this.heartbeat_timer) clearTimeout(this.heartbeat_timer);
    await this.heartbeat_chain;
    await this.close_sessions().catch(() => undefined);
    await this.heartbeat(-1).catch(() => undefined);
  }

  async disconnect(): Promise<void> {
    await this.stop();
    await this.coordinator_cluster?.close();
    this.coordinator_cluster = null;
  }

  // ---------------------------------------------------------------- membership

  private schedule_heartbeat(delay_ms: number): void {
    if (!this.running) return;
    this.heartbeat_timer = setTimeout(() => {
      this.heartbeat_chain = this.heartbeat_chain
        .then(() => this.heartbeat(this.member_epoch))
        .then(
          () => this.schedule_heartbeat(this.heartbeat_ms),
          (error: unknown) => {
            if (this.joined && !(error instanceof ConnectionError)) {
              this.joined.reject(error);
              this.joined = null;
              this.running = false;
              return;
            }
            this.schedule_heartbeat(ERROR_BACKOFF_MS);
          },
        );
    }, delay_ms);
    this.heartbeat_timer.unref();
  }

  private async heartbeat(epoch: number): Promise<void> {
    let response: ResponseOf<typeof SHARE_GROUP_HEARTBEAT>;
    try {
      const connection = await this.coordinator();
      ({ response } = await connection.send(SHARE_GROUP_HEARTBEAT, 1, 1, {
        group_id: this.group_id,
        member_id: this.memberId,
        member_epoch: epoch,
        rack_id: null,
        subscribed_topic_names: epoch === 0 || epoch === -1 ? this.topics : null,
      }));
    } catch (error) {
      if (error instanceof ConnectionError) await this.forget_coordinator();
      throw error;
    }
    const code = response.error_code;
    if (epoch === -1) return;
    if (
      code === ErrorCode.NOT_COORDINATOR ||
      code === ErrorCode.COORDINATOR_NOT_AVAILABLE ||
      code === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
    ) {
      await this.forget_coordinator(); // it moved (a leader change in a cluster): find it again
      this.heartbeat_ms = ERROR_BACKOFF_MS;
      return;
    }
    if (code === ErrorCode.UNKNOWN_MEMBER_ID || code === ErrorCode.FENCED_MEMBER_EPOCH) {
      this.member_epoch = 0; // the broker forgot us (a restart, a session timeout): join again
      this.heartbeat_ms = 0;
      return;
    }
    check_code(code, `ShareGroupHeartbeat for ${this.group_id}`, response.error_message);
    this.member_epoch = response.member_epoch;
    this.heartbeat_ms = Math.max(100, response.heartbeat_interval_ms);
    const assignment = response.assignment;
    if (assignment) await this.set_assignment(assignment.topic_partitions);
    if (this.joined) {
      this.joined.resolve();
      this.joined = null;
    }
  }

  private async set_assignment(topic_partitions: HeartbeatAssignment['topic_partitions']): Promise<void> {
    const by_id = new Map<string, string>();
    const unknown = topic_partitions.filter(
      (t) => ![...this.cluster.topics.values()].some((info) => info.topic_id === t.topic_id),
    );
    if (unknown.length > 0) await this.cluster.refresh_metadata(this.topics);
    for (const info of this.cluster.topics.values()) by_id.set(info.topic_id, info.name);
    const assignment = new Map<string, number[]>();
    for (const { topic_id, partitions } of topic_partitions) {
      const name = by_id.get(topic_id);
      if (name) {
        assignment.set(
          name,
          [...partitions].sort((a, b) => a - b),
        );
      }
    }
    this.assignment = assignment;
  }

  private async coordinator(): Promise<BrokerConnection> {
    if (!this.coordinator_cluster) {
      const { host, port } = await this.cluster.with_retry('FindCoordinator', async () =>
        find_coordinator(await this.cluster.any(), this.group_id, COORDINATOR_KEY_GROUP),
      );
      this.coordinator_cluster = new Cluster({ ...this.cluster.options, brokers: [`${host}:${port}`] });
    }
    return this.coordinator_cluster.any();
  }

  private async forget_coordinator(): Promise<void> {
    const cluster = this.coordinator_cluster;
    this.coordinator_cluster = null;
    await cluster?.close();
  }

  // ---------------------------------------------------------------- fetching and handling

  private async fetch_loop(each_message: QueueRunConfig['eachMessage'], concurrency: number): Promise<void> {
    while (this.running) {
      if (this.member_epoch <= 0 || this.assignment.size === 0) {
        await sleep(50);
        continue;
      }
      try {
        const payloads = await this.fetch_round();
        await run_pool(payloads, concurrency, each_message);
      } catch (error) {
        if (!this.running) break;
        if (
          error instanceof KafkaProtocolError &&
          (error.code === ErrorCode.SHARE_SESSION_NOT_FOUND || error.code === ErrorCode.INVALID_SHARE_SESSION_EPOCH)
        ) {
          this.sessions.clear();
        } else if (error instanceof KafkaProtocolError && error.code === ErrorCode.UNKNOWN_MEMBER_ID) {
          this.member_epoch = 0;
        }
        await sleep(ERROR_BACKOFF_MS);
      }
    }
  }

  /**
   * One ShareFetch to the group's coordinator, carrying pending acknowledgements; the payloads to
   * handle. Sluice keeps every share partition's state at the coordinator (which reads its own
   * replicas), so share requests go there rather than to each partition's leader.
   */
  private async fetch_round(): Promise<QueuePayloadWork[]> {
    const partitions: Array<{ topic: string; partition: number }> = [];
    for (const [topic, list] of this.assignment) for (const partition of list) partitions.push({ topic, partition });
    return this.fetch_from(partitions);
  }

  private async fetch_from(partitions: Array<{ topic: string; partition: number }>): Promise<QueuePayloadWork[]> {
    let connection: BrokerConnection;
    try {
      connection = await this.coordinator();
    } catch (error) {
      if (error instanceof ConnectionError) await this.forget_coordinator();
      throw error;
    }
    let session = this.sessions.get(COORDINATOR_SESSION);
    if (!session) {
      session = { epoch: 0, partitions: new Set() };
      this.sessions.set(COORDINATOR_SESSION, session);
    }
    const wanted = new Set(partitions.map((p) => key_of(p.topic, p.partition)));
    const added = partitions.filter((p) => !session.partitions.has(key_of(p.topic, p.partition)));
    const forgotten = [...session.partitions].filter((k) => !wanted.has(k)).map(split_key);
    const acks = this.take_acks(wanted);
    const topics = await this.request_topics(
      [...added, ...acks.keys()].map((k) => (typeof k === 'string' ? split_key(k) : k)),
      acks,
    );
    let response: ResponseOf<typeof SHARE_FETCH>;
    try {
      ({ response } = await connection.send(SHARE_FETCH, 1, 1, {
        group_id: this.group_id,
        member_id: this.memberId,
        share_session_epoch: session.epoch,
        max_wait_ms: this.config.maxWaitTimeInMs ?? 500,
        min_bytes: 1,
        max_bytes: this.config.maxBytes ?? 16 * 1024 * 1024,
        max_records: this.config.maxRecords ?? 500,
        batch_size: this.config.maxRecords ?? 500,
        topics,
        forgotten_topics_data: await this.forgotten_data(forgotten),
      }));
    } catch (error) {
      if (error instanceof ConnectionError) await this.forget_coordinator();
      this.sessions.delete(COORDINATOR_SESSION);
      throw error;
    }
    const code = response.error_code;
    if (code !== ErrorCode.NONE) {
      this.sessions.delete(COORDINATOR_SESSION);
      if (code === ErrorCode.NOT_COORDINATOR || code === ErrorCode.COORDINATOR_NOT_AVAILABLE) {
        await this.forget_coordinator();
      }
      throw new KafkaProtocolError(code, `ShareFetch for ${this.group_id}`, response.error_message);
    }
    session.epoch = session.epoch === 0x7fffffff ? 1 : session.epoch + 1;
    for (const p of added) session.partitions.add(key_of(p.topic, p.partition));
    for (const p of forgotten) session.partitions.delete(key_of(p.topic, p.partition));
    const names = new Map<string, string>();
    for (const info of this.cluster.topics.values()) names.set(info.topic_id, info.name);
    // A partition answered with an error may have left the broker's session: the next fetch
    // names it again rather than waiting on records the broker no longer fetches for it.
    for (const t of response.responses) {
      const topic = names.get(t.topic_id);
      for (const p of t.partitions) {
        if (topic && p.error_code !== ErrorCode.NONE) session.partitions.delete(key_of(topic, p.partition_index));
      }
    }
    return this.payloads_of(response, names);
  }

  private async payloads_of(
    response: ResponseOf<typeof SHARE_FETCH>,
    names: Map<string, string>,
  ): Promise<QueuePayloadWork[]> {
    const work: QueuePayloadWork[] = [];
    for (const t of response.responses) {
      const topic = names.get(t.topic_id);
      if (!topic) continue;
      for (const p of t.partitions) {
        const partition = p.partition_index;
        const acquired = p.acquired_records;
        if (acquired.length === 0) continue;
        const { messages } = await decode_fetched(p.records, acquired[0]!.first_offset);
        for (const message of messages) {
          const offset = Number(message.offset);
          const range = acquired.find((r) => offset >= r.first_offset && offset <= r.last_offset);
          if (range) work.push(this.payload(topic, partition, message, range.delivery_count));
        }
      }
    }
    return work;
  }

  private payload(topic: string, partition: number, message: KafkaMessage, delivery_count: number): QueuePayloadWork {
    let settled = false;
    const settle = (type: 1 | 2 | 3, reason: string | null, delay_ms: number) => {
      if (settled) return;
      settled = true;
      const key = key_of(topic, partition);
      let list = this.acks.get(key);
      if (!list) this.acks.set(key, (list = []));
      list.push({
        offset: Number(message.offset),
        type,
        reason: reason === null ? null : reason.slice(0, REASON_CHARS_MAX),
        delay_ms,
      });
    };
    return {
      payload: {
        topic,
        partition,
        message,
        deliveryCount: delivery_count,
        ack: () => settle(ACK.accept, null, -1),
        release: (options) =>
          settle(ACK.release, options?.reason ?? null, Math.max(-1, Math.floor(options?.delayMs ?? -1))),
        reject: (reason) => settle(ACK.reject, reason ?? 'rejected by the consumer', -1),
      },
      done: (error) =>
        error === null
          ? settle(ACK.accept, null, -1)
          : settle(ACK.release, error instanceof Error ? error.message : String(error), -1),
    };
  }

  /** Pending acknowledgements of these partitions, as protocol batches; removed from the queue. */
  private take_acks(partitions: Set<string>): Map<string, AckBatch[]> {
    const out = new Map<string, AckBatch[]>();
    for (const [key, list] of this.acks) {
      if (!partitions.has(key) || list.length === 0) continue;
      this.acks.delete(key);
      out.set(key, ack_batches(list));
    }
    return out;
  }

  private async request_topics(
    partitions: Array<{ topic: string; partition: number }>,
    acks: Map<string, AckBatch[]>,
  ): Promise<RequestTopic[]> {
    const by_topic = new Map<string, Map<number, Row<RequestTopic['partitions']>>>();
    for (const { topic, partition } of partitions) {
      if (!by_topic.has(topic)) by_topic.set(topic, new Map());
      by_topic.get(topic)!.set(partition, {
        partition_index: partition,
        acknowledgement_batches: acks.get(key_of(topic, partition)) ?? [],
      });
    }
    const topics: RequestTopic[] = [];
    for (const [topic, entries] of by_topic) {
      topics.push({ topic_id: (await this.cluster.topic(topic)).topic_id, partitions: [...entries.values()] });
    }
    return topics;
  }

  private async forgotten_data(partitions: Array<{ topic: string; partition: number }>): Promise<ForgottenTopic[]> {
    const by_topic = new Map<string, number[]>();
    for (const { topic, partition } of partitions) {
      if (!by_topic.has(topic)) by_topic.set(topic, []);
      by_topic.get(topic)!.push(partition);
    }
    const out: ForgottenTopic[] = [];
    for (const [topic, list] of by_topic) {
      const info = this.cluster.topics.get(topic);
      if (info) out.push({ topic_id: info.topic_id, partitions: list });
    }
    return out;
  }

  /** Sends what is left to acknowledge and closes every share session (epoch -1). */
  private async close_sessions(): Promise<void> {
    for (const session of this.sessions.values()) {
      const acks = this.take_acks(session.partitions);
      if (session.epoch === 0) continue;
      const connection = await this.coordinator();
      const topics = await this.request_topics([...acks.keys()].map(split_key), acks);
      const { response } = await connection.send(SHARE_ACKNOWLEDGE, 1, 1, {
        group_id: this.group_id,
        member_id: this.memberId,
        share_session_epoch: -1,
        topics,
      });
      check_code(response.error_code, `ShareAcknowledge for ${this.group_id}`, response.error_message);
    }
    this.sessions.clear();
  }
}

/** The share session with the coordinator (the sessions map is keyed by broker). */
const COORDINATOR_SESSION = -1;

interface QueuePayloadWork {
  payload: QueueMessagePayload;
  /** Settles by the handler's outcome unless the handler settled explicitly. */
  done(error: unknown): void;
}

/** Runs handlers with at most `concurrency` at once; each outcome settles its record. */
async function run_pool(
  work: QueuePayloadWork[],
  concurrency: number,
  handler: QueueRunConfig['eachMessage'],
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < work.length) {
      const item = work[next++]!;
      try {
        await handler(item.payload);
        item.done(null);
      } catch (error) {
        item.done(error ?? new Error('handler failed'));
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, work.length) }, worker));
}

/** Consecutive offsets with the same type, reason and delay as one batch each. */
function ack_batches(list: PendingAck[]): AckBatch[] {
  const sorted = [...list].sort((a, b) => a.offset - b.offset);
  const batches: AckBatch[] = [];
  let current: AckBatch | null = null;
  for (const ack of sorted) {
    if (
      current &&
      current.last_offset === ack.offset - 1 &&
      current.acknowledge_types[0] === ack.type &&
      current.sluice_failure_reason === ack.reason &&
      current.sluice_release_delay_ms === ack.delay_ms
    ) {
      current.last_offset = ack.offset;
      continue;
    }
    current = {
      first_offset: ack.offset,
      last_offset: ack.offset,
      acknowledge_types: [ack.type],
      sluice_failure_reason: ack.reason,
      sluice_release_delay_ms: ack.delay_ms,
    };
    batches.push(current);
  }
  return batches;
}

function split_key(key: string): { topic: string; partition: number } {
  const at = key.lastIndexOf('\u0000');
  return { topic: key.slice(0, at), partition: Number(key.slice(at + 1)) };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
