// The fault suite's delayed-delivery workload: the SDK's producer sends messages with a seeded
// delay (`delayMs`, the `sluice-delay-ms` header) to their own replicated topic while faults
// happen, and a consumer group member of the SDK reads that topic, every message recorded when it
// arrives. The checker holds them to "none lost, none early" (early by at most the error of a
// broker clock set wrong meanwhile). At the end the reader runs until every acknowledged delayed
// message has arrived (or a time limit).
import { setTimeout as sleep } from 'node:timers/promises';
import type { Consumer, Sluice } from '../src/sdk/index.ts';
import type { DelayedWriteOp, HistoryOp } from './checker/history.ts';
import { within } from './workload.ts';

export const DELAYED_TOPIC = 'faults-delayed';
const GROUP = 'faults-delayed-reader';
/** Delays are drawn from 0 to this many milliseconds. */
const DELAY_MAX_MS = 15_000;
/** Pause between two sends. */
const PACE_MS = 100;
/** How long the reader may take, after the faults, to receive what is still due. */
const DRAIN_TIMEOUT_MS = DELAY_MAX_MS + 90_000;
/** How long a fresh reader may take to scan the topic when the reader missed messages. */
const SCAN_TIMEOUT_MS = 20_000;

export function delayed_workload(
  sluice: Sluice,
  started_ms: number,
  until: () => boolean,
  next: () => number,
  history: HistoryOp[],
  log: (line: string) => void,
) {
  const at = () => Date.now() - started_ms;
  const arrived = new Set<string>();
  const reader = sluice.consumer({ groupId: GROUP, sessionTimeout: 10_000, heartbeatInterval: 1000 });
  report_reader(reader, log);
  const reading = (async () => {
    await reader.connect();
    await reader.subscribe({ topic: DELAYED_TOPIC, fromBeginning: true });
    await reader.run({
      eachMessage: async ({ message }) => {
        const value = message.value?.toString() ?? '';
        history.push({ kind: 'delayed_read', topic: DELAYED_TOPIC, value, at_ms: at() });
        arrived.add(value);
      },
    });
  })();

  const writing = (async () => {
    const producer = sluice.producer({ idempotent: true });
    await producer.connect();
    try {
      for (let n = 0; until(); n++) {
        const delay_ms = Math.floor(next() * DELAY_MAX_MS);
        const invoked_ms = at();
        const op: DelayedWriteOp = {
          kind: 'delayed_write',
          topic: DELAYED_TOPIC,
          value: `delayed-${n}`,
          invoked_ms,
          deliver_at_ms: invoked_ms + delay_ms,
          outcome: 'unknown',
        };
        try {
          await within(producer.send({ topic: DELAYED_TOPIC, messages: [{ value: op.value, delayMs: delay_ms }] }));
          op.outcome = 'ok';
        } catch {
          op.outcome = 'unknown'; // refused after retries or timed out: it may still be scheduled
        }
        history.push(op);
        await sleep(PACE_MS);
      }
    } finally {
      await producer.disconnect().catch(() => undefined);
    }
  })();

  return {
    /** Waits for the sends to end and for every acknowledged one to arrive (or the limit). */
    async drain(): Promise<number> {
      await writing;
      const wanted = history
        .filter((op): op is DelayedWriteOp => op.kind === 'delayed_write' && op.outcome === 'ok')
        .map((op) => op.value);
      const deadline_ms = Date.now() + DRAIN_TIMEOUT_MS;
      while (Date.now() < deadline_ms && wanted.some((value) => !arrived.has(value))) await sleep(500);
      await reader.disconnect().catch(() => undefined);
      await reading.catch(() => undefined);
      const missing = wanted.filter((value) => !arrived.has(value));
      if (missing.length > 0) {
        const in_topic = await scan_topic(sluice, new Set(missing));
        log(`delayed: of ${missing.length} messages the reader missed, ${in_topic} are in the topic`);
      }
      return missing.length;
    },
  };
}

/** How many of `values` a new group member finds in the topic, read from the start. */
async function scan_topic(sluice: Sluice, values: Set<string>): Promise<number> {
  const found = new Set<string>();
  const scanner = sluice.consumer({ groupId: `${GROUP}-scan-${Date.now()}` });
  await scanner.connect();
  await scanner.subscribe({ topic: DELAYED_TOPIC, fromBeginning: true });
  await scanner.run({
    eachMessage: async ({ message }) => {
      const value = message.value?.toString() ?? '';
      if (values.has(value)) found.add(value);
    },
  });
  const deadline_ms = Date.now() + SCAN_TIMEOUT_MS;
  while (Date.now() < deadline_ms && found.size < values.size) await sleep(500);
  await scanner.disconnect().catch(() => undefined);
  return found.size;
}

/** A reader that stops, or stops being assigned the partition, looks like lost messages: say so. */
function report_reader(reader: Consumer, log: (line: string) => void): void {
  reader.on(reader.events.CRASH, ({ payload }) => {
    const { error, restart } = payload as { error: unknown; restart: boolean };
    if (!restart) log(`delayed reader stopped: ${String(error)}`);
  });
  reader.on(reader.events.GROUP_JOIN, ({ payload }) => {
    const { memberAssignment } = payload as { memberAssignment: Record<string, number[]> };
    log(`delayed reader joined its group, assigned ${JSON.stringify(memberAssignment)}`);
  });
}
