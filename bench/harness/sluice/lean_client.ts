// The project's own lean Kafka client, built on Sluice's protocol codecs (no kafkajs): one TCP
// connection per producer with pipelined requests (a bounded number in flight, matched to
// responses by correlation id, responses read by frame), a producer that sends one uncompressed
// record batch per partition per request, and a consumer that counts records from batch headers
// without decoding them. Written for the benchmarks; it is the seed of the SDK's low-level client.
//
// Every wait is bounded: connects, each request (request_timeout_ms), and every run (time_limit_ms).
import { performance } from 'node:perf_hooks';
import { ErrorCode } from '../../../src/protocol/kafka/error_codes.ts';
import { Connection, prepare, type PreparedRequest } from '../../../src/protocol/kafka/client_connection.ts';
import type { ResponseOf } from '../../../src/protocol/kafka/schema.ts';
import { PRODUCE } from '../../../src/protocol/kafka/messages/00_produce.ts';
import { FETCH } from '../../../src/protocol/kafka/messages/01_fetch.ts';
import { LIST_OFFSETS } from '../../../src/protocol/kafka/messages/02_list_offsets.ts';
import { CREATE_TOPICS } from '../../../src/protocol/kafka/messages/19_create_topics.ts';
import { encode_record_batch, type BatchRecord } from '../../../src/protocol/record_batch.ts';
import {
  ATTRIBUTE_CONTROL,
  BATCH_HEADER_BYTES,
  batch_attributes,
  batch_last_offset,
  batch_records_count,
  batch_size_at,
} from '../../../src/format/batch_layout.ts';
import { varint_size } from '../../../src/format/record_reader.ts';

export { Connection, prepare, type PreparedRequest };

export const VERSIONS = { produce: 9, fetch: 12, list_offsets: 5, create_topics: 5 } as const;

const ERROR_NAMES = new Map<number, string>(Object.entries(ErrorCode).map(([name, code]) => [code, name]));

export class KafkaError extends Error {
  constructor(
    readonly what: string,
    readonly error_code: number,
    detail?: string | null,
  ) {
    super(`${what}: ${ERROR_NAMES.get(error_code) ?? 'error'} (${error_code})${detail ? `: ${detail}` : ''}`);
    this.name = 'KafkaError';
  }
}

// ------------------------------------------------------------------ admin

/** Creates a topic (CreateTopics v5); fails on any error, including "already exists". */
export async function create_topic(connection: Connection, topic: string, partitions: number): Promise<void> {
  const response = await connection.call(CREATE_TOPICS, VERSIONS.create_topics, {
    topics: [{ name: topic, num_partitions: partitions, replication_factor: 1, assignments: [], configs: [] }],
    timeout_ms: 30_000,
    validate_only: false,
  });
  for (const row of response.topics) {
    if (row.error_code !== ErrorCode.NONE)
      throw new KafkaError(`create topic ${topic}`, row.error_code, row.error_message);
  }
}

/** The end offset (next offset) of each partition, via ListOffsets with timestamp -1. */
export async function end_offsets(connection: Connection, topic: string, partitions: number): Promise<number[]> {
  const response = await connection.call(LIST_OFFSETS, VERSIONS.list_offsets, {
    replica_id: -1,
    isolation_level: 0,
    topics: [
      {
        name: topic,
        partitions: Array.from({ length: partitions }, (_, p) => ({
          partition_index: p,
          current_leader_epoch: -1,
          timestamp: -1,
        })),
      },
    ],
  });
  const offsets = new Array<number>(partitions).fill(-1);
  for (const t of response.topics) {
    for (const p of t.partitions) {
      if (p.error_code !== ErrorCode.NONE)
        throw new KafkaError(`list offsets ${topic}-${p.partition_index}`, p.error_code);
      offsets[p.partition_index] = p.offset;
    }
  }
  if (offsets.includes(-1)) throw new Error(`list offsets ${topic}: some partitions missing from the response`);
  return offsets;
}

// ------------------------------------------------------------------ producer

export interface ProduceOptions {
  /** Most messages in one record batch. */
  batch_messages_max?: number;
  /** Most bytes in one record batch (the records section and header). */
  batch_bytes_max?: number;
  /** Requests outstanding per connection. */
  max_in_flight?: number;
  /** Most bytes of batches in one request (at least one batch); Kafka's max.request.size is 1 MB. */
  request_bytes_max?: number;
}

export const PRODUCE_DEFAULTS: Required<ProduceOptions> = {
  batch_messages_max: 1000,
  batch_bytes_max: 16 * 1024,
  max_in_flight: 16,
  request_bytes_max: 1024 * 1024,
};

/** Size of one record in a batch with a null key, no headers and a value of `payload_bytes`. */
function record_bytes(payload_bytes: number, offset_delta: number): number {
  const body = 1 + 1 + varint_size(offset_delta) + 1 + varint_size(payload_bytes) + payload_bytes + 1;
  return varint_size(body) + body;
}

/** Messages per batch so that a batch stays within both limits. */
export function messages_per_batch(payload_bytes: number, options: ProduceOptions = {}): number {
  const { batch_messages_max, batch_bytes_max } = { ...PRODUCE_DEFAULTS, ...options };
  let bytes = BATCH_HEADER_BYTES;
  let count = 0;
  while (count < batch_messages_max) {
    const next = record_bytes(payload_bytes, count);
    if (count > 0 && bytes + next > batch_bytes_max) break;
    bytes += next;
    count++;
  }
  return count;
}

/** One batch of `count` copies of `value`, all with the same timestamp. */
export function build_batch(value: Buffer, count: number, timestamp_ms = Date.now()): Buffer {
  const records: BatchRecord[] = new Array(count);
  for (let i = 0; i < count; i++) records[i] = { key: null, value, timestamp_ms };
  return encode_record_batch(records);
}

export function produce_request(
  topic: string,
  batches: ReadonlyArray<{ partition: number; batch: Buffer }>,
): PreparedRequest<typeof PRODUCE> {
  return prepare(PRODUCE, VERSIONS.produce, {
    transactional_id: null,
    acks: -1,
    timeout_ms: 30_000,
    topic_data: [
      { name: topic, partition_data: batches.map(({ partition, batch }) => ({ index: partition, records: batch })) },
    ],
  });
}

/** Checks a Produce response: every partition sent answered, without error. */
export function check_produce_response(
  response: ResponseOf<typeof PRODUCE>,
  topic: string,
  partitions_sent: number,
): void {
  let answered = 0;
  for (const t of response.responses) {
    for (const p of t.partition_responses) {
      if (p.error_code !== ErrorCode.NONE)
        throw new KafkaError(`produce ${topic}-${p.index}`, p.error_code, p.error_message);
      answered++;
    }
  }
  if (answered !== partitions_sent)
    throw new Error(`produce ${topic}: ${answered} partitions answered, ${partitions_sent} sent`);
}

export interface PublishRun {
  host: string;
  port: number;
  topic: string;
  partitions: number;
  /** Connections, each sending its share of the messages to every partition. */
  producers: number;
  messages: number;
  payload_bytes: number;
  time_limit_ms: number;
  options?: ProduceOptions;
  progress?: (acknowledged: number) => void;
  /** Called once everything is prepared, just before the clock starts (e.g. to sample CPU). */
  on_start?: () => void;
}

export interface PublishOutcome {
  acknowledged: number;
  elapsed_ms: number;
  truncated: boolean;
}

/**
 * What one producer sends, request by request: its share of the messages spread evenly over the
 * partitions, cut into batches of `per_batch`; each request takes the next batch of consecutive
 * partitions (round robin, at most one batch per partition) up to `request_bytes_max`.
 */
class RequestPlan {
  private readonly left: number[];
  private next_partition = 0;
  unsent: number;

  constructor(
    share: number,
    partitions: number,
    private readonly per_batch: number,
    private readonly batch_bytes: (count: number) => number,
    private readonly request_bytes_max: number,
  ) {
    this.left = split(share, partitions);
    this.unsent = share;
  }

  /** The next request's batches as [partition, count] pairs; empty when everything is planned. */
  next(): Array<[number, number]> {
    const batches: Array<[number, number]> = [];
    const partitions = this.left.length;
    let bytes = 0;
    for (let i = 0; i < partitions && this.unsent > 0; i++) {
      const partition = (this.next_partition + i) % partitions;
      const count = Math.min(this.per_batch, this.left[partition]!);
      if (count === 0) continue;
      const size = this.batch_bytes(count);
      if (batches.length > 0 && bytes + size > this.request_bytes_max) break;
      batches.push([partition, count]);
      bytes += size;
      this.left[partition]! -= count;
      this.unsent -= count;
    }
    if (batches.length > 0) this.next_partition = (batches[batches.length - 1]![0] + 1) % partitions;
    return batches;
  }
}

/** Prepared requests kept for reuse, by their batches (one or a few shapes per run in practice). */
const REQUEST_CACHE_MAX = 1024;

/**
 * One run's batches (by message count, all with the same timestamp) and prepared Produce requests
 * (by their batches), each built once.
 */
class ProduceCache {
  private readonly batches = new Map<number, Buffer>();
  private readonly requests = new Map<string, PreparedRequest<typeof PRODUCE>>();
  private readonly timestamp = Date.now();

  constructor(
    private readonly topic: string,
    private readonly value: Buffer,
  ) {}

  batch_of(count: number): Buffer {
    let batch = this.batches.get(count);
    if (!batch) this.batches.set(count, (batch = build_batch(this.value, count, this.timestamp)));
    return batch;
  }

  request_of(batches: Array<[number, number]>): PreparedRequest<typeof PRODUCE> {
    const key = batches.length === 1 ? `${batches[0]![0]}:${batches[0]![1]}` : batches.join(';');
    let request = this.requests.get(key);
    if (!request) {
      request = produce_request(
        this.topic,
        batches.map(([partition, count]) => ({ partition, batch: this.batch_of(count) })),
      );
      if (this.requests.size < REQUEST_CACHE_MAX) this.requests.set(key, request);
    }
    return request;
  }
}

/** What the connections of one publish() share while it runs. */
interface PublishState {
  acknowledged: number;
  /** Set once the time limit passed: no new requests. */
  stopped: boolean;
  deadline: number;
}

/**
 * Publishes `messages` copies of one payload and resolves when every request is acknowledged (or
 * the time limit stops new requests; those in flight are still awaited). The topic must exist.
 * Batches (one per distinct message count) are built before the clock starts, all with the same
 * timestamp; a request is a prepared body (reused while its shape repeats) and a new header.
 */
export async function publish(run: PublishRun): Promise<PublishOutcome> {
  const options = { ...PRODUCE_DEFAULTS, ...run.options };
  const per_batch = messages_per_batch(run.payload_bytes, options);
  const value = Buffer.alloc(run.payload_bytes, 0x61);
  const shares = split(run.messages, run.producers);
  const connections = await Promise.all(
    shares.map(() => Connection.connect(run.host, run.port, { max_in_flight: options.max_in_flight })),
  );
  try {
    const cache = new ProduceCache(run.topic, value);
    const batch_bytes = (count: number) => cache.batch_of(count).length;
    const plans = shares.map(
      (share) => new RequestPlan(share, run.partitions, per_batch, batch_bytes, options.request_bytes_max),
    );
    // Build the batches of full size and of each partition's remainder before timing.
    for (const share of shares)
      for (const count of split(share, run.partitions)) if (count > 0) cache.batch_of(count % per_batch || per_batch);

    const state: PublishState = { acknowledged: 0, stopped: false, deadline: 0 };
    run.on_start?.();
    const started = performance.now();
    state.deadline = started + run.time_limit_ms;
    const limit = setTimeout(() => (state.stopped = true), run.time_limit_ms);
    try {
      const sharing = connections.map((connection, i) =>
        produce_share(connection, plans[i]!, cache, state, run, options.max_in_flight),
      );
      await Promise.all(sharing);
    } finally {
      clearTimeout(limit);
    }
    const acknowledged = state.acknowledged;
    return { acknowledged, elapsed_ms: performance.now() - started, truncated: acknowledged < run.messages };
  } finally {
    for (const connection of connections) connection.close();
  }
}

/**
 * One connection's share of a publish(): the plan's requests, `max_in_flight` outstanding, until
 * all are acknowledged or the time limit stops new ones.
 */
function produce_share(
  connection: Connection,
  plan: RequestPlan,
  cache: ProduceCache,
  state: PublishState,
  run: PublishRun,
  max_in_flight: number,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let in_flight = 0;
    let failed = false;
    const pump = () => {
      if (failed) return;
      if (!state.stopped && performance.now() > state.deadline) state.stopped = true;
      while (in_flight < max_in_flight && plan.unsent > 0 && !state.stopped) {
        const batches = plan.next();
        let count = 0;
        for (const [, n] of batches) count += n;
        in_flight++;
        connection.request(cache.request_of(batches)).then(
          (response) => {
            try {
              check_produce_response(response, run.topic, batches.length);
            } catch (error) {
              failed = true;
              return reject(error);
            }
            in_flight--;
            state.acknowledged += count;
            run.progress?.(state.acknowledged);
            pump();
          },
          (error: Error) => {
            failed = true;
            reject(error);
          },
        );
      }
      if (in_flight === 0 && (plan.unsent === 0 || state.stopped)) resolve();
    };
    pump();
  });
}

/** `total` split into `parts` near-equal shares. */
export function split(total: number, parts: number): number[] {
  const n = Math.max(1, parts);
  return Array.from({ length: n }, (_, i) => Math.floor(total / n) + (i < total % n ? 1 : 0));
}

// ------------------------------------------------------------------ consumer

export interface ConsumeRun {
  host: string;
  port: number;
  topic: string;
  partitions: number;
  /** Stop once this many records were received. */
  expected: number;
  time_limit_ms: number;
  max_wait_ms?: number;
  partition_max_bytes?: number;
  max_bytes?: number;
  progress?: (received: number) => void;
  /** Each record batch as received (the fetch frame and the batch's position in it). */
  on_batch?: (frame: Buffer, position: number, received_at: number) => void;
  /** Resolves when the consumer should stop early (e.g. the producer failed). */
  cancel?: Promise<unknown>;
  /** Called after the first fetch request was sent (the consumer is polling). */
  on_polling?: () => void;
}

export interface ConsumeOutcome {
  received: number;
  /** Bytes of record batches received (headers included). */
  batch_bytes: number;
  elapsed_ms: number;
  truncated: boolean;
}

/** Fetches every partition from offset 0 until `expected` records arrived or time runs out. */
export async function consume(run: ConsumeRun): Promise<ConsumeOutcome> {
  const connection = await Connection.connect(run.host, run.port, { max_in_flight: 1 });
  const offsets = new Array<number>(run.partitions).fill(0);
  let received = 0;
  let batch_bytes = 0;
  let cancelled = false;
  void run.cancel?.then(() => (cancelled = true));
  let on_polling = run.on_polling;
  const started = performance.now();
  const deadline = started + run.time_limit_ms;
  try {
    while (received < run.expected && !cancelled && performance.now() < deadline) {
      const fetching = connection.call(FETCH, VERSIONS.fetch, {
        replica_id: -1,
        max_wait_ms: run.max_wait_ms ?? 100,
        min_bytes: 1,
        max_bytes: run.max_bytes ?? 8 * 1024 * 1024,
        isolation_level: 0,
        session_id: 0,
        session_epoch: -1,
        topics: [
          {
            topic: run.topic,
            partitions: offsets.map((fetch_offset, partition) => ({
              partition,
              current_leader_epoch: -1,
              fetch_offset,
              last_fetched_epoch: -1,
              log_start_offset: -1,
              partition_max_bytes: run.partition_max_bytes ?? 1024 * 1024,
            })),
          },
        ],
        forgotten_topics_data: [],
        rack_id: '',
      });
      if (on_polling) {
        on_polling();
        on_polling = undefined;
      }
      const response = await fetching;
      const received_at = performance.now();
      if (response.error_code !== ErrorCode.NONE) throw new KafkaError(`fetch ${run.topic}`, response.error_code);
      for (const t of response.responses) {
        for (const p of t.partitions) {
          const partition = p.partition_index;
          if (p.error_code !== ErrorCode.NONE) throw new KafkaError(`fetch ${run.topic}-${partition}`, p.error_code);
          const records = p.records;
          if (!records) continue;
          // Whole batches only; a trailing partial batch (Kafka may send one) is fetched again.
          let at = 0;
          while (records.length - at >= BATCH_HEADER_BYTES) {
            const size = batch_size_at(records, at);
            if (records.length - at < size) break;
            offsets[partition] = batch_last_offset(records, at) + 1;
            if ((batch_attributes(records, at) & ATTRIBUTE_CONTROL) === 0) {
              received += batch_records_count(records, at);
              batch_bytes += size;
              run.on_batch?.(records, at, received_at);
            }
            at += size;
          }
        }
      }
      run.progress?.(received);
    }
    return { received, batch_bytes, elapsed_ms: performance.now() - started, truncated: received < run.expected };
  } finally {
    connection.close();
  }
}
