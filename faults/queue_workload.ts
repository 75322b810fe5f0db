// The fault suite's queue workload: members of one share group (the SDK's queueConsumer) read the
// topic as a queue while faults happen, each handler accepting its record by resolving. Every
// acceptance is recorded, so the checker holds the run to at-least-once delivery of every
// acknowledged write and to the delivery limit. At the end the members run until every
// acknowledged write was accepted (or a time limit), then leave.
import { Sluice } from '../src/sdk/index.ts';
import type { AcceptOp, HistoryOp } from './checker/history.ts';
import { drain_until_received, TOPIC } from './workload.ts';

export const QUEUE_GROUP = 'faults-queue';
const MEMBERS = 2;
const CONCURRENCY = 4;

export function queue_members(bootstrap: string[], started_ms: number, history: HistoryOp[]) {
  const accepted = new Set<string>();
  const sluice = new Sluice({ brokers: bootstrap, clientId: 'faults-queue' });
  const members = Array.from({ length: MEMBERS }, () => sluice.queueConsumer({ groupId: QUEUE_GROUP }));
  const running = members.map(async (queue) => {
    await queue.subscribe({ topics: [TOPIC] });
    await queue.run({
      concurrency: CONCURRENCY,
      eachMessage: async ({ topic, partition, message }) => {
        const value = message.value?.toString() ?? '';
        const op: AcceptOp = {
          kind: 'accept',
          group: QUEUE_GROUP,
          topic,
          partition,
          offset: Number(message.offset),
          value,
          at_ms: Date.now() - started_ms,
        };
        history.push(op);
        accepted.add(value);
      },
    });
  });
  return {
    /** Waits until every acknowledged write in `history` was accepted (or the limit), then leaves. */
    async drain(): Promise<number> {
      const wanted = history
        .filter((op) => op.kind === 'write' && op.outcome === 'ok')
        .map((op) => (op as { value: string }).value);
      await drain_until_received(wanted, accepted);
      for (const queue of members) await queue.disconnect().catch(() => undefined);
      await Promise.allSettled(running);
      return wanted.filter((value) => !accepted.has(value)).length;
    },
  };
}
