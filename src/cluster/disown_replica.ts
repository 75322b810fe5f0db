// A replica whose local copy lost, damaged or may have lost records gives up its claim to hold every
// acknowledged one, in etcd: it leaves the ISR (and the eligible replicas) and its leadership if it
// led, so a replica that still holds them leads, and it catches up by fetching
// (eligible_replicas.ts, disown). Used at start for every log after an unclean shutdown and for
// logs recovery cut short, and when a read meets a corrupt batch.
import type { Logger } from '../core/clock.ts';
import type { EtcdStore } from './etcd_store.ts';
import { disown } from './eligible_replicas.ts';
import { partition_key, type ClusterView } from './model.ts';

/** CAS conflicts tolerated before giving up. */
const DISOWN_ATTEMPTS_MAX = 20;

/**
 * Writes the partition's state without this broker's claim. Resolves true when written, false
 * when there was nothing to give up or no other replica could lead (its copy is the best there is).
 */
export async function disown_replica(
  store: EtcdStore,
  node_id: number,
  topic: string,
  partition: number,
  logger: Logger,
  why: object,
  view: ClusterView | null = null,
): Promise<boolean> {
  for (let attempt = 0; attempt < DISOWN_ATTEMPTS_MAX; attempt++) {
    const entry = (attempt === 0 && view ? view : await store.read_view()).partitions.get(
      partition_key(topic, partition),
    );
    const next = entry ? disown(entry.value, node_id) : null;
    if (!entry || !next) {
      if (entry?.value.isr.includes(node_id))
        logger.warn({ topic, partition, ...why }, 'local copy suspect, but no other replica can lead: it stays');
      return false;
    }
    if (await store.update_partition(topic, partition, next, entry.mod_revision)) {
      logger.warn(
        { topic, partition, ...why, isr: next.isr, elr: next.elr ?? [], leader: next.leader },
        'local copy suspect: left the ISR until it has caught up from the leader',
      );
      return true;
    }
  }
  throw new Error(`could not update ${topic}/${partition} in etcd`);
}

/** disown_replica for every copy in `suspects`, from one read of the view (a CAS conflict reads again). */
export async function disown_replicas(
  store: EtcdStore,
  node_id: number,
  suspects: readonly { topic: string; partition: number; why: string }[],
  logger: Logger,
): Promise<void> {
  if (suspects.length === 0) return;
  const view = await store.read_view();
  for (const { topic, partition, why } of suspects)
    await disown_replica(store, node_id, topic, partition, logger, { why }, view);
}
