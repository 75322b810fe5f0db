// Batching: messages are appended to one open batch per partition; a batch is sealed when it
// reaches `batchBytes` or `lingerMs` after its first message (sealing encodes it; compression runs
// off the event loop), and queued for the sender. The accumulator also keeps the buffer accounting
// (bytes accepted and not yet acknowledged; a send waits for space or is refused when it is full)
// and fails batches that cannot be sent. When batches go out, and their retries, is
// producer_sender.ts's; their sequence numbers are producer_idempotence.ts's.
import { performance } from 'node:perf_hooks';
import { BufferFullError, SluiceError } from './errors.ts';
import { BATCH_HEADER_BYTES } from '../format/batch_layout.ts';
import { encode_record_batch, type BatchRecord, type GeneratedHeader } from '../protocol/record_batch.ts';
import { compress_record_batch, type CompressionName } from '../protocol/compression.ts';
import type { PartitionerMessage } from './partitioner.ts';
import type { RecordMetadata } from './producer_types.ts';
import type { ProducerSettings } from './producer_shared.ts';
import type { Idempotence, SequencedBatch, SequencedPartition } from './producer_idempotence.ts';

/** What a send learned about one of its topic partitions. */
interface SendSlot {
  state: PartitionState;
  base: number;
  log_append_time: number;
  log_start: number;
}

const new_slot = (state: PartitionState): SendSlot => ({
  state,
  base: Number.MAX_SAFE_INTEGER,
  log_append_time: -1,
  log_start: -1,
});

const metadata_of = (slot: SendSlot): RecordMetadata => ({
  topicName: slot.state.topic,
  partition: slot.state.partition,
  errorCode: 0,
  baseOffset: String(slot.base === Number.MAX_SAFE_INTEGER ? -1 : slot.base),
  logAppendTime: String(slot.log_append_time),
  logStartOffset: String(slot.log_start),
});

/** One send() or sendBatch(): resolves when all its messages are acknowledged, rejects on the first failure. */
export class SendOp {
  remaining: number;
  settled = false;
  readonly promise: Promise<RecordMetadata[]>;
  private resolve!: (value: RecordMetadata[]) => void;
  private reject!: (error: unknown) => void;
  /** The first partition's slot; most sends have only that one, so the map is made only for more. */
  private first: SendSlot | null = null;
  private more: Map<PartitionState, SendSlot> | null = null;

  constructor(
    count: number,
    private readonly on_settle: (op: SendOp) => void,
  ) {
    this.remaining = count;
    this.promise = new Promise<RecordMetadata[]>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  /** The partitions the send writes to. */
  each_partition(visit: (state: PartitionState) => void): void {
    if (this.first) visit(this.first.state);
    if (this.more) for (const state of this.more.keys()) visit(state);
  }

  slot(state: PartitionState): void {
    if (this.first === null) this.first = new_slot(state);
    else if (this.first.state !== state && !this.more?.has(state)) {
      this.more ??= new Map();
      this.more.set(state, new_slot(state));
    }
  }

  /** `count` of this send's messages were stored from `first_offset` on (-1: the broker did not say). */
  ack(state: PartitionState, first_offset: number, count: number, log_append_time: number, log_start: number): void {
    if (this.settled) return;
    const slot = this.first!.state === state ? this.first! : this.more!.get(state)!;
    if (first_offset < slot.base) {
      slot.base = first_offset;
      slot.log_append_time = log_append_time;
    }
    if (log_start > slot.log_start) slot.log_start = log_start;
    this.remaining -= count;
    if (this.remaining > 0) return;
    this.settled = true;
    this.on_settle(this);
    const first = metadata_of(this.first!);
    this.resolve(this.more ? [first, ...[...this.more.values()].map(metadata_of)] : [first]);
  }

  fail(error: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.on_settle(this);
    this.reject(error);
  }
}

let batch_counter = 0;

/** A batch this big is sealed when a send fills it (see seal_if_idle): Kafka's batch.size default. */
const SEAL_AT_ADMISSION_BYTES = 16 * 1024;

/** A batch of one partition: open (taking messages), queued (sealed), in flight, or awaiting a retry. */
export class Batch implements SequencedBatch {
  /** Seal order within the producer: failed batches are put back in this order. */
  order = 0;
  records: BatchRecord[] = [];
  /** The sends whose messages the batch holds, a run of consecutive records each: owner_counts[i] of owners[i]. */
  owners: SendOp[] = [];
  owner_counts: number[] = [];
  count = 0;
  bytes = BATCH_HEADER_BYTES;
  /** Buffer bytes to give back when the batch is done. */
  reserved = 0;
  timeout_ms: number;
  readonly created = performance.now();
  encoded: Buffer | null = null;
  /** Base sequence once first sent (idempotent producers); -1 before. */
  sequence = -1;
  attempts = 0;
  last_error: unknown = null;
  done = false;
  /** lingerMs has passed since the first message. */
  lingered = false;

  constructor(
    readonly partition: PartitionState,
    readonly acks: number,
    readonly compression: CompressionName,
    timeout_ms: number,
  ) {
    this.timeout_ms = timeout_ms;
  }
}

export class PartitionState implements SequencedPartition {
  open: Batch | null = null;
  linger_timer: NodeJS.Timeout | null = null;
  /** Sealed batches in send order (the head may still be compressing). */
  queue: Batch[] = [];
  in_flight: Batch[] = [];
  /** The broker the in-flight batches went to: later batches follow them there. */
  in_flight_node = -1;
  /** Batches answered with an error while others were still in flight. */
  failed: Batch[] = [];
  /** An error came back: send nothing until in_flight drains, then resend `failed` first. */
  recovering = false;
  /** A batch failed for good (a sequence gap): start a new epoch at sequence 0. */
  bump_epoch = false;
  /** Waiting for a new producer id (epoch exhausted). */
  identity_pending = false;
  retry_at = 0;
  producer_id = -1;
  producer_epoch = -1;
  next_sequence = 0;

  constructor(
    readonly topic: string,
    readonly partition: number,
  ) {}

  get idle(): boolean {
    return this.open === null && this.queue.length === 0 && this.in_flight.length === 0 && this.failed.length === 0;
  }
}

/** A message checked and turned into its record: one object per message, as batches keep it until encoded. */
export interface NormalizedMessage extends BatchRecord {
  /** The message as the partitioner sees it (kafkajs's shape: a string timestamp). */
  source: PartitionerMessage;
  bytes: number;
  /** The partition the partitioner chose; null until the send is placed. */
  state: PartitionState | null;
}

export interface Admission {
  op: SendOp;
  topics: Array<{ topic: string; messages: NormalizedMessage[] }>;
  acks: number;
  compression: CompressionName;
  timeout_ms: number;
  bytes: number;
}

export class Accumulator {
  /** Every partition written to. */
  readonly partitions: PartitionState[] = [];
  /** The same states by topic, then partition number: the lookup made for every message. */
  private readonly by_topic = new Map<string, PartitionState[]>();
  private buffer_used = 0;
  private buffer_waiter: { bytes: number; resolve: () => void } | null = null;

  /** `ready` is called whenever a batch may have become sendable (the sender drains then). */
  constructor(
    private readonly settings: ProducerSettings,
    private readonly idempotence: Idempotence,
    /** The message-id header of messages without one, written as their batch is encoded. */
    private readonly message_ids: GeneratedHeader,
    private readonly ready: () => void,
  ) {}

  /**
   * Without lingerMs, an open batch of at least SEAL_AT_ADMISSION_BYTES is sealed as the send that
   * filled it is admitted if nothing of the partition is in flight or queued: the broker then works
   * on that send while the next ones are admitted, and those go together in the next request.
   * (Sends admitted in one turn of the event loop would otherwise go, and be acknowledged, as one
   * request, with the producer and the broker taking turns. Sealing every send while a request
   * slot is free measured slower: more requests, more fsyncs for the broker.)
   */
  seal_if_idle(state: PartitionState): void {
    const open = state.open;
    if (this.settings.linger_ms !== 0 || open === null || open.bytes < SEAL_AT_ADMISSION_BYTES) return;
    if (state.queue.length === 0 && state.in_flight.length === 0) this.seal(state);
  }

  /** A send waits for buffer space: batches then go out without lingering. */
  get waiting_for_buffer(): boolean {
    return this.buffer_waiter !== null;
  }

  partition_state(topic: string, partition: number): PartitionState {
    let states = this.by_topic.get(topic);
    if (!states) {
      states = [];
      this.by_topic.set(topic, states);
    }
    let state = states[partition];
    if (!state) {
      state = new PartitionState(topic, partition);
      this.idempotence.adopt(state);
      this.partitions.push(state);
      states[partition] = state;
    }
    return state;
  }

  /** Takes `bytes` of the buffer if they fit now and no send waits for space before this one. */
  try_reserve(bytes: number): boolean {
    if (this.buffer_waiter !== null || this.buffer_used + bytes > this.settings.buffer_bytes) return false;
    this.buffer_used += bytes;
    return true;
  }

  reserve(bytes: number): Promise<void> | void {
    if (this.buffer_used + bytes <= this.settings.buffer_bytes) {
      this.buffer_used += bytes;
      return;
    }
    if (this.settings.buffer_full === 'error') {
      throw new BufferFullError(
        `the producer buffer is full (${this.buffer_used} of ${this.settings.buffer_bytes} bytes in use, ` +
          `the send needs ${bytes})`,
      );
    }
    // Admissions are serial, so there is at most one waiter. Batches are sent without lingering
    // while it waits, to free the buffer as fast as possible.
    return new Promise<void>((resolve) => {
      this.buffer_waiter = {
        bytes,
        resolve: () => {
          this.buffer_used += bytes;
          resolve();
        },
      };
      this.ready();
    });
  }

  release(bytes: number): void {
    this.buffer_used -= bytes;
    const waiter = this.buffer_waiter;
    if (waiter && this.buffer_used + waiter.bytes <= this.settings.buffer_bytes) {
      this.buffer_waiter = null;
      waiter.resolve();
    }
  }

  append(state: PartitionState, message: NormalizedMessage, admission: Admission): void {
    const batch_bytes = this.settings.batch_bytes;
    let batch = state.open;
    if (
      batch &&
      (batch.acks !== admission.acks ||
        batch.compression !== admission.compression ||
        batch.bytes + message.bytes > batch_bytes)
    ) {
      this.seal(state);
      batch = null;
    }
    if (!batch) batch = this.open_batch(state, admission);
    batch.records.push(message);
    const runs = batch.owners.length;
    if (runs > 0 && batch.owners[runs - 1] === admission.op) batch.owner_counts[runs - 1]!++;
    else {
      batch.owners.push(admission.op);
      batch.owner_counts.push(1);
    }
    batch.count++;
    batch.bytes += message.bytes;
    batch.reserved += message.bytes;
    batch.timeout_ms = Math.max(batch.timeout_ms, admission.timeout_ms);
    if (batch.bytes >= batch_bytes) this.seal(state);
  }

  private open_batch(state: PartitionState, admission: Admission): Batch {
    const batch = new Batch(state, admission.acks, admission.compression, admission.timeout_ms);
    state.open = batch;
    if (this.settings.linger_ms > 0) {
      state.linger_timer = setTimeout(() => {
        batch.lingered = true;
        this.ready();
      }, this.settings.linger_ms);
    } else {
      batch.lingered = true;
    }
    return batch;
  }

  /** Closes the open batch, queues it and encodes it (compression runs off the event loop). */
  seal(state: PartitionState): void {
    const batch = state.open;
    if (!batch) return;
    state.open = null;
    if (state.linger_timer) clearTimeout(state.linger_timer);
    state.linger_timer = null;
    batch.order = ++batch_counter;
    state.queue.push(batch);
    let raw: Buffer;
    try {
      // Compression and the idempotent stamp (producer id, sequence) compute the CRC again.
      const crc = batch.compression === 'none' && !this.idempotence.enabled;
      raw = encode_record_batch(batch.records, { crc, generated_header: this.message_ids });
    } catch (error) {
      const message = `cannot encode a batch for ${state.topic}-${state.partition}: ${String(error)}`;
      return this.abandon(state, [batch], new SluiceError(message, false, { cause: error }));
    }
    batch.records = [];
    if (batch.compression === 'none') {
      batch.encoded = raw;
      return;
    }
    compress_record_batch(raw, batch.compression).then(
      (encoded) => {
        batch.encoded = encoded;
        this.ready();
      },
      (error: unknown) => {
        this.abandon(state, [batch], error);
        this.ready();
      },
    );
  }

  /** Fails a batch's sends for good; an idempotent partition then needs a new epoch (sequence gap). */
  fail_batch(batch: Batch, error: unknown): void {
    if (batch.done) return;
    batch.done = true;
    for (const op of batch.owners) op.fail(error);
    batch.owners = [];
    batch.owner_counts = [];
    batch.encoded = null;
    this.release(batch.reserved);
    this.idempotence.failed_for_good(batch, batch.partition);
  }

  /** Fails batches that are not in flight (queued, open or awaiting a retry). */
  abandon(state: PartitionState, batches: Batch[], error: unknown): void {
    for (const batch of batches) {
      const at = state.queue.indexOf(batch);
      if (at >= 0) state.queue.splice(at, 1);
      const failed_at = state.failed.indexOf(batch);
      if (failed_at >= 0) state.failed.splice(failed_at, 1);
      if (state.open === batch) {
        state.open = null;
        if (state.linger_timer) clearTimeout(state.linger_timer);
        state.linger_timer = null;
      }
      this.fail_batch(batch, error);
    }
  }

  /** The producer is disconnected: no batch waits for its linger time any more. */
  stop_timers(): void {
    for (const partition of this.partitions.values()) if (partition.linger_timer) clearTimeout(partition.linger_timer);
  }
}
