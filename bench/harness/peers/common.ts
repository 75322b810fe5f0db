// Shared machinery for the peer-broker drivers (RabbitMQ, NATS JetStream, Redis Streams):
// finding or installing a server binary, starting and stopping a server process on loopback,
// and one workload engine that runs publish / publish_consume / latency / drain against any
// broker through a small adapter (PeerAdapter). Every loop here is bounded in count and time.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LatencyParams, LatencyResult, PublishParams, QueueParams, ThroughputResult, Unavailable } from '../types.ts';

// ---------------------------------------------------------------- tunables

/** Unacknowledged publishes allowed per producer connection. */
export const PUBLISH_WINDOW = 1000;
/** Messages a consumer may hold unacknowledged (AMQP prefetch, JetStream pull batch, XREADGROUP COUNT). */
export const CONSUMER_PREFETCH = 1000;
/** A consumer acknowledges cumulatively (or in one batch) every this many messages, and once at the end. */
export const CONSUMER_ACK_EVERY = 100;
/** Messages a queue-workload consumer may hold unacknowledged (AMQP prefetch); it acknowledges each on its own. */
export const QUEUE_PREFETCH = 500;
/** Queue workload: how long after subscribing the first message may take to arrive. */
export const QUEUE_FIRST_MESSAGE_MS = 30_000;
/** After a phase's time limit, how long in-flight acknowledgements / deliveries may still take. */
export const SETTLE_GRACE_MS = 60_000;
/** After a latency run's publishing ends, how long to wait for the remaining deliveries. */
export const LATENCY_TAIL_WAIT_MS = 10_000;
/** How long a server may take to accept connections after it was spawned. */
export const START_TIMEOUT_MS = 60_000;
/** SIGTERM, then SIGKILL after this long. */
export const STOP_GRACE_MS = 15_000;
/** apt-get may take a while on a fresh machine. */
const APT_TIMEOUT_MS = 10 * 60_000;
const PROGRESS_EVERY = 1000;

// ---------------------------------------------------------------- small helpers

const require = createRequire(import.meta.url);

/** "name version" of an installed npm package, for SystemUnderTest.client. */
export function package_label(name: string): string {
  try {
    const pkg = require(`${name}/package.json`) as { version?: string };
    return `${name} ${pkg.version ?? '?'}`;
  } catch {
    // Packages whose exports map hides package.json: read it from node_modules directly.
    try {
      const main = require.resolve(name);
      let dir = path.dirname(main);
      for (let i = 0; i < 8; i++) {
        const file = path.join(dir, 'package.json');
        if (fs.existsSync(file)) {
          const pkg = JSON.parse(fs.readFileSync(file, 'utf8')) as { name?: string; version?: string };
          if (pkg.name === name) return `${name} ${pkg.version ?? '?'}`;
        }
        dir = path.dirname(dir);
      }
    } catch {
      /* fall through */
    }
    return name;
  }
}

export function error_text(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A free TCP port on 127.0.0.1 (bound, read, released). */
export async function free_port(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('could not obtain a free port'))));
    });
  });
}

/** n distinct free ports. */
export async function free_ports(n: number): Promise<number[]> {
  const ports = new Set<number>();
  for (let attempt = 0; ports.size < n && attempt < n * 20; attempt++) ports.add(await free_port());
  if (ports.size < n) throw new Error(`could not obtain ${n} distinct free ports`);
  return [...ports];
}

/** True once something accepts a TCP connection on 127.0.0.1:port. */
export async function port_accepts(port: number, timeout_ms = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => {
      socket.removeAllListeners();
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeout_ms, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

export function run_file(file: string, args: string[], timeout_ms: number, env?: NodeJS.ProcessEnv): Promise<{ ok: boolean; output: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: timeout_ms, env: env ?? process.env, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
      resolve({ ok: !error, output: `${stdout}${stderr}${error ? `\n${error.message}` : ''}` });
    });
  });
}

const SEARCH_DIRS = ['/usr/local/sbin', '/usr/local/bin', '/usr/sbin', '/usr/bin', '/sbin', '/bin'];

/** Absolute path of an executable: an absolute path as given, else looked up in PATH and the usual dirs. */
export function find_executable(name: string): string | undefined {
  const candidates = path.isAbsolute(name)
    ? [name]
    : [...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean), ...SEARCH_DIRS].map((dir) => path.join(dir, name));
  for (const candidate of candidates) {
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      /* not here */
    }
  }
  return undefined;
}

/**
 * Makes sure `executable` exists, installing Debian package `apt_package` when it does not and we
 * are root (apt-get install; on failure apt-get update and one more install). Returns the
 * executable's path, or the reason it is not available.
 */
export async function ensure_executable(executable: string, apt_package: string): Promise<{ path: string } | { reason: string }> {
  const found = find_executable(executable);
  if (found) return { path: found };
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
    return { reason: `${executable} not found, and installing Debian package ${apt_package} needs root (run: apt-get install -y ${apt_package})` };
  }
  const apt = find_executable('apt-get');
  if (!apt) return { reason: `${executable} not found and apt-get is not available to install ${apt_package}` };
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  let result = await run_file(apt, ['install', '-y', apt_package], APT_TIMEOUT_MS, env);
  if (!result.ok) {
    const update = await run_file(apt, ['update'], APT_TIMEOUT_MS, env);
    if (!update.ok) return { reason: `apt-get update failed while installing ${apt_package}: ${tail(update.output, 400)}` };
    result = await run_file(apt, ['install', '-y', apt_package], APT_TIMEOUT_MS, env);
  }
  if (!result.ok) return { reason: `apt-get install -y ${apt_package} failed: ${tail(result.output, 400)}` };
  const installed = find_executable(executable);
  return installed ? { path: installed } : { reason: `installed ${apt_package} but ${executable} is still missing` };
}

export function tail(text: string, chars: number): string {
  const trimmed = text.trim();
  return trimmed.length <= chars ? trimmed : `…${trimmed.slice(-chars)}`;
}

export function read_tail(file: string, chars = 2000): string {
  try {
    const text = fs.readFileSync(file, 'utf8');
    return tail(text, chars);
  } catch {
    return '';
  }
}

export function unavailable(id: string, label: string, reason: string): Unavailable {
  return { id, label, reason };
}

export function is_unavailable<T extends object>(value: T | Unavailable): value is Unavailable {
  return 'reason' in value && !('start' in value);
}

// ---------------------------------------------------------------- processes

/** Server processes still running, killed with SIGKILL if this Node process exits first. */
const live_pids = new Set<number>();
let exit_hook_installed = false;

function install_exit_hook(): void {
  if (exit_hook_installed) return;
  exit_hook_installed = true;
  process.on('exit', () => {
    for (const pid of live_pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
  });
}

export function track_pid(pid: number): void {
  install_exit_hook();
  live_pids.add(pid);
}

export function untrack_pid(pid: number): void {
  live_pids.delete(pid);
}

export function pid_alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie still answers kill(0); treat it as gone.
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return true;
  }
}

/** SIGTERM, wait up to grace_ms, then SIGKILL and wait a little more. */
export async function kill_pid(pid: number, grace_ms = STOP_GRACE_MS): Promise<void> {
  if (!pid_alive(pid)) {
    untrack_pid(pid);
    return;
  }
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    /* gone */
  }
  const term_deadline = performance.now() + grace_ms;
  while (pid_alive(pid) && performance.now() < term_deadline) await sleep(50);
  if (pid_alive(pid)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone */
    }
    const kill_deadline = performance.now() + 5000;
    while (pid_alive(pid) && performance.now() < kill_deadline) await sleep(50);
  }
  untrack_pid(pid);
}

/** Child pids of pid, from /proc (Linux). */
export function child_pids(pid: number): number[] {
  const children: number[] = [];
  try {
    for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
      try {
        const text = fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').trim();
        if (text) children.push(...text.split(/\s+/).map(Number).filter((n) => n > 0));
      } catch {
        /* task ended */
      }
    }
  } catch {
    /* process ended */
  }
  return children;
}

/** Descendants of pid (breadth first, bounded). */
export function descendant_pids(pid: number): number[] {
  const out: number[] = [];
  const queue = [pid];
  while (queue.length > 0 && out.length < 1000) {
    const next = queue.shift()!;
    for (const child of child_pids(next)) {
      out.push(child);
      queue.push(child);
    }
  }
  return out;
}

export function process_name(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

export interface SpawnedServer {
  child: ChildProcess;
  pid: number;
  log_file: string;
  /** Set once the process has exited. */
  exited: () => boolean;
}

/** Spawns a server with stdout and stderr appended to log_file; tracked for cleanup on exit. */
export function spawn_server(file: string, args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; log_file: string }): SpawnedServer {
  const fd = fs.openSync(options.log_file, 'a');
  let exited = false;
  let child: ChildProcess;
  try {
    child = spawn(file, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', fd, fd] });
  } finally {
    fs.closeSync(fd);
  }
  child.on('exit', () => {
    exited = true;
  });
  child.on('error', () => {
    exited = true;
  });
  if (child.pid === undefined) throw new Error(`could not spawn ${file}`);
  track_pid(child.pid);
  return { child, pid: child.pid, log_file: options.log_file, exited: () => exited };
}

/** Stops a spawned server (SIGTERM, then SIGKILL) and waits briefly until Node has reaped it. */
export async function stop_server(server: SpawnedServer, grace_ms = STOP_GRACE_MS): Promise<void> {
  await kill_pid(server.pid, grace_ms);
  const deadline = performance.now() + 2000;
  while (!server.exited() && performance.now() < deadline) await sleep(10);
}

/** Waits until `ready()` holds, failing early when the server exits; bounded by timeout_ms. */
export async function wait_until_ready(what: string, server: SpawnedServer, ready: () => Promise<boolean>, timeout_ms = START_TIMEOUT_MS): Promise<void> {
  const deadline = performance.now() + timeout_ms;
  let attempts = 0;
  while (performance.now() < deadline && attempts < 100_000) {
    attempts++;
    if (server.exited()) throw new Error(`${what} exited during start-up; log tail:\n${read_tail(server.log_file)}`);
    if (await ready()) return;
    await sleep(200);
  }
  throw new Error(`${what} did not become ready within ${timeout_ms} ms; log tail:\n${read_tail(server.log_file)}`);
}

/** A fresh directory under workdir, named after the system. */
export function make_temp_dir(workdir: string, id: string): string {
  fs.mkdirSync(workdir, { recursive: true });
  return fs.mkdtempSync(path.join(path.resolve(workdir), `${id}-`));
}

export function remove_dir(dir: string | undefined): void {
  if (!dir) return;
  try {
    fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  } catch {
    /* best effort */
  }
}

// ---------------------------------------------------------------- payloads

/** A payload of `bytes` bytes with some varied content (not all zeros). */
export function make_payload(bytes: number): Buffer {
  const buf = Buffer.alloc(Math.max(0, bytes));
  for (let i = 0; i < buf.length; i++) buf[i] = (i * 31 + 7) & 0xff;
  return buf;
}

/** Latency payloads carry the send time (performance.now(), float64 LE) at offset 0 and a sequence number at 8. */
export const LATENCY_HEADER_BYTES = 12;

export function stamp_payload(template: Buffer, seq: number): Buffer {
  const buf = Buffer.allocUnsafe(Math.max(template.length, LATENCY_HEADER_BYTES));
  template.copy(buf, 0);
  buf.writeUInt32LE(seq >>> 0, 8);
  buf.writeDoubleLE(performance.now(), 0);
  return buf;
}

export function read_stamp(payload: Uint8Array): { sent_at: number; seq: number } | undefined {
  if (payload.byteLength < LATENCY_HEADER_BYTES) return undefined;
  const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  return { sent_at: view.getFloat64(0, true), seq: view.getUint32(8, true) };
}

// ---------------------------------------------------------------- adapter contract

/** One producer connection. */
export interface PeerProducer {
  /** Publishes one message to destination `dest` (0-based index); resolves when the broker acknowledged it. */
  send(dest: number, payload: Buffer): Promise<void>;
  /** When the connection asks the sender to pause (socket buffer full), a promise to await before sending more. */
  backpressure(): Promise<void> | undefined;
  close(): Promise<void>;
}

/** One consumer connection. */
export interface PeerConsumer {
  /** Starts consuming destinations `dests`; on_message is called once per delivered message. */
  subscribe(dests: number[], on_message: (payload: Uint8Array) => void): Promise<void>;
  /** Acknowledges what is still unacknowledged, stops and closes. */
  close(): Promise<void>;
  /** An asynchronous failure (connection or channel error) seen since subscribe, if any. */
  failure(): Error | undefined;
}

/** What a broker driver provides to the workload engine for one run (one set of destinations). */
export interface PeerRun {
  /** Creates the destinations (queues / streams) and whatever consuming needs (consumer groups). */
  prepare(): Promise<void>;
  open_producer(): Promise<PeerProducer>;
  open_consumer(index: number): Promise<PeerConsumer>;
  /** Deletes the destinations and closes admin connections. */
  cleanup(): Promise<void>;
}

export type RunFactory = (partitions: number) => PeerRun;

/** A consumer for the queue workload: it acknowledges every message on its own. */
export interface PeerQueueConsumer {
  /**
   * Starts consuming destination `dest`: for each message, on_delivery when it arrives, then the
   * message's own acknowledgement is sent (handed to the connection), then on_acked.
   */
  subscribe(dest: number, on_delivery: () => void, on_acked: () => void): Promise<void>;
  /** Stops and closes (anything unacknowledged goes back to the queue). */
  close(): Promise<void>;
  /** An asynchronous failure (connection or channel error) seen since subscribe, if any. */
  failure(): Error | undefined;
}

/** A run that can also open queue-workload consumers. */
export interface QueuePeerRun extends PeerRun {
  open_queue_consumer(index: number): Promise<PeerQueueConsumer>;
}

// ---------------------------------------------------------------- workload engine

/** A promise that one waiter can wait on until notified, or until a deadline. */
class Signal {
  private waiters: Array<() => void> = [];
  notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) waiter();
  }
  /** Resolves on the next notify() or after max_ms, whichever comes first. */
  async wait(max_ms: number): Promise<void> {
    if (max_ms <= 0) return;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.waiters.push(resolve);
      timer = setTimeout(resolve, Math.min(max_ms, 2_147_000_000));
    });
    clearTimeout(timer);
  }
}

function throttled_progress(progress: (messages_done: number) => void): { tick: (done: number) => void; final: (done: number) => void } {
  let last = 0;
  return {
    tick(done: number) {
      if (done - last >= PROGRESS_EVERY) {
        last = done;
        progress(done);
      }
    },
    final(done: number) {
      last = done;
      progress(done);
    },
  };
}

/** Consumers used for P destinations and N producers: min(N, P) connections, destination d read by consumer d mod C. */
export function consumer_assignment(partitions: number, producers: number): number[][] {
  const consumers = Math.max(1, Math.min(producers, partitions));
  const groups: number[][] = Array.from({ length: consumers }, () => []);
  for (let d = 0; d < partitions; d++) groups[d % consumers]!.push(d);
  return groups;
}

interface PublishOutcome {
  acked: number;
  truncated: boolean;
  elapsed_ms: number;
}

/**
 * Publishes params.messages over params.producers connections (message i goes to destination
 * i mod partitions, producer i mod producers), at most PUBLISH_WINDOW unacknowledged per producer.
 * Stops issuing at deadline (truncated); waits up to SETTLE_GRACE_MS for outstanding acks.
 */
async function publish_all(
  run: PeerRun,
  params: PublishParams,
  payload_for: (seq: number) => Buffer,
  deadline: number,
  on_ack: (acked: number) => void,
): Promise<PublishOutcome> {
  const producers: PeerProducer[] = [];
  try {
    for (let p = 0; p < params.producers; p++) producers.push(await run.open_producer());
    const started = performance.now();
    let acked = 0;
    let truncated = false;
    const one = async (p: number, producer: PeerProducer): Promise<void> => {
      const signal = new Signal();
      let outstanding = 0;
      let failure: unknown;
      const hard_deadline = deadline + SETTLE_GRACE_MS;
      for (let seq = p; seq < params.messages; seq += params.producers) {
        if (failure !== undefined) break;
        if (performance.now() >= deadline) {
          truncated = true;
          break;
        }
        while (outstanding >= PUBLISH_WINDOW && failure === undefined) {
          const left = hard_deadline - performance.now();
          if (left <= 0) throw new Error(`publish acknowledgements stalled (${outstanding} outstanding)`);
          await signal.wait(left);
        }
        const pause = producer.backpressure();
        if (pause) await with_timeout(pause, Math.max(1, hard_deadline - performance.now()), 'producer backpressure');
        outstanding++;
        producer.send(seq % params.partitions, payload_for(seq)).then(
          () => {
            outstanding--;
            acked++;
            on_ack(acked);
            signal.notify();
          },
          (error: unknown) => {
            outstanding--;
            failure ??= error;
            signal.notify();
          },
        );
      }
      while (outstanding > 0) {
        const left = hard_deadline - performance.now();
        if (left <= 0) throw new Error(`publish acknowledgements stalled at the end (${outstanding} outstanding)`);
        await signal.wait(left);
      }
      if (failure !== undefined) throw failure instanceof Error ? failure : new Error(String(failure));
    };
    await Promise.all(producers.map((producer, p) => one(p, producer)));
    return { acked, truncated, elapsed_ms: performance.now() - started };
  } finally {
    await Promise.allSettled(producers.map((producer) => producer.close()));
  }
}

export async function with_timeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} timed out after ${Math.round(ms)} ms`)), Math.min(Math.max(ms, 1), 2_147_000_000));
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

function check_consumers(consumers: PeerConsumer[]): void {
  for (const consumer of consumers) {
    const failure = consumer.failure();
    if (failure) throw new Error(`consumer failed: ${failure.message}`);
  }
}

async function open_consumers(run: PeerRun, groups: number[][]): Promise<PeerConsumer[]> {
  const consumers: PeerConsumer[] = [];
  try {
    for (let c = 0; c < groups.length; c++) consumers.push(await run.open_consumer(c));
  } catch (error) {
    await Promise.allSettled(consumers.map((consumer) => consumer.close()));
    throw error;
  }
  return consumers;
}

async function with_run<T>(factory: RunFactory, partitions: number, body: (run: PeerRun) => Promise<T>): Promise<T> {
  const run = factory(partitions);
  try {
    await run.prepare();
    return await body(run);
  } finally {
    await with_timeout(run.cleanup(), 60_000, 'cleanup').catch(() => undefined);
  }
}

function check_params(params: PublishParams): void {
  if (!Number.isSafeInteger(params.messages) || params.messages < 0) throw new Error(`messages must be a non-negative integer, got ${params.messages}`);
  if (!Number.isSafeInteger(params.partitions) || params.partitions < 1) throw new Error(`partitions must be a positive integer, got ${params.partitions}`);
  if (!Number.isSafeInteger(params.producers) || params.producers < 1) throw new Error(`producers must be a positive integer, got ${params.producers}`);
  if (!(params.time_limit_ms > 0)) throw new Error(`time_limit_ms must be positive, got ${params.time_limit_ms}`);
}

/** Publish-only throughput. */
export async function run_publish(factory: RunFactory, params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult> {
  check_params(params);
  const payload = make_payload(params.payload_bytes);
  const report = throttled_progress(progress);
  return with_run(factory, params.partitions, async (run) => {
    const outcome = await publish_all(run, params, () => payload, performance.now() + params.time_limit_ms, report.tick);
    report.final(outcome.acked);
    return result(outcome.acked, params.payload_bytes, outcome.elapsed_ms, outcome.truncated);
  });
}

/** Publish with consumers running; ends when every acknowledged message was consumed. */
export async function run_publish_consume(
  factory: RunFactory,
  params: PublishParams,
  progress: (messages_done: number) => void,
): Promise<ThroughputResult> {
  check_params(params);
  const payload = make_payload(params.payload_bytes);
  const report = throttled_progress(progress);
  return with_run(factory, params.partitions, async (run) => {
    const groups = consumer_assignment(params.partitions, params.producers);
    const consumers = await open_consumers(run, groups);
    try {
      let consumed = 0;
      const signal = new Signal();
      const on_message = () => {
        consumed++;
        report.tick(consumed);
        if ((consumed & 255) === 0) signal.notify();
      };
      const started = performance.now();
      for (let c = 0; c < consumers.length; c++) await consumers[c]!.subscribe(groups[c]!, on_message);
      const outcome = await publish_all(run, params, () => payload, started + params.time_limit_ms, () => undefined);
      const hard_deadline = performance.now() + SETTLE_GRACE_MS;
      while (consumed < outcome.acked) {
        check_consumers(consumers);
        const left = hard_deadline - performance.now();
        if (left <= 0) throw new Error(`consumption stalled: ${consumed} of ${outcome.acked} consumed`);
        await signal.wait(Math.min(left, 5));
      }
      const elapsed = performance.now() - started;
      report.final(consumed);
      return result(consumed, params.payload_bytes, elapsed, outcome.truncated);
    } finally {
      await Promise.allSettled(consumers.map((consumer) => with_timeout(consumer.close(), 30_000, 'consumer close')));
    }
  });
}

/** Backlog drain: publish first (untimed), then time consuming everything. */
export async function run_drain(factory: RunFactory, params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult> {
  check_params(params);
  const payload = make_payload(params.payload_bytes);
  const report = throttled_progress(progress);
  return with_run(factory, params.partitions, async (run) => {
    const filled = await publish_all(run, params, () => payload, performance.now() + params.time_limit_ms, () => undefined);
    const groups = consumer_assignment(params.partitions, params.producers);
    const consumers = await open_consumers(run, groups);
    try {
      let consumed = 0;
      const signal = new Signal();
      const on_message = () => {
        consumed++;
        report.tick(consumed);
        if ((consumed & 255) === 0 || consumed >= filled.acked) signal.notify();
      };
      const started = performance.now();
      const deadline = started + params.time_limit_ms;
      for (let c = 0; c < consumers.length; c++) await consumers[c]!.subscribe(groups[c]!, on_message);
      while (consumed < filled.acked && performance.now() < deadline) {
        check_consumers(consumers);
        await signal.wait(Math.min(deadline - performance.now(), 5));
      }
      const elapsed = performance.now() - started;
      report.final(consumed);
      return result(consumed, params.payload_bytes, elapsed, filled.truncated || consumed < filled.acked);
    } finally {
      await Promise.allSettled(consumers.map((consumer) => with_timeout(consumer.close(), 30_000, 'consumer close')));
    }
  });
}

/**
 * Queue delivery with per-message acknowledgement: publish params.messages to the destination(s)
 * first (untimed, the same publishing as every other workload), then params.consumers consumers
 * (consumer c reads destination c mod partitions) acknowledge every message on its own. Timed from
 * the first delivery to the acknowledgement that makes the count reach the backlog; the first
 * delivery may take QUEUE_FIRST_MESSAGE_MS, the rest params.time_limit_ms (then truncated).
 */
export async function run_queue(factory: (partitions: number) => QueuePeerRun, params: QueueParams, progress: (messages_done: number) => void): Promise<ThroughputResult> {
  check_params(params);
  if (!Number.isSafeInteger(params.consumers) || params.consumers < 1) throw new Error(`consumers must be a positive integer, got ${params.consumers}`);
  const payload = make_payload(params.payload_bytes);
  const report = throttled_progress(progress);
  const run = factory(params.partitions);
  try {
    await run.prepare();
    const filled = await publish_all(run, params, () => payload, performance.now() + params.time_limit_ms, () => undefined);
    const consumers: PeerQueueConsumer[] = [];
    try {
      for (let c = 0; c < params.consumers; c++) consumers.push(await run.open_queue_consumer(c));
      const target = filled.acked;
      let acked = 0;
      let started = 0;
      let finished = 0;
      const signal = new Signal();
      const on_delivery = () => {
        if (started === 0) started = performance.now();
      };
      const on_acked = () => {
        acked++;
        report.tick(acked);
        if (acked === target) {
          finished = performance.now();
          signal.notify();
        } else if ((acked & 255) === 0) signal.notify();
      };
      const subscribed_at = performance.now();
      for (let c = 0; c < consumers.length; c++) await consumers[c]!.subscribe(c % params.partitions, on_delivery, on_acked);
      while (acked < target) {
        for (const consumer of consumers) {
          const failure = consumer.failure();
          if (failure) throw new Error(`queue consumer failed: ${failure.message}`);
        }
        const deadline = started === 0 ? subscribed_at + QUEUE_FIRST_MESSAGE_MS : started + params.time_limit_ms;
        const left = deadline - performance.now();
        if (left <= 0) break;
        await signal.wait(Math.min(left, 5));
      }
      if (started === 0 && target > 0) throw new Error(`no message delivered to ${params.consumers} consumers within ${QUEUE_FIRST_MESSAGE_MS} ms`);
      const end = finished !== 0 ? finished : performance.now();
      report.final(acked);
      return result(acked, params.payload_bytes, end - started, filled.truncated || acked < target);
    } finally {
      await Promise.allSettled(consumers.map((consumer) => with_timeout(consumer.close(), 30_000, 'queue consumer close')));
    }
  } finally {
    await with_timeout(run.cleanup(), 60_000, 'cleanup').catch(() => undefined);
  }
}

/** Fixed-rate publishing to one destination with one consumer measuring end-to-end latency. */
export async function run_latency(factory: RunFactory, params: LatencyParams): Promise<LatencyResult> {
  if (!(params.rate_per_s > 0) || !(params.duration_ms > 0)) throw new Error('rate_per_s and duration_ms must be positive');
  const total = Math.max(1, Math.floor((params.rate_per_s * params.duration_ms) / 1000));
  const template = make_payload(Math.max(params.payload_bytes, LATENCY_HEADER_BYTES));
  return with_run(factory, 1, async (run) => {
    const [consumer] = await open_consumers(run, [[0]]);
    const producer = await run.open_producer();
    const samples = new Float64Array(total);
    const seen = new Uint8Array(total);
    let received = 0;
    let sent = 0;
    let acked = 0;
    let failure: unknown;
    const signal = new Signal();
    try {
      await consumer!.subscribe([0], (payload) => {
        const now = performance.now();
        const stamp = read_stamp(payload);
        if (!stamp || stamp.seq >= total || seen[stamp.seq]) return;
        seen[stamp.seq] = 1;
        samples[received++] = now - stamp.sent_at;
        if (received >= sent) signal.notify();
      });
      const started = performance.now();
      const interval_ms = 1000 / params.rate_per_s;
      // Publishing may fall behind schedule; it stops sending at duration + 5 s in any case.
      const stop_at = started + params.duration_ms + 5000;
      while (sent < total && failure === undefined) {
        const now = performance.now();
        if (now >= stop_at) break;
        const due = Math.min(total, Math.floor((now - started) / interval_ms) + 1);
        while (sent < due) {
          const pause = producer.backpressure();
          if (pause) await with_timeout(pause, Math.max(1, stop_at - performance.now()), 'producer backpressure');
          producer.send(0, stamp_payload(template, sent)).then(
            () => {
              acked++;
            },
            (error: unknown) => {
              failure ??= error;
            },
          );
          sent++;
        }
        const next_at = started + sent * interval_ms;
        await sleep(Math.max(0, next_at - performance.now()));
      }
      const tail_deadline = performance.now() + LATENCY_TAIL_WAIT_MS;
      while (received < sent && performance.now() < tail_deadline) {
        check_consumers([consumer!]);
        await signal.wait(Math.min(50, tail_deadline - performance.now()));
      }
      const ack_deadline = performance.now() + LATENCY_TAIL_WAIT_MS;
      while (acked < sent && failure === undefined && performance.now() < ack_deadline) await sleep(5);
      if (failure !== undefined) throw failure instanceof Error ? failure : new Error(String(failure));
      return { samples_ms: samples.slice(0, received), sent, received };
    } finally {
      await Promise.allSettled([with_timeout(producer.close(), 30_000, 'producer close'), with_timeout(consumer!.close(), 30_000, 'consumer close')]);
    }
  });
}

function result(messages: number, payload_bytes: number, elapsed_ms: number, truncated: boolean): ThroughputResult {
  const out: ThroughputResult = { messages, bytes: messages * payload_bytes, elapsed_ms };
  if (truncated) out.truncated = true;
  return out;
}

/** A unique, short run name for destinations. */
let run_counter = 0;
export function next_run_name(): string {
  run_counter++;
  return `r${process.pid.toString(36)}${Date.now().toString(36)}${run_counter}`;
}

/**
 * The four workloads of a peer system, run through its PeerRun (one per workload): subclasses
 * only say how to open a run against their server.
 */
export abstract class PeerWorkloads {
  protected abstract new_run(partitions: number): PeerRun;

  private readonly factory: RunFactory = (partitions) => this.new_run(partitions);

  publish(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult> {
    return run_publish(this.factory, params, progress);
  }

  publish_consume(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult> {
    return run_publish_consume(this.factory, params, progress);
  }

  latency(params: LatencyParams): Promise<LatencyResult> {
    return run_latency(this.factory, params);
  }

  drain(params: PublishParams, progress: (messages_done: number) => void): Promise<ThroughputResult> {
    return run_drain(this.factory, params, progress);
  }
}
