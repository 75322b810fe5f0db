// Which replicas may lead a partition without losing an acknowledged record. The ISR first; and
// the eligible replicas (`elr`): those that left the ISR when it had fallen below
// min.insync.replicas. An acks=all write is acknowledged once every ISR member holds it and only
// while the ISR has at least min.insync.replicas members, so a replica that was in the ISR when it
// shrank below that size holds every acknowledged record, and nothing can be acknowledged until
// the ISR is that large again. Such a replica may lead when no ISR member can: a sole ISR member
// that died, or one whose log lost its tail on disk.
import type { PartitionState } from './model.ts';

const without = (ids: readonly number[], removed: readonly number[]) => ids.filter((id) => !removed.includes(id));

/** The topic's min.insync.replicas, as the broker core reads it (1 when not set). */
export function min_insync_of(configs: Readonly<Record<string, string>> | undefined): number {
  return Number(configs?.['min.insync.replicas'] ?? 1);
}

/**
 * `state` with its ISR set to `isr`: replicas leaving it while the new ISR is below `min_isr`
 * become eligible; once the ISR is back at `min_isr`, writes can be acknowledged without the
 * eligible replicas, and they stop being eligible.
 */
export function with_isr(state: PartitionState, isr: number[], min_isr: number): PartitionState {
  const { elr: before = [], ...rest } = state;
  const elr = isr.length >= min_isr ? [] : without([...before, ...without(state.isr, isr)], isr);
  const unique = [...new Set(elr)].filter((id) => state.replicas.includes(id));
  return unique.length > 0 ? { ...rest, isr, elr: unique } : { ...rest, isr };
}

/** Leadership for the first live eligible replica, when no ISR member can lead; null when none is live. */
export function elect_eligible(state: PartitionState, live: Set<number>, min_isr: number): PartitionState | null {
  const leader = (state.elr ?? []).find((id) => live.has(id) && state.replicas.includes(id));
  if (leader === undefined) return null;
  const { elr: _before, ...rest } = state;
  return {
    ...with_isr({ ...rest, elr: without(state.elr!, [leader]) }, [leader], min_isr),
    leader,
    leader_epoch: state.leader_epoch + 1,
  };
}

/**
 * A replica whose log recovery cut short gives up its claim to hold every acknowledged record: it
 * leaves the ISR (and the eligible replicas), and its leadership if it led, so that a replica that
 * still holds them leads and it catches up by fetching. Null when it is in neither list, or when
 * no other replica could lead: then its copy is the best there is.
 */
export function disown(state: PartitionState, node_id: number): PartitionState | null {
  const isr = without(state.isr, [node_id]);
  const elr = without(state.elr ?? [], [node_id]);
  if (isr.length === state.isr.length && elr.length === (state.elr ?? []).length) return null;
  if (isr.length === 0 && elr.length === 0) return null;
  const { elr: _before, ...rest } = state;
  const next: PartitionState = elr.length > 0 ? { ...rest, isr, elr } : { ...rest, isr };
  if (state.leader !== node_id) return next;
  return { ...next, leader: -1, leader_epoch: state.leader_epoch + 1 };
}
