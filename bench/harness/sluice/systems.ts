// Sluice as systems under test for the side-by-side benchmark: the lean client (our codecs) under
// three durability settings, kafkajs 2.2.4, kcat (librdkafka), the project's SDK (src/sdk) and
// @platformatic/kafka 2.x. Each system starts its own
// broker process on a fresh data directory under the harness's workdir.
//
// Conventions shared by every driver here:
// - every workload creates its own topic (CreateTopics, untimed) named bench-<system>-<n>;
// - ThroughputResult.bytes counts payload bytes (messages x payload_bytes), not wire bytes;
// - latency: the value's first 8 bytes carry performance.now() at the publish call (little-endian
//   float64); the consumer in the same process subtracts it from performance.now() at receipt;
// - every wait is bounded by the workload's time limit plus a fixed grace period.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Kafka, logLevel, Partitioners, type Consumer, type Producer } from 'kafkajs';
import { Consumer as PlatformaticConsumer, Producer as PlatformaticProducer, ProduceAcks } from '@platformatic/kafka';
import { Sluice, type QueueMessagePayload } from '../../../src/sdk/index.ts';
import { decode_record_batch, encode_record_batch } from '../../../src/protocol/record_batch.ts';
import type { DurabilityClass, LatencyParams, LatencyResult, PublishParams, QueueParams, SystemUnderTest, ThroughputResult, Unavailable } from '../types.ts';
import { BrokerProcess } from './broker.ts';
import { pump_sends } from '../../pump_sends.ts';
import { Connection, consume, create_topic, end_offsets, produce_request, check_produce_response, publish, split, type ProduceOptions } from './lean_client.ts';

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';

/** Extra time allowed beyond a workload's own limit (connects, group joins, the last acks). */
const GRACE_MS = 30_000;
const LATENCY_MAX_IN_FLIGHT = 16;
const KAFKAJS_VERSION = '2.2.4';
const KCAT_DEFAULT = '/usr/bin/kcat';
/** Bytes of a child's stderr kept for error messages. */
const STDERR_KEPT_BYTES = 16 * 1024;

export interface SluiceSystemsOptions {
  /** Extra node flags for every broker process, e.g. ['--cpu-prof', '--cpu-prof-dir=DIR']. */
  broker_node_args?: string[];
  /** Batching of the lean producer (defaults in LEAN_PRODUCE_DEFAULTS). */
  lean?: ProduceOptions;
  kcat_path?: string;
  /** Messages per send() call of the client-library systems (kafkajs, SDK, @platformatic/kafka), and send() calls in flight per producer (default 1000 and 8). */
  client_send_messages?: number;
  client_sends_in_flight?: number;
}

/**
 * Lean producer batching used by the benchmark: up to 64 KiB or 1,000 messages per batch, up to
 * 1 MiB of batches per request (one per partition), 16 requests in flight per connection. 16 KiB batches (Kafka's Java default) cost the broker about
 * twice the CPU per message; see the self-check report.
 */
export const LEAN_PRODUCE_DEFAULTS: Required<ProduceOptions> = { batch_messages_max: 1000, batch_bytes_max: 64 * 1024, max_in_flight: 16, request_bytes_max: 1024 * 1024 };

const DURABILITY = {
  fsync: { flag: 'fsync', class: 'fsync' as DurabilityClass, detail: 'fsync before ack, group commit across partitions' },
  interval: { flag: 'interval:100', class: 'periodic' as DurabilityClass, detail: 'ack after write, fsync every 100 ms' },
  none: { flag: 'none', class: 'none' as DurabilityClass, detail: 'ack after write, fsync at checkpoints (10 s)' },
};
type DurabilityKey = keyof typeof DURABILITY;

export function sluice_systems(options: SluiceSystemsOptions = {}): SystemUnderTest[] {
  return [
    new LeanSystem('fsync', options),
    new LeanSystem('interval', options),
    new LeanSystem('none', options),
    new KafkajsSystem(options),
    new KcatSystem(options),
    new SdkSystem(options),
    new PlatformaticSystem(options),
  ];
}

/** Systems that cannot run on this machine, with the reason (kcat missing). */
export function sluice_unavailable(options: SluiceSystemsOptions = {}): Unavailable[] {
  const reason = kcat_missing(options.kcat_path ?? KCAT_DEFAULT);
  return reason ? [{ id: 'sluice-kcat-fsync', label: 'Sluice (kcat / librdkafka)', reason }] : [];
}

function kcat_missing(kcat: string): string | null {
  const probe = spawnSync(kcat, ['-V'], { encoding: 'utf8', timeout: 10_000 });
  if (probe.error) return `${kcat} is not available (${probe.error.message})`;
  if (probe.status !== 0) return `\`${kcat} -V\` exited with ${probe.status}`;
  return null;
}

// ------------------------------------------------------------------ common parts

abstract class SluiceSystem implements SystemUnderTest {
  abstract readonly id: string;
  abstract readonly label: string;
  abstract readonly client: string;
  readonly durability: DurabilityClass;
  readonly durability_detail: string;
  protected broker: BrokerProcess | null = null;
  protected workdir = '';
  private topics = 0;

  constructor(
    private readonly durability_key: DurabilityKey,
    protected readonly options: SluiceSystemsOptions,
  ) {
    this.durability = DURABILITY[durability_key].class;
    this.durability_detail = DURABILITY[durability_key].detail;
  }

  async start(workdir: string): Promise<void> {
    if (this.broker) throw new Error(`${this.id} is already started`);
    this.workdir = workdir;
    this.broker = await BrokerProcess.start(workdir, this.id, { durability: DURABILITY[this.durability_key].flag, node_args: this.options.broker_node_args });
  }

  async stop(): Promise<void> {
    const broker = this.broker;
    this.broker = null;
    await broker?.stop();
  }

  server_pids(): number[] {
    return this.broker ? [this.broker.pid] : [];
  }

  protected get running(): BrokerProcess {
    if (!this.broker) throw new Error(`${this.id} is not started`);
    return this.broker;
  }

  /** Creates a fresh topic for one workload (untimed). */
  protected async new_topic(partitions: number): Promise<string> {
    const topic = `bench-${this.id}-${++this.topics}`;
    const connection = await Connection.connect(this.running.host, this.running.port);
    try {
      await create_topic(connection, topic, partitions);
    } finally {
      connection.close();
    }
    return topic;
  }

  protected async topic_size(topic: string, partitions: number): Promise<number> {
    const connection = await Connection.connect(this.running.host, this.running.port);
    try {
      return (await end_offsets(connection, topic, partitions)).reduce((a, b) => a + b, 0);
    } finally {
      connection.close();
    }
  }

  abstract publish(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult>;
  abstract publish_consume(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult>;
  abstract latency(params: LatencyParams): Promise<LatencyResult>;
  abstract drain(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult>;
}

function result(messages: number, params: PublishParams, elapsed_ms: number, truncated: boolean): ThroughputResult {
  return { messages, bytes: messages * params.payload_bytes, elapsed_ms, ...(truncated ? { truncated } : {}) };
}

/** Resolves `promise`, or rejects after `ms` with a message naming `what`. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not done within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** A payload whose first 8 bytes are `now` (performance.now(), float64 LE); at least 8 bytes. */
function stamped_value(template: Buffer, now: number): Buffer {
  const value = Buffer.from(template);
  value.writeDoubleLE(now, 0);
  return value;
}

/**
 * Fixed-rate publishing for the latency workload: every millisecond, the messages due by then are
 * stamped with the current time and handed to `send` as one group; with `max_in_flight` groups
 * outstanding, later messages wait (already stamped, so the wait counts as latency). Resolves with
 * the number of messages acknowledged once all are.
 */
function publish_at_fixed_rate(params: LatencyParams, max_in_flight: number, send: (values: Buffer[]) => Promise<void>): Promise<number> {
  const total = Math.max(1, Math.round((params.rate_per_s * params.duration_ms) / 1000));
  const interval_ms = 1000 / params.rate_per_s;
  const template = Buffer.alloc(Math.max(8, params.payload_bytes), 0x61);
  return within(
    new Promise<number>((resolve, reject) => {
      const start = performance.now();
      let created = 0;
      let acknowledged = 0;
      let in_flight = 0;
      let queued: Buffer[] = [];
      let failed = false;
      const flush = () => {
        while (queued.length > 0 && in_flight < max_in_flight && !failed) {
          const group = queued;
          queued = [];
          in_flight++;
          send(group).then(
            () => {
              in_flight--;
              acknowledged += group.length;
              flush();
              if (created === total && queued.length === 0 && in_flight === 0) resolve(acknowledged);
            },
            (error: unknown) => {
              failed = true;
              reject(error);
            },
          );
        }
      };
      const tick = () => {
        if (failed) return;
        const now = performance.now();
        const due = Math.min(total, Math.floor((now - start) / interval_ms) + 1);
        while (created < due) {
          queued.push(stamped_value(template, now));
          created++;
        }
        flush();
        if (created < total) setTimeout(tick, 1);
      };
      tick();
    }),
    params.duration_ms + GRACE_MS,
    'fixed-rate publishing',
  );
}

function latency_samples(capacity: number) {
  const samples = new Float64Array(capacity);
  let count = 0;
  return {
    add(ms: number) {
      if (count < capacity) samples[count] = ms;
      count++;
    },
    get count() {
      return count;
    },
    result(sent: number): LatencyResult {
      return { samples_ms: samples.slice(0, Math.min(count, capacity)), sent, received: count };
    },
  };
}

// ------------------------------------------------------------------ lean client

class LeanSystem extends SluiceSystem {
  readonly id: string;
  readonly label: string;
  readonly client = 'Sluice lean client (bench/harness/sluice/lean_client.ts, Produce v9 / Fetch v12)';
  private readonly produce: Required<ProduceOptions>;

  constructor(durability: DurabilityKey, options: SluiceSystemsOptions) {
    super(durability, options);
    this.id = `sluice-lean-${durability}`;
    this.label = `Sluice (lean client, ${DURABILITY[durability].flag})`;
    this.produce = { ...LEAN_PRODUCE_DEFAULTS, ...options.lean };
  }

  async publish(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult> {
    const topic = await this.new_topic(params.partitions);
    const outcome = await publish({ ...this.run(topic, params), progress });
    return result(outcome.acknowledged, params, outcome.elapsed_ms, outcome.truncated);
  }

  async publish_consume(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult> {
    const topic = await this.new_topic(params.partitions);
    const broker = this.running;
    let cancel!: () => void;
    const cancelled = new Promise<void>((resolve) => (cancel = resolve));
    let polling!: () => void;
    const consumer_polling = new Promise<void>((resolve) => (polling = resolve));
    const consumer_run = {
      host: broker.host,
      port: broker.port,
      topic,
      partitions: params.partitions,
      expected: params.messages,
      time_limit_ms: params.time_limit_ms + GRACE_MS,
      progress,
      cancel: cancelled,
      on_polling: polling,
    };
    const consuming = consume(consumer_run);
    consuming.catch(() => undefined);
    await within(Promise.race([consumer_polling, consuming]), GRACE_MS, 'consumer start');
    const started = performance.now();
    try {
      const produced = await publish(this.run(topic, params));
      // Under the time limit fewer may be published: the consumer then waits for those only.
      consumer_run.expected = produced.acknowledged;
      const consumed = await consuming;
      if (consumed.received < produced.acknowledged) throw new Error(`consumed ${consumed.received} of ${produced.acknowledged} acknowledged messages`);
      return result(consumed.received, params, performance.now() - started, produced.truncated);
    } finally {
      cancel();
      await consuming.catch(() => undefined);
    }
  }

  async latency(params: LatencyParams): Promise<LatencyResult> {
    const topic = await this.new_topic(1);
    const broker = this.running;
    const total = Math.max(1, Math.round((params.rate_per_s * params.duration_ms) / 1000));
    const samples = latency_samples(total);
    let cancel!: () => void;
    const cancelled = new Promise<void>((resolve) => (cancel = resolve));
    let polling!: () => void;
    const consumer_polling = new Promise<void>((resolve) => (polling = resolve));
    const consumer_run = {
      host: broker.host,
      port: broker.port,
      topic,
      partitions: 1,
      expected: total,
      time_limit_ms: params.duration_ms + GRACE_MS,
      cancel: cancelled,
      on_polling: polling,
      on_batch: (frame: Buffer, position: number, received_at: number) => {
        for (const record of decode_record_batch(frame, position)) samples.add(received_at - record.value!.readDoubleLE(0));
      },
    };
    const consuming = consume(consumer_run);
    consuming.catch(() => undefined);
    const producer = await Connection.connect(broker.host, broker.port, { max_in_flight: LATENCY_MAX_IN_FLIGHT });
    try {
      await within(Promise.race([consumer_polling, consuming]), GRACE_MS, 'consumer start');
      const sent = await publish_at_fixed_rate(params, LATENCY_MAX_IN_FLIGHT, async (values) => {
        const timestamp_ms = Date.now();
        const batch = build_batch_of(values, timestamp_ms);
        check_produce_response(await producer.request(produce_request(topic, [{ partition: 0, batch }])), topic, 1);
      });
      consumer_run.expected = sent;
      await consuming;
      return samples.result(sent);
    } finally {
      producer.close();
      cancel();
      await consuming.catch(() => undefined);
    }
  }

  async drain(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult> {
    const topic = await this.new_topic(params.partitions);
    const produced = await publish(this.run(topic, params));
    if (produced.truncated) throw new Error(`drain: only ${produced.acknowledged} of ${params.messages} messages published within ${params.time_limit_ms} ms`);
    const consumed = await consume({ host: this.running.host, port: this.running.port, topic, partitions: params.partitions, expected: produced.acknowledged, time_limit_ms: params.time_limit_ms, progress });
    return result(consumed.received, params, consumed.elapsed_ms, consumed.truncated);
  }

  private run(topic: string, params: PublishParams) {
    return {
      host: this.running.host,
      port: this.running.port,
      topic,
      partitions: params.partitions,
      producers: params.producers,
      messages: params.messages,
      payload_bytes: params.payload_bytes,
      time_limit_ms: params.time_limit_ms,
      options: this.produce,
    };
  }
}

/** One batch of distinct values (the latency workload's small groups). */
function build_batch_of(values: Buffer[], timestamp_ms: number): Buffer {
  return encode_record_batch(values.map((value) => ({ key: null, value, timestamp_ms })));
}

// ------------------------------------------------------------------ kafkajs

// ------------------------------------------------------------------ kcat

interface ChildRun {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr: () => string;
}

/** Spawns `command`; its standard output goes to the file descriptor `stdout_fd` or nowhere. */
function run_child(command: string, args: string[], stdout_fd?: number): ChildRun {
  const child = spawn(command, args, { stdio: ['ignore', stdout_fd ?? 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    if (stderr.length > STDERR_KEPT_BYTES) stderr = stderr.slice(-STDERR_KEPT_BYTES);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  exited.catch(() => undefined);
  return { child, exited, stderr: () => stderr };
}

/** Waits for a child; kills it (SIGTERM, then SIGKILL) if it outlives `ms`. Resolves true if it ended by itself. */
async function wait_child(run: ChildRun, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timed_out = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const ended = await Promise.race([run.exited.then(() => true as const), timed_out]);
  clearTimeout(timer);
  if (!ended) await stop_child(run);
  return ended;
}

async function stop_child(run: ChildRun): Promise<void> {
  if (run.child.exitCode !== null || run.child.signalCode !== null) return;
  run.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const killed = await Promise.race([run.exited.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), 5_000)))]);
  clearTimeout(timer);
  if (!killed) {
    run.child.kill('SIGKILL');
    await run.exited.catch(() => undefined);
  }
}

/**
 * A kcat consumer writing to a file (one message per line): the messages received are the file's
 * size over the line length, so the payload does not have to pass through this process.
 */
class KcatConsumerOutput {
  private readonly fd: number;

  constructor(
    readonly file: string,
    private readonly line_bytes: number,
  ) {
    this.fd = fs.openSync(file, 'w');
  }

  get stdout_fd(): number {
    return this.fd;
  }

  get count(): number {
    return Math.floor(fs.fstatSync(this.fd).size / this.line_bytes);
  }

  /** Checks that the output is exactly `count` whole lines. */
  check(count: number): void {
    const size = fs.fstatSync(this.fd).size;
    if (size !== count * this.line_bytes) throw new Error(`kcat consumer wrote ${size} bytes, expected ${count} lines of ${this.line_bytes} bytes`);
  }

  close(): void {
    fs.closeSync(this.fd);
    fs.rmSync(this.file, { force: true });
  }
}

class KcatSystem extends SluiceSystem {
  readonly id = 'sluice-kcat-fsync';
  readonly label = 'Sluice (kcat / librdkafka)';
  readonly client: string;
  private readonly kcat: string;
  private files = 0;

  constructor(options: SluiceSystemsOptions) {
    super('fsync', options);
    this.kcat = options.kcat_path ?? KCAT_DEFAULT;
    const probe = spawnSync(this.kcat, ['-V'], { encoding: 'utf8', timeout: 10_000 });
    const version = /Version ([\w.-]+)/.exec(probe.stdout ?? '')?.[1];
    const librdkafka = /librdkafka ([\d.]+)/.exec(probe.stdout ?? '')?.[1];
    this.client = `kcat${version ? ` ${version}` : ''}${librdkafka ? ` (librdkafka ${librdkafka})` : ''}`;
  }

  override async start(workdir: string): Promise<void> {
    const missing = kcat_missing(this.kcat);
    if (missing) throw new Error(missing);
    await super.start(workdir);
  }

  /** Files of `payload_bytes`-long lines, one per producer share (written before timing). */
  private message_files(params: PublishParams): string[] {
    const line = Buffer.alloc(params.payload_bytes + 1, 0x61);
    line[params.payload_bytes] = 10;
    const lines_per_chunk = Math.max(1, Math.floor((4 * 1024 * 1024) / line.length));
    const chunk = Buffer.concat(Array.from({ length: lines_per_chunk }, () => line));
    return split(params.messages, params.producers).map((share) => {
      const file = path.join(this.workdir, `${this.id}-messages-${process.pid}-${++this.files}.txt`);
      const fd = fs.openSync(file, 'w');
      try {
        for (let left = share; left > 0; left -= lines_per_chunk) {
          const n = Math.min(left, lines_per_chunk);
          fs.writeSync(fd, chunk, 0, n * line.length);
        }
      } finally {
        fs.closeSync(fd);
      }
      return file;
    });
  }

  private producer_args(topic: string, file: string): string[] {
    return [
      '-P',
      '-b',
      this.running.bootstrap,
      '-t',
      topic,
      '-l',
      file,
      '-X',
      'linger.ms=5',
      '-X',
      'batch.num.messages=10000',
      '-X',
      'queue.buffering.max.messages=1000000',
      '-X',
      'acks=all',
    ];
  }

  /** Runs one kcat producer per file; resolves with the elapsed time and whether all ended by themselves. */
  private async produce(topic: string, params: PublishParams, files: string[], progress?: (messages_done: number) => void) {
    let polling: NodeJS.Timeout | undefined;
    const started = performance.now();
    const runs = files.map((file) => run_child(this.kcat, this.producer_args(topic, file)));
    if (progress) {
      polling = setInterval(() => {
        this.topic_size(topic, params.partitions).then(progress, () => undefined);
      }, 1_000);
    }
    try {
      const ended = await Promise.all(runs.map((run) => wait_child(run, params.time_limit_ms)));
      const elapsed_ms = performance.now() - started;
      for (const [i, run] of runs.entries()) {
        const { code, signal } = await run.exited;
        if (ended[i] && code !== 0) throw new Error(`kcat producer exited with ${code ?? signal}:\n${run.stderr()}`);
      }
      return { elapsed_ms, truncated: ended.includes(false) };
    } finally {
      clearInterval(polling);
      await Promise.all(runs.map(stop_child));
      for (const file of files) fs.rmSync(file, { force: true });
    }
  }

  async publish(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult> {
    const topic = await this.new_topic(params.partitions);
    const files = this.message_files(params);
    const produced = await this.produce(topic, params, files, progress);
    const stored = await this.topic_size(topic, params.partitions);
    if (!produced.truncated && stored !== params.messages) throw new Error(`kcat reported success but the topic holds ${stored} of ${params.messages} messages`);
    progress(stored);
    return result(stored, params, produced.elapsed_ms, produced.truncated);
  }

  /**
   * kcat exits after `count` messages (-c), which also flushes its block-buffered output, so the
   * consumer's end is its exit; -e (exit at the end of every partition) is a backstop for the
   * drain, where everything is already stored.
   */
  private consumer_args(topic: string, count: number, exit_at_end: boolean): string[] {
    return ['-C', '-b', this.running.bootstrap, '-t', topic, '-o', 'beginning', '-q', '-c', String(count), ...(exit_at_end ? ['-e'] : [])];
  }

  async publish_consume(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult> {
    const topic = await this.new_topic(params.partitions);
    const files = this.message_files(params);
    const output = new KcatConsumerOutput(path.join(this.workdir, `${this.id}-consumed-${process.pid}-${++this.files}.txt`), params.payload_bytes + 1);
    const started = performance.now();
    const consumer = run_child(this.kcat, this.consumer_args(topic, params.messages, false), output.stdout_fd);
    const polling = setInterval(() => progress(output.count), 1_000);
    try {
      const produced = await this.produce(topic, params, files);
      let expected = params.messages;
      if (produced.truncated) {
        // Fewer were published: the consumer (told to wait for all) is stopped once it has the rest.
        expected = await this.topic_size(topic, params.partitions);
        const deadline = performance.now() + GRACE_MS;
        while (output.count < expected && performance.now() < deadline && consumer.child.exitCode === null) await new Promise((resolve) => setTimeout(resolve, 100));
        await stop_child(consumer);
      } else {
        // kcat exits by itself after the last message (-c).
        const left_ms = Math.max(1, params.time_limit_ms - (performance.now() - started));
        if (!(await wait_child(consumer, left_ms + GRACE_MS))) throw new Error(`kcat consumer: ${output.count} of ${expected} messages within the time limit`);
        const { code, signal } = await consumer.exited;
        if (code !== 0) throw new Error(`kcat consumer exited with ${code ?? signal}:\n${consumer.stderr()}`);
      }
      const elapsed_ms = performance.now() - started;
      output.check(expected);
      progress(expected);
      return result(expected, params, elapsed_ms, produced.truncated);
    } finally {
      clearInterval(polling);
      await stop_child(consumer);
      output.close();
    }
  }

  async latency(_params: LatencyParams): Promise<LatencyResult> {
    throw new Error('not supported with kcat');
  }

  async drain(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult> {
    const topic = await this.new_topic(params.partitions);
    const produced = await this.produce(topic, params, this.message_files(params));
    const stored = await this.topic_size(topic, params.partitions);
    if (produced.truncated || stored !== params.messages) throw new Error(`drain: ${stored} of ${params.messages} messages published within ${params.time_limit_ms} ms`);
    const output = new KcatConsumerOutput(path.join(this.workdir, `${this.id}-consumed-${process.pid}-${++this.files}.txt`), params.payload_bytes + 1);
    const polling = setInterval(() => progress(output.count), 1_000);
    try {
      const started = performance.now();
      const consumer = run_child(this.kcat, this.consumer_args(topic, stored, true), output.stdout_fd);
      const ended = await wait_child(consumer, params.time_limit_ms);
      const elapsed_ms = performance.now() - started;
      const { code, signal } = await consumer.exited;
      if (ended && code !== 0) throw new Error(`kcat consumer exited with ${code ?? signal}:\n${consumer.stderr()}`);
      const count = output.count;
      if (ended) output.check(stored);
      progress(count);
      return result(count, params, elapsed_ms, !ended);
    } finally {
      clearInterval(polling);
      output.close();
    }
  }
}

// ------------------------------------------------------------------ SDK and @platformatic/kafka

// @platformatic/kafka 2.x targets Node 22 and calls Promise.withResolvers; this project runs on
// Node 20, so provide it (as test/kafka/platformatic.test.ts does) before the client is used.
const promise_ctor = Promise as unknown as { withResolvers?: () => unknown };
if (typeof promise_ctor.withResolvers !== 'function') {
  promise_ctor.withResolvers = () => {
    let resolve!: (value: unknown) => void;
    let reject!: (reason?: unknown) => void;
    const promise = new Promise((ok, fail) => {
      resolve = ok;
      reject = fail;
    });
    return { promise, resolve, reject };
  };
}

function package_version(name: string): string {
  try {
    const file = path.resolve(import.meta.dirname, '..', '..', '..', 'node_modules', name, 'package.json');
    return (JSON.parse(fs.readFileSync(file, 'utf8')) as { version?: string }).version ?? '?';
  } catch {
    return '?';
  }
}

/** A running group consumer as the client-library systems below use it. */
interface GroupConsumerHandle {
  /** Resolves once the consumer has its first assignment. */
  joined: Promise<void>;
  /** Resolves once `expected()` messages arrived (bounded by the time limit). */
  done: Promise<void>;
  received(): number;
  joined_at(): number;
  recheck(): void;
  close(): Promise<void>;
}

type OnMessages = (values: Array<Buffer | null>, received_at: number) => void;

/**
 * A client-library system (kafkajs, SDK, @platformatic/kafka): the same workloads for each —
 * sends of `send_messages` messages, `sends_in_flight` of them outstanding per producer, and one
 * group consumer — with the client-specific parts in `open_producer` and `open_consumer`.
 */
abstract class ClientLibrarySystem extends SluiceSystem {
  protected readonly send_messages: number;
  protected readonly sends_in_flight: number;
  protected groups = 0;

  constructor(options: SluiceSystemsOptions) {
    super('fsync', options);
    this.send_messages = options.client_send_messages ?? 1000;
    this.sends_in_flight = options.client_sends_in_flight ?? 8;
  }

  /** A connected producer: `send(topic, values)` resolves once all are acknowledged (acks=all). */
  protected abstract open_producer(index: number): Promise<{ send: (topic: string, values: Buffer[]) => Promise<unknown>; close: () => Promise<void> }>;
  protected abstract open_consumer(topic: string, expected: () => number, on_messages: OnMessages, time_limit_ms: number): Promise<GroupConsumerHandle>;

  protected consumer_state(expected: () => number, time_limit_ms: number, what: string) {
    let received = 0;
    let finish!: () => void;
    let fail!: (error: Error) => void;
    const done = new Promise<void>((resolve, reject) => {
      finish = resolve;
      fail = reject;
    });
    done.catch(() => undefined);
    return {
      done: within(done, time_limit_ms, what),
      fail,
      add(count: number) {
        received += count;
        if (received >= expected()) finish();
      },
      received: () => received,
      recheck: () => {
        if (received >= expected()) finish();
      },
    };
  }

  private async produce(topic: string, params: PublishParams, progress?: (messages_done: number) => void): Promise<{ acknowledged: number; elapsed_ms: number; truncated: boolean }> {
    const producers = await Promise.all(Array.from({ length: params.producers }, (_, i) => within(this.open_producer(i), GRACE_MS, `${this.id} producer connect`)));
    try {
      const value = Buffer.alloc(params.payload_bytes, 0x61);
      const full = Array.from({ length: this.send_messages }, () => value);
      let acknowledged = 0;
      const started = performance.now();
      const deadline = started + params.time_limit_ms;
      const shares = split(params.messages, params.producers);
      await within(
        Promise.all(
          producers.map((producer, i) =>
            pump_sends(
              shares[i]!,
              this.send_messages,
              this.sends_in_flight,
              deadline,
              (count) => producer.send(topic, count === full.length ? full : full.slice(0, count)),
              (count) => {
                acknowledged += count;
                progress?.(acknowledged);
              },
            ),
          ),
        ),
        params.time_limit_ms + GRACE_MS,
        `${this.id} publish`,
      );
      return { acknowledged, elapsed_ms: performance.now() - started, truncated: acknowledged < params.messages };
    } finally {
      await Promise.all(producers.map((producer) => within(producer.close(), GRACE_MS, `${this.id} producer close`).catch(() => undefined)));
    }
  }

  async publish(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult> {
    const topic = await this.new_topic(params.partitions);
    const produced = await this.produce(topic, params, progress);
    return result(produced.acknowledged, params, produced.elapsed_ms, produced.truncated);
  }

  async publish_consume(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult> {
    const topic = await this.new_topic(params.partitions);
    let expected = params.messages;
    const consumer = await this.open_consumer(topic, () => expected, () => progress(consumer.received()), params.time_limit_ms + 2 * GRACE_MS);
    try {
      await consumer.joined;
      const started = performance.now();
      const produced = await this.produce(topic, params);
      expected = produced.acknowledged;
      consumer.recheck();
      await consumer.done;
      return result(consumer.received(), params, performance.now() - started, produced.truncated);
    } finally {
      await consumer.close();
    }
  }

  async latency(params: LatencyParams): Promise<LatencyResult> {
    const topic = await this.new_topic(1);
    const total = Math.max(1, Math.round((params.rate_per_s * params.duration_ms) / 1000));
    const samples = latency_samples(total);
    let expected = total;
    const consumer = await this.open_consumer(
      topic,
      () => expected,
      (values, received_at) => {
        for (const value of values) samples.add(received_at - value!.readDoubleLE(0));
      },
      params.duration_ms + 2 * GRACE_MS,
    );
    try {
      await consumer.joined;
      const producer = await within(this.open_producer(0), GRACE_MS, `${this.id} producer connect`);
      try {
        const sent = await publish_at_fixed_rate(params, LATENCY_MAX_IN_FLIGHT, (values) => producer.send(topic, values).then(() => undefined));
        expected = sent;
        consumer.recheck();
        await consumer.done;
        return samples.result(sent);
      } finally {
        await within(producer.close(), GRACE_MS, `${this.id} producer close`).catch(() => undefined);
      }
    } finally {
      await consumer.close();
    }
  }

  async drain(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult> {
    const topic = await this.new_topic(params.partitions);
    // The backlog is written by the lean client for every client library, so each consumer reads
    // the same log (no client's own headers or batch sizes) and only the consumer is timed.
    const produced = await publish({ host: this.running.host, port: this.running.port, topic, partitions: params.partitions, producers: params.producers, messages: params.messages, payload_bytes: params.payload_bytes, time_limit_ms: params.time_limit_ms });
    if (produced.truncated) throw new Error(`drain: only ${produced.acknowledged} of ${params.messages} messages published within ${params.time_limit_ms} ms`);
    // Timed from the first assignment (a fresh group on an idle broker joins in one round).
    const consumer = await this.open_consumer(topic, () => produced.acknowledged, () => progress(consumer.received()), params.time_limit_ms + GRACE_MS);
    try {
      await consumer.joined;
      await consumer.done;
      return result(consumer.received(), params, performance.now() - consumer.joined_at(), false);
    } finally {
      await consumer.close();
    }
  }
}

/**
 * kafkajs 2.2.4: producers with acks -1 and the default partitioner, sends of 1,000 messages with
 * 8 outstanding; one group consumer counting messages with eachBatch.
 */
class KafkajsSystem extends ClientLibrarySystem {
  readonly id = 'sluice-kafkajs-fsync';
  readonly label = 'Sluice (kafkajs)';
  readonly client = `kafkajs ${KAFKAJS_VERSION}`;

  private kafka(client_id: string): Kafka {
    return new Kafka({ brokers: [this.running.bootstrap], clientId: client_id, logLevel: logLevel.NOTHING, retry: { retries: 3, initialRetryTime: 100 } });
  }

  protected async open_producer(index: number) {
    const producer: Producer = this.kafka(`bench-producer-${index}`).producer({ allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
    await producer.connect();
    return {
      send: (topic: string, values: Buffer[]) => producer.send({ topic, acks: -1, messages: values.map((value) => ({ value })) }),
      close: () => producer.disconnect(),
    };
  }

  protected async open_consumer(topic: string, expected: () => number, on_messages: OnMessages, time_limit_ms: number): Promise<GroupConsumerHandle> {
    const consumer: Consumer = this.kafka('bench-consumer').consumer({
      groupId: `bench-${this.id}-${++this.groups}`,
      maxWaitTimeInMs: 100,
      minBytes: 1,
      maxBytesPerPartition: 1024 * 1024,
      maxBytes: 8 * 1024 * 1024,
      sessionTimeout: 30_000,
      heartbeatInterval: 3_000,
    });
    const state = this.consumer_state(expected, time_limit_ms, 'kafkajs consumer');
    let joined_at = 0;
    const joined = new Promise<void>((resolve) =>
      consumer.on(consumer.events.GROUP_JOIN, () => {
        if (joined_at === 0) joined_at = performance.now();
        resolve();
      }),
    );
    consumer.on(consumer.events.CRASH, (event) => state.fail(new Error(`kafkajs consumer crashed: ${String(event.payload.error)}`)));
    await within(consumer.connect(), GRACE_MS, 'kafkajs consumer connect');
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({
      eachBatch: async ({ batch }) => {
        const received_at = performance.now();
        on_messages(
          batch.messages.map((message) => message.value),
          received_at,
        );
        state.add(batch.messages.length);
      },
    });
    return {
      joined: within(joined, GRACE_MS, 'kafkajs consumer group join'),
      done: state.done,
      received: state.received,
      joined_at: () => joined_at,
      recheck: state.recheck,
      close: () => within(consumer.disconnect(), GRACE_MS, 'kafkajs consumer disconnect').catch(() => undefined),
    };
  }
}

/** Queue workload, SDK queue consumer: records acquired per ShareFetch, and handlers running at once per consumer. */
const QUEUE_MAX_RECORDS = 500;
const QUEUE_CONCURRENCY = 16;

/**
 * The project's SDK (src/sdk). Producer: its defaults (idempotent, acks -1, lingerMs 5,
 * batchBytes 1,000,000, maxInFlightRequests 5, a message-id header on every message), driven like
 * kafkajs: sends of 1,000 messages, 8 outstanding. Consumer: a group member with eachBatch and its
 * defaults except maxWaitTimeInMs 100 (as the kafkajs system). Queue: share-group members made with
 * queueConsumer (maxRecords 500), each running eachMessage with concurrency 16.
 */
class SdkSystem extends ClientLibrarySystem {
  readonly id = 'sluice-sdk-fsync';
  readonly label = 'Sluice (SDK)';
  readonly client = 'Sluice SDK (src/sdk), producer defaults, 8 sends of 1,000 in flight';

  private sluice(client_id: string): Sluice {
    return new Sluice({ brokers: [this.running.bootstrap], clientId: client_id, retry: { retries: 3, initialRetryTime: 100 } });
  }

  protected async open_producer(index: number) {
    const producer = this.sluice(`bench-producer-${index}`).producer({ allowAutoTopicCreation: false });
    await producer.connect();
    return {
      send: (topic: string, values: Buffer[]) => producer.send({ topic, acks: -1, messages: values.map((value) => ({ value })) }),
      close: () => producer.disconnect(),
    };
  }

  protected async open_consumer(topic: string, expected: () => number, on_messages: OnMessages, time_limit_ms: number): Promise<GroupConsumerHandle> {
    const consumer = this.sluice('bench-consumer').consumer({ groupId: `bench-${this.id}-${++this.groups}`, maxWaitTimeInMs: 100, allowAutoTopicCreation: false });
    const state = this.consumer_state(expected, time_limit_ms, 'SDK consumer');
    let joined_at = 0;
    consumer.on(consumer.events.CRASH, (event) => {
      const payload = event.payload as { error?: unknown; restart?: boolean };
      if (payload.restart === false) state.fail(new Error(`SDK consumer crashed: ${String(payload.error)}`));
    });
    const close = () => within(consumer.disconnect(), GRACE_MS, 'SDK consumer disconnect').catch(() => undefined);
    const joined = (async () => {
      await within(consumer.connect(), GRACE_MS, 'SDK consumer connect');
      await consumer.subscribe({ topic, fromBeginning: true });
      // run() resolves once the first assignment and its starting positions are in place.
      await within(
        consumer.run({
          eachBatch: async ({ batch }) => {
            const received_at = performance.now();
            on_messages(
              batch.messages.map((message) => message.value),
              received_at,
            );
            state.add(batch.messages.length);
          },
        }),
        GRACE_MS,
        'SDK consumer group join',
      );
      joined_at = performance.now();
    })();
    joined.catch(() => undefined);
    return { joined, done: state.done, received: state.received, joined_at: () => joined_at, recheck: state.recheck, close };
  }

  /**
   * Queue delivery with per-message acknowledgement: the backlog is written by the lean client (as
   * for drain), then `params.consumers` members of a fresh share group each handle messages one by
   * one; a handler that resolves accepts its message (the SDK sends the acknowledgement with its
   * next ShareFetch). Timed from the first handler call to the handler call that makes the count
   * reach the backlog; bounded by the time limit (then the result is truncated).
   */
  async queue(params: QueueParams, progress: (messages_done: number) => void): Promise<ThroughputResult> {
    const topic = await this.new_topic(params.partitions);
    const produced = await publish({ host: this.running.host, port: this.running.port, topic, partitions: params.partitions, producers: params.producers, messages: params.messages, payload_bytes: params.payload_bytes, time_limit_ms: params.time_limit_ms });
    if (produced.truncated) throw new Error(`queue: only ${produced.acknowledged} of ${params.messages} messages published within ${params.time_limit_ms} ms`);
    const expected = produced.acknowledged;
    const group_id = `bench-${this.id}-queue-${++this.groups}`;
    let handled = 0;
    let duplicates = 0;
    let started = 0;
    let finished = 0;
    let finish!: () => void;
    const all_handled = new Promise<void>((resolve) => (finish = resolve));
    // Distinct offsets per partition (a fresh topic: offsets below the backlog size), so a redelivery is not counted twice.
    const seen = Array.from({ length: params.partitions }, () => new Uint8Array(expected));
    const each_message = async ({ partition, message }: QueueMessagePayload): Promise<void> => {
      if (started === 0) started = performance.now();
      const offset = Number(message.offset);
      const marks = seen[partition];
      if (!marks || offset < 0 || offset >= marks.length || marks[offset] === 1) {
        duplicates++;
        return;
      }
      marks[offset] = 1;
      handled++;
      if ((handled & 1023) === 0) progress(handled);
      if (handled === expected) {
        finished = performance.now();
        finish();
      }
    };
    const consumers = Array.from({ length: params.consumers }, (_, i) => this.sluice(`bench-queue-${i}`).queueConsumer({ groupId: group_id, maxRecords: QUEUE_MAX_RECORDS }));
    try {
      await within(
        Promise.all(
          consumers.map(async (consumer) => {
            await consumer.subscribe({ topics: [topic] });
            // run() resolves once the member has its first assignment; fetching goes on after.
            await consumer.run({ concurrency: QUEUE_CONCURRENCY, eachMessage: each_message });
          }),
        ),
        GRACE_MS,
        'SDK queue consumers join',
      );
      // Bounded: the first message within GRACE_MS of joining, then all of them within the time
      // limit of the first; each round waits at most 50 ms.
      const joined_at = performance.now();
      while (handled < expected) {
        const now = performance.now();
        const deadline = started === 0 ? joined_at + GRACE_MS : started + params.time_limit_ms;
        if (now >= deadline) break;
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([all_handled, new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.min(deadline - now, 50))))]);
        clearTimeout(timer);
      }
      const end = finished !== 0 ? finished : performance.now();
      const count = handled;
      progress(count);
      if (started === 0) throw new Error(`queue: no message delivered to ${params.consumers} SDK queue consumers within ${GRACE_MS} ms of joining`);
      if (duplicates > 0) process.stderr.write(`${this.id} queue: ${duplicates} redeliveries of already handled messages (not counted)\n`);
      return result(count, params, end - started, count < expected);
    } finally {
      await Promise.all(consumers.map((consumer) => within(consumer.disconnect(), GRACE_MS, 'SDK queue consumer disconnect').catch(() => undefined)));
    }
  }
}

/**
 * @platformatic/kafka 2.x. Producer: acks=all (-1), otherwise its defaults (not idempotent), sends
 * of 1,000 messages with 8 outstanding, as kafkajs. Consumer: a group member reading its message
 * stream ('data' per message) from the earliest offset, maxWaitTime 100 ms, autocommit on.
 */
class PlatformaticSystem extends ClientLibrarySystem {
  readonly id = 'sluice-platformatic-fsync';
  readonly label = 'Sluice (@platformatic/kafka)';
  readonly client = `@platformatic/kafka ${package_version('@platformatic/kafka')}, 8 sends of 1,000 in flight`;

  private base(client_id: string) {
    return { clientId: client_id, bootstrapBrokers: [this.running.bootstrap], timeout: 30_000, connectTimeout: 10_000, retries: 3, retryDelay: 100 };
  }

  protected async open_producer(index: number) {
    const producer = new PlatformaticProducer({ ...this.base(`bench-producer-${index}`), acks: ProduceAcks.ALL, autocreateTopics: false });
    return {
      send: (topic: string, values: Buffer[]) => producer.send({ messages: values.map((value) => ({ topic, value })) }),
      close: () => producer.close(),
    };
  }

  protected async open_consumer(topic: string, expected: () => number, on_messages: OnMessages, time_limit_ms: number): Promise<GroupConsumerHandle> {
    const consumer = new PlatformaticConsumer({
      ...this.base('bench-consumer'),
      groupId: `bench-${this.id}-${++this.groups}`,
      sessionTimeout: 30_000,
      rebalanceTimeout: 30_000,
      heartbeatInterval: 3_000,
      maxWaitTime: 100,
      maxBytesPerPartition: 1024 * 1024,
      maxBytes: 8 * 1024 * 1024,
    });
    const state = this.consumer_state(expected, time_limit_ms, '@platformatic/kafka consumer');
    let joined_at = 0;
    let stream: Awaited<ReturnType<typeof consumer.consume>> | null = null;
    const close = async () => {
      if (stream) await within(stream.close(), GRACE_MS, '@platformatic/kafka stream close').catch(() => undefined);
      await within(consumer.close(true), GRACE_MS, '@platformatic/kafka consumer close').catch(() => undefined);
    };
    const joined = (async () => {
      // consume() resolves once the member joined the group and has its assignment.
      stream = await within(consumer.consume({ topics: [topic], mode: 'committed', fallbackMode: 'earliest', autocommit: true }), GRACE_MS, '@platformatic/kafka consumer group join');
      joined_at = performance.now();
      stream.on('data', (message) => {
        on_messages([message.value], performance.now());
        state.add(1);
      });
      stream.on('error', (error: Error) => state.fail(new Error(`@platformatic/kafka consumer stream: ${error.message}`)));
    })();
    joined.catch(() => undefined);
    return { joined, done: state.done, received: state.received, joined_at: () => joined_at, recheck: state.recheck, close };
  }
}
