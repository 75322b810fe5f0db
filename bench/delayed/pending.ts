// Part 3 of the delayed-delivery benchmark: many delayed messages pending (due in an hour),
// produced with the lean client's prepared Produce requests; the broker's memory before and after,
// and a restart on the same data directory (the delay index rebuilt from the log), timed to ready.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import type { PreparedRequest } from '../../src/protocol/kafka/client_connection.ts';
import type { PRODUCE } from '../../src/protocol/kafka/messages/00_produce.ts';
import { encode_record_batch, type BatchRecord } from '../../src/protocol/record_batch.ts';
import {
  Connection,
  check_produce_response,
  create_topic,
  end_offsets,
  produce_request,
} from '../harness/sluice/lean_client.ts';
import {
  BROKER_ARGS,
  du_bytes,
  f0,
  f1,
  live_brokers,
  mb,
  memory_of,
  PART_GRACE_MS,
  PartFailed,
  PROGRESS_EVERY_MS,
  report_broker_output,
  ROOT,
  say,
  secs,
  SETTLE_MS,
  sleep,
  start_broker,
  stop_broker,
  table,
  VALUE_BYTES,
  with_timeout,
  type DelayedOptions,
} from './support.ts';

const PENDING_DELAY_MS = 3_600_000;

const PENDING_CONNECTIONS = 2;

const PENDING_IN_FLIGHT = 16;

const PENDING_PRODUCE_LIMIT_MS = 15 * 60_000;

const RESTART_LIMIT_MS = 10 * 60_000;

const HOST = '127.0.0.1';

export interface PendingFigures {
  growth: number;
  per_message: number;
}

/** A broker restarted by restart_broker(). */
interface RestartedBroker {
  child: ChildProcess;
  port: number;
  ready_ms: number;
  output: () => string;
  stop(): Promise<number | null>;
  kill(): Promise<void>;
}

/** `sluice start` on an existing data directory, timed to its ready line, within `limit_ms`. */
async function restart_broker(data_dir: string, limit_ms: number): Promise<RestartedBroker> {
  const started = performance.now();
  const { handle, exited } = spawn_sluice(data_dir);
  const { child } = handle;
  live_brokers.add(handle);
  // VmHWM cannot be read once the process is gone: sample the RSS while it loads.
  let rss_seen = 0;
  const sampler = setInterval(() => {
    try {
      rss_seen = Math.max(rss_seen, memory_of(child.pid!).rss);
    } catch {
      // exited
    }
  }, 250);
  handle.port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new PartFailed(`pending: the restarted broker was not ready within ${secs(limit_ms)}:\n${handle.output()}`),
        ),
      limit_ms,
    );
    child.stdout!.on('data', () => {
      const match = /ready kafka=[^:\s]+:(\d+)/.exec(handle.output());
      if (match) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      const after = `${f0(performance.now() - started)} ms after it was spawned`;
      reject(
        new PartFailed(
          `pending: the restarted broker exited with ${code} (${String(child.signalCode)}) ${after}, ` +
            `before it was ready (largest RSS sampled: ${mb(rss_seen)} MB):\n${handle.output().slice(-4000)}`,
        ),
      );
    });
  }).finally(() => clearInterval(sampler));
  handle.ready_ms = performance.now() - started;
  return handle;
}

/** Spawns `sluice start` on `data_dir`, collecting its output. */
function spawn_sluice(data_dir: string): { handle: RestartedBroker; exited: Promise<number | null> } {
  const args = [
    'start',
    '--data',
    data_dir,
    '--kafka',
    '127.0.0.1:0',
    '--http',
    'off',
    '--amqp',
    'off',
    '--log-level',
    'warn',
  ];
  const child = spawn(process.execPath, [path.join(ROOT, 'bin', 'sluice.js'), ...args, ...BROKER_ARGS], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const handle = {
    child,
    port: 0,
    ready_ms: 0,
    output: () => output,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill('SIGTERM');
      return exited;
    },
    kill: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
  };
  return { handle, exited };
}

/** The prepared Produce requests of part 3: full batches and, if the count does not divide, one smaller last batch. */
interface PendingPlan {
  full: { request: PreparedRequest<typeof PRODUCE>; bytes: number };
  last: { request: PreparedRequest<typeof PRODUCE>; bytes: number };
  /** Records per full batch, and in the last one when it is smaller (0 otherwise). */
  per_batch: number;
  remainder: number;
  batches: number;
}

/** One batch of `pending_batch` records (and one of the remainder), each with the delay header. */
function plan_pending(topic: string, pending: number, pending_batch: number): PendingPlan {
  const value = Buffer.alloc(VALUE_BYTES, 0x61);
  const header = [{ key: 'sluice-delay-ms', value: Buffer.from(String(PENDING_DELAY_MS)) }];
  const request_of = (count: number) => {
    const timestamp_ms = Date.now();
    const records: BatchRecord[] = Array.from({ length: count }, () => ({
      key: null,
      value,
      timestamp_ms,
      headers: header,
    }));
    const batch = encode_record_batch(records);
    return { request: produce_request(topic, [{ partition: 0, batch }]), bytes: batch.length };
  };
  const full = request_of(Math.min(pending_batch, pending));
  const remainder = pending % pending_batch;
  const last = remainder > 0 && pending > pending_batch ? request_of(remainder) : full;
  const batches = Math.ceil(pending / pending_batch);
  return { full, last, per_batch: Math.min(pending_batch, pending), remainder, batches };
}

/**
 * Sends the plan's batches over PENDING_CONNECTIONS connections, PENDING_IN_FLIGHT requests in
 * flight on each, printing progress; resolves with the count acknowledged and the time it took.
 */
async function produce_pending(
  port: number,
  pid: number,
  topic: string,
  plan: PendingPlan,
): Promise<{ acknowledged: number; produce_ms: number; failure: unknown }> {
  const connections = await Promise.all(
    Array.from({ length: PENDING_CONNECTIONS }, () =>
      Connection.connect(HOST, port, { max_in_flight: PENDING_IN_FLIGHT }),
    ),
  );
  let next_batch = 0;
  let acknowledged = 0;
  let failure: unknown = null;
  const started = performance.now();
  const deadline = started + PENDING_PRODUCE_LIMIT_MS;
  let next_progress = started + PROGRESS_EVERY_MS;
  const produce_on = async (connection: Connection) => {
    const in_flight = new Set<Promise<void>>();
    while (next_batch < plan.batches && failure === null && performance.now() < deadline) {
      const is_last = next_batch === plan.batches - 1;
      const count = is_last && plan.remainder > 0 ? plan.remainder : plan.per_batch;
      const { request } = is_last ? plan.last : plan.full;
      next_batch++;
      const sending: Promise<void> = connection
        .request(request)
        .then((response) => {
          check_produce_response(response, topic, 1);
          acknowledged += count;
        })
        .catch((error: unknown) => void (failure ??= error))
        .finally(() => in_flight.delete(sending));
      in_flight.add(sending);
      if (in_flight.size >= PENDING_IN_FLIGHT) await Promise.race(in_flight);
      if (performance.now() >= next_progress) {
        next_progress += PROGRESS_EVERY_MS;
        say(
          `  ... ${f0(acknowledged)} acknowledged after ${secs(performance.now() - started)}, ` +
            `broker RSS ${mb(memory_of(pid).rss)} MB`,
        );
      }
    }
    await Promise.all(in_flight);
  };
  try {
    await with_timeout(
      Promise.all(connections.map(produce_on)),
      PENDING_PRODUCE_LIMIT_MS + PART_GRACE_MS,
      'pending: producing',
    );
  } finally {
    for (const connection of connections) connection.close();
  }
  return { acknowledged, produce_ms: performance.now() - started, failure };
}

/**
 * Runs part 3; `on_measured` gets the memory figures as soon as they are known (before the restart,
 * which may fail).
 */
export async function part_pending(
  options: DelayedOptions,
  on_measured: (figures: PendingFigures) => void,
): Promise<void> {
  const { pending, pending_batch } = options;
  say(`\n## 3. Memory with ${f0(pending)} pending delayed messages (due in 1 hour), batches of ${f0(pending_batch)}`);
  const { broker, ready_ms: fresh_ready_ms } = await start_broker();
  const pid = broker.child.pid!;
  const topic = 'pending';
  const admin = await Connection.connect(HOST, broker.port, { max_in_flight: 1 });
  await create_topic(admin, topic, 1);
  const plan = plan_pending(topic, pending, pending_batch);

  await sleep(SETTLE_MS);
  const before = memory_of(pid);
  say(
    `  broker RSS before producing: ${mb(before.rss)} MB; ` +
      `producing ${f0(plan.batches)} batches of ${f0(plan.full.bytes)} B ...`,
  );
  const { acknowledged, produce_ms, failure } = await produce_pending(broker.port, pid, topic, plan);
  if (failure)
    throw new PartFailed(
      `pending: a Produce request failed after ${f0(acknowledged)} acknowledged: ` +
        `${failure instanceof Error ? failure.message : String(failure)}`,
    );
  if (acknowledged < pending)
    throw new PartFailed(
      `pending: the ${secs(PENDING_PRODUCE_LIMIT_MS)} limit passed ` +
        `with ${f0(acknowledged)} of ${f0(pending)} acknowledged`,
    );
  const acked = memory_of(pid);
  await sleep(SETTLE_MS);
  const settled = memory_of(pid);
  const [delivered_early] = await end_offsets(admin, topic, 1);
  admin.close();
  const stopped = await stop_broker(broker, 'pending');
  report_broker_output(broker.output(), 'pending, first broker');
  if (stopped.code !== 0) say(`broker exit code ${String(stopped.code)} after SIGTERM`);
  const disk = du_bytes(broker.data_dir);
  const growth = settled.rss - before.rss;
  on_measured({ growth, per_message: growth / pending });
  table(
    ['figure', 'value'],
    [
      ['pending messages acknowledged', f0(acknowledged)],
      ['produce time', secs(produce_ms)],
      ['produce rate', `${f0(acknowledged / (produce_ms / 1000))} msg/s`],
      ['records in the topic (must be 0: none due yet)', f0(delivered_early ?? -1)],
      ['broker RSS before producing', `${mb(before.rss)} MB`],
      ['broker RSS when all were acknowledged', `${mb(acked.rss)} MB`],
      [`broker RSS ${SETTLE_MS / 1000} s later`, `${mb(settled.rss)} MB`],
      ['broker peak RSS (VmHWM)', `${mb(settled.peak)} MB`],
      ['RSS growth (settled - before)', `${mb(growth)} MB`],
      ['RSS growth per pending message', `${f1(growth / pending)} B`],
      ['data directory on disk', `${mb(disk)} MB`],
      ['clean stop (SIGTERM to exit)', `${f0(stopped.ms)} ms`],
    ],
  );
  await restart_pending(broker.data_dir, topic, fresh_ready_ms);
}

/** The restart with the messages pending: time to ready, RSS, and that none was delivered. */
async function restart_pending(data_dir: string, topic: string, fresh_ready_ms: number): Promise<void> {
  say(`  restarting on ${data_dir} ...`);
  const again = await restart_broker(data_dir, RESTART_LIMIT_MS);
  const restarted = memory_of(again.child.pid!);
  await sleep(SETTLE_MS);
  const restarted_settled = memory_of(again.child.pid!);
  const check = await Connection.connect(HOST, again.port, { max_in_flight: 1 });
  const [delivered_after_restart] = await end_offsets(check, topic, 1);
  check.close();
  const stopped_again = await stop_broker(again, 'restarted');
  report_broker_output(again.output(), 'pending, restarted broker');
  if (stopped_again.code !== 0) say(`restarted broker exit code ${String(stopped_again.code)} after SIGTERM`);

  table(
    ['figure (restart)', 'value'],
    [
      [
        'restart with them pending: spawn to ready',
        `${f0(again.ready_ms)} ms (fresh empty broker: ${f0(fresh_ready_ms)} ms)`,
      ],
      ['records in the topic after the restart (must be 0)', f0(delivered_after_restart ?? -1)],
      ['RSS after the restart: at ready', `${mb(restarted.rss)} MB`],
      [`RSS after the restart: ${SETTLE_MS / 1000} s later`, `${mb(restarted_settled.rss)} MB`],
      ['peak RSS during the restart (VmHWM)', `${mb(restarted_settled.peak)} MB`],
    ],
  );
}
