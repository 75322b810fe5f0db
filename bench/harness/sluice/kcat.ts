// Sluice with kcat (librdkafka) as the client: producers and consumers are kcat child processes
// fed from and writing to files, so the payload never passes through this process. No latency,
// publish_single or drain_each workload. Unavailable when the kcat binary is missing. The client's
// CPU is this process's plus the kcat children's (counted once they exited and were reaped), over
// the timed part only: writing the message files and the drain's backlog is setup.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { client_cpu_seconds } from '../machine.ts';
import type { LatencyParams, LatencyResult, PublishParams, ThroughputResult, Unavailable } from '../types.ts';
import { split } from './lean_client.ts';
import { GRACE_MS, result, SluiceSystem, type SluiceSystemsOptions } from './system.ts';

export const KCAT_DEFAULT = '/usr/bin/kcat';
/** Bytes of a child's stderr kept for error messages. */
const STDERR_KEPT_BYTES = 16 * 1024;
const KCAT_ID = 'sluice-kcat-fsync';
const KCAT_LABEL = 'Sluice (kcat / librdkafka)';

/** The kcat system when it cannot run on this machine, with the reason (kcat missing). */
export function kcat_unavailable(options: SluiceSystemsOptions = {}): Unavailable[] {
  const reason = kcat_missing(options.kcat_path ?? KCAT_DEFAULT);
  return reason ? [{ id: KCAT_ID, label: KCAT_LABEL, reason }] : [];
}

function kcat_missing(kcat: string): string | null {
  const probe = spawnSync(kcat, ['-V'], { encoding: 'utf8', timeout: 10_000 });
  if (probe.error) return `${kcat} is not available (${probe.error.message})`;
  if (probe.status !== 0) return `\`${kcat} -V\` exited with ${probe.status}`;
  return null;
}

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
  const killed = await Promise.race([
    run.exited.then(() => true),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), 5_000))),
  ]);
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
    if (size !== count * this.line_bytes)
      throw new Error(`kcat consumer wrote ${size} bytes, expected ${count} lines of ${this.line_bytes} bytes`);
  }

  close(): void {
    fs.closeSync(this.fd);
    fs.rmSync(this.file, { force: true });
  }
}

export class KcatSystem extends SluiceSystem {
  readonly id = KCAT_ID;
  readonly label = KCAT_LABEL;
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

  /**
   * Runs one kcat producer per file; resolves with the elapsed time, the client's CPU over it (the
   * producers are reaped by then) and whether all ended by themselves.
   */
  private async produce(
    topic: string,
    params: PublishParams,
    files: string[],
    progress?: (messages_done: number) => void,
  ) {
    let polling: NodeJS.Timeout | undefined;
    const cpu_before = client_cpu_seconds();
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
      const client_cpu_s = client_cpu_seconds() - cpu_before;
      for (const [i, run] of runs.entries()) {
        const { code, signal } = await run.exited;
        if (ended[i] && code !== 0) throw new Error(`kcat producer exited with ${code ?? signal}:\n${run.stderr()}`);
      }
      return { elapsed_ms, client_cpu_s, truncated: ended.includes(false) };
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
    if (!produced.truncated && stored !== params.messages)
      throw new Error(`kcat reported success but the topic holds ${stored} of ${params.messages} messages`);
    progress(stored);
    return result(stored, params, produced.elapsed_ms, produced.truncated, produced.client_cpu_s);
  }

  /**
   * kcat exits after `count` messages (-c), which also flushes its block-buffered output, so the
   * consumer's end is its exit; -e (exit at the end of every partition) is a backstop for the
   * drain, where everything is already stored.
   */
  private consumer_args(topic: string, count: number, exit_at_end: boolean): string[] {
    return [
      '-C',
      '-b',
      this.running.bootstrap,
      '-t',
      topic,
      '-o',
      'beginning',
      '-q',
      '-c',
      String(count),
      ...(exit_at_end ? ['-e'] : []),
    ];
  }

  async publish_consume(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult> {
    const topic = await this.new_topic(params.partitions);
    const files = this.message_files(params);
    const output = new KcatConsumerOutput(
      path.join(this.workdir, `${this.id}-consumed-${process.pid}-${++this.files}.txt`),
      params.payload_bytes + 1,
    );
    const cpu_before = client_cpu_seconds();
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
        while (output.count < expected && performance.now() < deadline && consumer.child.exitCode === null)
          await new Promise((resolve) => setTimeout(resolve, 100));
        await stop_child(consumer);
      } else {
        // kcat exits by itself after the last message (-c).
        const left_ms = Math.max(1, params.time_limit_ms - (performance.now() - started));
        if (!(await wait_child(consumer, left_ms + GRACE_MS)))
          throw new Error(`kcat consumer: ${output.count} of ${expected} messages within the time limit`);
        const { code, signal } = await consumer.exited;
        if (code !== 0) throw new Error(`kcat consumer exited with ${code ?? signal}:\n${consumer.stderr()}`);
      }
      const elapsed_ms = performance.now() - started;
      const client_cpu_s = client_cpu_seconds() - cpu_before;
      output.check(expected);
      progress(expected);
      return result(expected, params, elapsed_ms, produced.truncated, client_cpu_s);
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
    if (produced.truncated || stored !== params.messages)
      throw new Error(`drain: ${stored} of ${params.messages} messages published within ${params.time_limit_ms} ms`);
    const output = new KcatConsumerOutput(
      path.join(this.workdir, `${this.id}-consumed-${process.pid}-${++this.files}.txt`),
      params.payload_bytes + 1,
    );
    const polling = setInterval(() => progress(output.count), 1_000);
    try {
      // The backlog's kcat producers were reaped before this, so only the consumer's CPU counts.
      const cpu_before = client_cpu_seconds();
      const started = performance.now();
      const consumer = run_child(this.kcat, this.consumer_args(topic, stored, true), output.stdout_fd);
      const ended = await wait_child(consumer, params.time_limit_ms);
      const elapsed_ms = performance.now() - started;
      const client_cpu_s = client_cpu_seconds() - cpu_before;
      const { code, signal } = await consumer.exited;
      if (ended && code !== 0) throw new Error(`kcat consumer exited with ${code ?? signal}:\n${consumer.stderr()}`);
      const count = output.count;
      if (ended) output.check(stored);
      progress(count);
      return result(count, params, elapsed_ms, !ended, client_cpu_s);
    } finally {
      clearInterval(polling);
      output.close();
    }
  }
}
