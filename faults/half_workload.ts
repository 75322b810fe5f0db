// The fault suite's check-back workload (transactional messages, protocol/half_messages.ts). SDK
// producers of one transaction group write half messages with unique values to their own
// replicated topic; what becomes of each is decided from its value before it is sent (seeded):
// the producer commits it, rolls it back, or leaves it open and is abandoned as a crashed
// application would be, leaving it to the group's checkers, two producers with `checkTransaction`
// that answer the decided outcome, or 'unknown' every time for a part of the open ones, which
// must then end in the unresolved topic. A read_committed reader follows the topic all through
// the run. At the end the workload waits until every acknowledged half message is settled, then
// fresh readers read the topic and the unresolved topic (faults/checker/half_properties.ts).
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Consumer,
  type HalfMessage,
  type HalfMessageCheck,
  type Producer,
  Sluice,
  type TransactionCheckResult,
} from '../src/sdk/index.ts';
import { HALF_HEADERS, TXN_UNRESOLVED_TOPIC } from '../src/protocol/half_messages.ts';
import type { HalfDecision, HalfEndOp, HalfReadOp, HalfSendOp, HistoryOp } from './checker/history.ts';
import { DRAIN_MAX_MS, DRAIN_STALL_MS, within } from './workload.ts';

export const HALF_TOPIC = 'faults-half';
const GROUP = 'faults-half';
/** Short, so that half messages left open are checked (and given up) while the faults run. */
const HALF_TIMEOUT_MS = 2000;
const WRITERS = 4;
const CHECKERS = 2;
/** Pause between two half messages of one writer: the other workloads share two cores. */
const PACE_MS = 50;
/** Half messages in a run at most, whatever its length. */
const HALF_MAX = 10_000;
/**
 * A rolled-back half message is known to be settled once nothing happened to it for this long:
 * a rollback or an answer that did not take is followed by another check within a timeout.
 */
const QUIET_MS = 2 * HALF_TIMEOUT_MS + 2000;
/** The final readers stop once nothing more arrived for this long since their last record... */
const FINAL_IDLE_MS = 5_000;
/** ...or since they started, while they have read nothing. */
const FINAL_FIRST_MS = 30_000;
/** A client's disconnect is given this long (it flushes what is in flight first). */
const DISCONNECT_WAIT_MS = 15_000;
/** Tries of a final reader to start. */
const FINAL_ATTEMPTS = 5;
/** A checker that could not connect, or a reader that stopped, is made again after this pause. */
const RESTART_PAUSE_MS = 1000;

/**
 * About 45 % committed, 35 % rolled back and 20 % left open by their producer; of the open ones,
 * half answered by the checkers with a decided outcome, half 'unknown' every time.
 */
export function half_decision(seed: number, value: string): HalfDecision {
  let hash = 0x811c9dc5 ^ seed;
  for (let i = 0; i < value.length; i++) hash = Math.imul(hash ^ value.charCodeAt(i), 0x01000193);
  const bucket = (hash >>> 0) % 100;
  if (bucket < 45) return 'commit';
  if (bucket < 80) return 'rollback';
  if (bucket < 85) return 'open_commit';
  if (bucket < 90) return 'open_rollback';
  return 'open_unknown';
}

/** What the drain needs to know of each half message, kept as the operations are recorded. */
class Tracker {
  readonly visible = new Set<string>();
  readonly unresolved = new Set<string>();
  readonly rolled_back = new Set<string>();
  readonly last_ms = new Map<string, number>();
  readonly acked: HalfSendOp[] = [];
  private budget = HALF_MAX;

  constructor(
    readonly history: HistoryOp[],
    readonly at: () => number,
    readonly decide: (value: string) => HalfDecision,
  ) {}

  record(op: HistoryOp & { value: string }): void {
    this.history.push(op);
    this.last_ms.set(op.value, Date.now());
    if (op.kind === 'half_send' && op.outcome === 'ok') this.acked.push(op);
    if (op.kind === 'half_end' && !op.commit && op.outcome === 'ok') this.rolled_back.add(op.value);
  }

  take(): boolean {
    return this.budget-- > 0;
  }

  /** Acknowledged half messages not yet visible, unresolved or known rolled back. */
  unsettled(): number {
    let left = 0;
    const now = Date.now();
    for (const { value, decision } of this.acked) {
      if (this.visible.has(value) || this.unresolved.has(value) || this.rolled_back.has(value)) continue;
      const rolling_back = decision === 'rollback' || decision === 'open_rollback';
      if (rolling_back && now - (this.last_ms.get(value) ?? 0) >= QUIET_MS) continue;
      left++;
    }
    return left;
  }
}

export function half_workload(
  bootstrap: string[],
  started_ms: number,
  until: () => boolean,
  seed: number,
  history: HistoryOp[],
  log: (line: string) => void,
) {
  const sdk = new Sluice({ brokers: bootstrap, clientId: 'faults-half' });
  const tracker = new Tracker(
    history,
    () => Date.now() - started_ms,
    (value) => half_decision(seed, value),
  );
  const checkers = start_checkers(sdk, tracker, log);
  const seen_live = new Set<string>();
  let live_at_ms = 0;
  const live = follow(sdk, HALF_TOPIC, log, (partition, offset, value) => {
    live_at_ms = tracker.at();
    if (seen_live.has(`${partition}:${offset}`)) return; // fetched again: its first sight is what counts
    seen_live.add(`${partition}:${offset}`);
    tracker.visible.add(value);
    tracker.record({ kind: 'half_read', reader: 'live', partition, offset, value, at_ms: tracker.at() });
  });
  const unresolved = follow(sdk, TXN_UNRESOLVED_TOPIC, log, (_p, _o, value, headers) => {
    if (headers[HALF_HEADERS.topic] === HALF_TOPIC) tracker.unresolved.add(value);
  });
  const writers = Array.from({ length: WRITERS }, (_, i) => write_half(sdk, `w${i}`, tracker, until));
  const writing = Promise.all(writers).then(() => undefined);

  return {
    writing,
    /**
     * Waits until every acknowledged half message is settled (or the drain gives up), then reads
     * the topic and the unresolved topic afresh; returns how many were still unsettled.
     */
    async drain(): Promise<number> {
      await writing;
      const left = await wait_settled(tracker);
      // A reader that stopped receiving holds the drain up to its stall limit: say when it did.
      if (left > 0) log(`half messages: the live reader's last record came at ${(live_at_ms / 1000).toFixed(1)}s`);
      await Promise.all([live.stop(), unresolved.stop()]);
      // The checkers keep answering meanwhile: a check delivered late is still recorded.
      const reads = await Promise.all([read_topic(sdk, HALF_TOPIC, tracker.at), read_unresolved(sdk, tracker.at)]);
      for (const op of reads.flat()) history.push(op);
      await checkers.stop();
      return left;
    },
  };
}

/** Waits while half messages keep settling, as the other drains do; how many never did. */
async function wait_settled(tracker: Tracker): Promise<number> {
  const started_ms = Date.now();
  let progress_ms = started_ms;
  let left = tracker.unsettled();
  while (left > 0 && Date.now() - progress_ms < DRAIN_STALL_MS && Date.now() - started_ms < DRAIN_MAX_MS) {
    await sleep(500);
    const now_left = tracker.unsettled();
    if (now_left < left) progress_ms = Date.now();
    left = now_left;
  }
  return left;
}

/**
 * One writer: a half message at a time, settled as decided. A producer that leaves one open, or
 * whose call failed, is abandoned and a new one made, as an application restarted would.
 */
async function write_half(sdk: Sluice, name: string, tracker: Tracker, until: () => boolean): Promise<void> {
  const make = () => sdk.producer({ transactionGroup: GROUP, halfTimeout: HALF_TIMEOUT_MS });
  let producer = make();
  try {
    for (let n = 0; until() && tracker.take(); n++) {
      if (!(await send_one(producer, `half-${name}-${n}`, tracker))) {
        void disconnect(producer); // its open half message stays open: only the checks settle it
        producer = make();
      }
      await sleep(PACE_MS);
    }
  } finally {
    await disconnect(producer);
  }
}

/** Writes one half message and settles it as decided; false when the producer is to be abandoned. */
async function send_one(producer: Producer, value: string, tracker: Tracker): Promise<boolean> {
  const decision = tracker.decide(value);
  const send: HalfSendOp = {
    kind: 'half_send',
    process: 'faults-half',
    value,
    decision,
    outcome: 'unknown',
    invoked_ms: tracker.at(),
    completed_ms: 0,
  };
  let half: HalfMessage;
  try {
    half = await within(producer.sendHalf({ topic: HALF_TOPIC, message: { value } }));
    send.outcome = 'ok';
    send.transactional_id = half.transactionalId;
    send.partition = half.metadata[0]?.partition;
    send.offset = half.metadata[0] ? Number(half.metadata[0].baseOffset) : undefined;
  } catch (error) {
    send.error = String(error).slice(0, 200); // refused or timed out: it may still be open, and checked
    return false;
  } finally {
    send.completed_ms = tracker.at();
    tracker.record(send);
  }
  if (decision !== 'commit' && decision !== 'rollback') return false; // left open, as by a crash
  const commit = decision === 'commit';
  const end: HalfEndOp = {
    kind: 'half_end',
    value,
    commit,
    outcome: 'unknown',
    invoked_ms: tracker.at(),
    completed_ms: 0,
  };
  try {
    await within(commit ? half.commit() : half.rollback());
    end.outcome = 'ok';
    return true;
  } catch {
    return false; // it may have ended or not: a check settles it if not
  } finally {
    end.completed_ms = tracker.at();
    tracker.record(end);
  }
}

/** The decided outcome; 'unknown' every time for the part left to the unresolved topic. */
function answer_for(decision: HalfDecision | null): TransactionCheckResult {
  if (decision === 'commit' || decision === 'open_commit') return 'commit';
  if (decision === 'rollback' || decision === 'open_rollback') return 'rollback';
  return 'unknown';
}

/** The group's checkers: producers that answer each check from the half message's value. */
function start_checkers(sdk: Sluice, tracker: Tracker, log: (line: string) => void) {
  let stopping = false;
  const check = (message: HalfMessageCheck): TransactionCheckResult => {
    const value = message.value?.toString() ?? '';
    const answer = answer_for(value === '' ? null : tracker.decide(value));
    tracker.record({
      kind: 'half_check',
      value,
      transactional_id: message.transactionalId,
      check: message.check,
      checks_max: message.checksMax,
      answer,
      at_ms: tracker.at(),
    });
    return answer;
  };
  const running = Array.from({ length: CHECKERS }, async (_, i) => {
    while (!stopping) {
      const producer = sdk.producer({ transactionGroup: GROUP, halfTimeout: HALF_TIMEOUT_MS, checkTransaction: check });
      try {
        await producer.connect(); // joins the group's checks
        while (!stopping) await sleep(200);
      } catch (error) {
        log(`half messages: checker ${i} could not connect: ${String(error).slice(0, 200)}`);
        await sleep(RESTART_PAUSE_MS);
      } finally {
        await disconnect(producer);
      }
    }
  });
  return {
    async stop(): Promise<void> {
      stopping = true;
      await Promise.all(running);
    },
  };
}

type Seen = (partition: number, offset: number, value: string, headers: Record<string, string>) => void;

/**
 * A read_committed consumer without a group following `topic` from its start; one that stops for
 * good is made again (what it reads again is seen again: `seen` tells offsets apart).
 */
function follow(sdk: Sluice, topic: string, log: (line: string) => void, seen: Seen) {
  let stopping = false;
  let wake = () => {};
  const running = (async () => {
    while (!stopping) {
      const consumer = sdk.consumer({ maxWaitTimeInMs: 200 });
      const stopped = new Promise<void>((resolve) => {
        wake = resolve;
        consumer.on(consumer.events.CRASH, ({ payload }) => {
          const { error, restart } = payload as { error: unknown; restart: boolean };
          if (restart) return;
          log(`half messages: the reader of ${topic} stopped: ${String(error).slice(0, 200)}`);
          resolve();
        });
      });
      try {
        await run_reader(consumer, topic, seen);
        await stopped;
      } catch {
        // not started: made again below
      }
      await disconnect(consumer);
      if (!stopping) await sleep(RESTART_PAUSE_MS);
    }
  })();
  return {
    async stop(): Promise<void> {
      stopping = true;
      wake();
      await running;
    },
  };
}

async function run_reader(consumer: Consumer, topic: string, seen: Seen): Promise<void> {
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      const headers: Record<string, string> = {};
      for (const [key, value] of Object.entries(message.headers ?? {})) headers[key] = String(value);
      seen(partition, Number(message.offset), message.value?.toString() ?? '', headers);
    },
  });
}

/** Every record of `topic`, read afresh until nothing more arrives; `keep` picks and names them. */
async function read_fresh(
  sdk: Sluice,
  topic: string,
  keep: (partition: number, offset: number, value: string, headers: Record<string, string>) => HalfReadOp | null,
): Promise<HalfReadOp[]> {
  // By offset: a record fetched again (a retried fetch) is one record, read once.
  const reads = new Map<string, HalfReadOp>();
  const started_ms = Date.now();
  let last_ms = 0;
  const seen: Seen = (partition, offset, value, headers) => {
    last_ms = Date.now();
    const op = keep(partition, offset, value, headers);
    if (op) reads.set(`${partition}:${offset}`, op);
  };
  for (let attempt = 1; ; attempt++) {
    const consumer = sdk.consumer({ maxWaitTimeInMs: 200 });
    try {
      await run_reader(consumer, topic, seen);
      const idle = () =>
        last_ms === 0 ? Date.now() - started_ms > FINAL_FIRST_MS : Date.now() - last_ms > FINAL_IDLE_MS;
      while (!idle()) await sleep(500);
      return [...reads.values()];
    } catch (error) {
      if (attempt >= FINAL_ATTEMPTS) throw error; // a partial read would pass for lost half messages
      await sleep(RESTART_PAUSE_MS);
    } finally {
      await disconnect(consumer);
    }
  }
}

function read_topic(sdk: Sluice, topic: string, at: () => number): Promise<HalfReadOp[]> {
  return read_fresh(sdk, topic, (partition, offset, value) => {
    return { kind: 'half_read', reader: 'final', partition, offset, value, at_ms: at() };
  });
}

/** The unresolved topic's copies of this workload's half messages (by the topic they were written to). */
function read_unresolved(sdk: Sluice, at: () => number): Promise<HalfReadOp[]> {
  return read_fresh(sdk, TXN_UNRESOLVED_TOPIC, (partition, offset, value, headers) => {
    if (headers[HALF_HEADERS.topic] !== HALF_TOPIC) return null;
    return { kind: 'half_read', reader: 'unresolved', partition, offset, value, at_ms: at() };
  });
}

async function disconnect(client: { disconnect(): Promise<void> }): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<void>((resolve) => (timer = setTimeout(resolve, DISCONNECT_WAIT_MS)));
  await Promise.race([client.disconnect().catch(() => undefined), bound]);
  clearTimeout(timer);
}
