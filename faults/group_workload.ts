// The fault suite's consumer-group workload: the SDK's consumers in a classic group and in a KIP-848
// group (groupProtocol 'consumer') read the topic while faults happen, committing offsets as they
// go; each member leaves and joins again now and then (a rebalance each time, as deployments do),
// after a seeded lifetime. Every record a member is
// handed is recorded as a read (so no offset may show two records to any reader), and every
// commit the broker acknowledged as a commit (so no committed offset may go back).
//
// Not kafkajs 2.2.4 here: a consumer of it disconnected while its fetchers were being recreated
// for a changed broker list (both routine under faults) leaves fetchers looping on an empty
// fetch without ever yielding, which starved the harness's event loop and stopped the run.
import { setTimeout as sleep } from 'node:timers/promises';
import { Sluice } from '../src/sdk/index.ts';
import type { HistoryOp } from './checker/history.ts';
import { TOPIC } from './workload.ts';

export const GROUP = 'faults-group';
/** The group whose members use the KIP-848 protocol. */
export const CONSUMER_PROTOCOL_GROUP = 'faults-group-848';
/** A member stays between these many milliseconds before it leaves and joins again. */
const LIFETIME_MS = { min: 10_000, max: 30_000 } as const;
const AUTO_COMMIT_INTERVAL_MS = 500;

/** What the SDK's COMMIT_OFFSETS event carries: the OffsetCommit the broker acknowledged. */
interface CommitPayload {
  topics: { name: string; partitions: { partition_index: number; committed_offset: number }[] }[];
}

/** One member of the group, joining again after each lifetime until `until()` is false. */
export async function group_member(
  sluice: Sluice,
  member: string,
  started_ms: number,
  until: () => boolean,
  next: () => number,
  history: HistoryOp[],
  protocol: 'classic' | 'consumer' = 'classic',
): Promise<void> {
  const at = () => Date.now() - started_ms;
  const group = protocol === 'classic' ? GROUP : CONSUMER_PROTOCOL_GROUP;
  while (until()) {
    const consumer = sluice.consumer({
      groupId: group,
      groupProtocol: protocol,
      sessionTimeout: 10_000,
      heartbeatInterval: 1000,
    });
    consumer.on(consumer.events.COMMIT_OFFSETS, (event: { payload: CommitPayload }) => {
      for (const topic of event.payload.topics) {
        for (const { partition_index: partition, committed_offset: offset } of topic.partitions)
          history.push({ kind: 'commit', group, topic: topic.name, partition, offset, at_ms: at() });
      }
    });
    try {
      await consumer.connect();
      await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
      await consumer.run({
        autoCommitInterval: AUTO_COMMIT_INTERVAL_MS,
        eachMessage: async ({ partition, message }) => {
          history.push({
            kind: 'read',
            reader: member,
            topic: TOPIC,
            partition,
            offset: Number(message.offset),
            key: message.key?.toString() ?? null,
            value: message.value?.toString() ?? '',
            at_ms: at(),
          });
        },
      });
      const lifetime_ms = LIFETIME_MS.min + next() * (LIFETIME_MS.max - LIFETIME_MS.min);
      for (const end_ms = Date.now() + lifetime_ms; Date.now() < end_ms && until();) await sleep(200);
    } catch {
      // a member that could not join (the coordinator moving) tries again after a pause
      await sleep(1000);
    } finally {
      await consumer.disconnect().catch(() => undefined);
    }
  }
}
