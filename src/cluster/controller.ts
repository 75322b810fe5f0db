// The controller: one broker, elected by creating etcd's `controller` key under its lease. On every
// view of the cluster it checks each partition: a leader whose broker is gone is replaced by the
// first live member of the ISR, with the leader epoch raised; dead followers leave the ISR. It never
// elects outside the ISR unless the topic sets unclean.leader.election.enable=true. At a steady
// interval it hands leadership back to each partition's preferred replica (the first of its
// replicas) once that one is alive and in sync again, so leaders spread out after a broker returns.
// Every write compares the partition's revision and the controller epoch, so a deposed controller
// changes nothing.
import type { Clock, Logger } from '../core/clock.ts';
import type { EtcdStore } from './etcd_store.ts';
import type { Membership } from './membership.ts';
import type { ClusterView, PartitionState } from './model.ts';
import { elect_eligible, min_insync_of, with_isr } from './eligible_replicas.ts';
import { rethrow_invariant } from '../core/invariants.ts';
import { with_cluster_defaults } from '../core/metadata_store.ts';

export const UNCLEAN_ELECTION_CONFIG = 'unclean.leader.election.enable';

export class Controller {
  /** The controller epoch while this broker is controller, else null. */
  epoch: string | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  /** When leadership was last handed back to preferred replicas. */
  private rebalanced_ms: number;

  constructor(
    private readonly node_id: number,
    private readonly store: EtcdStore,
    private readonly membership: Membership,
    private readonly logger: Logger,
    /** Partition keys led by one broker when possible: the others follow the first one's leader. */
    private readonly colocated: string[] = [],
    /** 0: leadership stays where failover put it. */
    private readonly rebalance_interval_ms: number,
    private readonly clock: Clock,
  ) {
    this.rebalanced_ms = clock.now_ms();
  }

  get is_active(): boolean {
    return this.epoch !== null;
  }

  /** Runs one round on `view` (or queues one if a round is running). */
  on_view(view: ClusterView, refresh: () => Promise<ClusterView>): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = (async () => {
      try {
        let current = view;
        for (;;) {
          this.again = false;
          await this.round(current);
          if (!this.again) break;
          current = await refresh();
        }
      } catch (error) {
        rethrow_invariant(error);
        this.logger.warn({ error: String(error) }, 'controller round failed; retrying on the next view');
      } finally {
        this.running = null;
      }
    })();
  }

  private async round(view: ClusterView): Promise<void> {
    if (view.controller?.node_id === this.node_id && view.controller.epoch === this.epoch) {
      // still controller
    } else if (view.controller === null && this.membership.valid && this.membership.lease_id) {
      this.epoch = await this.store.campaign(this.node_id, this.membership.lease_id);
      if (this.epoch) this.logger.info({ node_id: this.node_id, epoch: this.epoch }, 'elected controller');
      return; // act on the next view, which shows the new controller key
    } else {
      if (this.epoch) this.logger.info({ node_id: this.node_id }, 'no longer controller');
      this.epoch = null;
      return;
    }
    if (!this.membership.valid) return;
    const live = new Set(view.brokers.keys());
    let changed = false;
    for (const [key, { value: state, mod_revision }] of view.partitions) {
      const slash = key.lastIndexOf('/');
      const topic = key.slice(0, slash);
      const configs = with_cluster_defaults(view.topics.get(topic)?.value.configs, view.broker_configs);
      const unclean = configs?.[UNCLEAN_ELECTION_CONFIG] === 'true';
      const next = next_partition_state(state, live, unclean, min_insync_of(configs));
      if (!next) continue;
      const written = await this.store.update_partition(
        topic,
        Number(key.slice(slash + 1)),
        next,
        mod_revision,
        this.epoch!,
      );
      if (written) {
        this.logger.info(
          { partition: key, leader: next.leader, leader_epoch: next.leader_epoch, isr: next.isr },
          'partition state changed',
        );
      } else {
        this.again = true;
      }
      changed ||= written !== null;
    }
    // Leadership moves only on a view that shows this round's elections.
    if (changed) return;
    await this.colocate(view, live);
    if (this.rebalance_interval_ms > 0 && this.clock.now_ms() - this.rebalanced_ms >= this.rebalance_interval_ms) {
      this.rebalanced_ms = this.clock.now_ms();
      await this.rebalance(view, live);
    }
  }

  /** Hands leadership back to preferred replicas that are alive and in sync. */
  private async rebalance(view: ClusterView, live: Set<number>): Promise<void> {
    const followers = new Set(this.colocated.slice(1));
    for (const [key, { value: state, mod_revision }] of view.partitions) {
      if (followers.has(key)) continue; // they follow their anchor's leader
      const next = preferred_leadership(state, live);
      if (!next) continue;
      const slash = key.lastIndexOf('/');
      if (
        await this.store.update_partition(
          key.slice(0, slash),
          Number(key.slice(slash + 1)),
          next,
          mod_revision,
          this.epoch!,
        )
      ) {
        this.logger.info(
          { partition: key, leader: next.leader, leader_epoch: next.leader_epoch },
          'leadership handed back to the preferred replica',
        );
      } else {
        this.again = true;
      }
    }
  }

  /** Moves leadership of the colocated partitions to the anchor's leader when it is in their ISR. */
  private async colocate(view: ClusterView, live: Set<number>): Promise<void> {
    const [anchor_key, ...others] = this.colocated;
    const anchor = anchor_key === undefined ? undefined : view.partitions.get(anchor_key)?.value.leader;
    if (anchor === undefined || anchor < 0 || !live.has(anchor)) return;
    for (const key of others) {
      const entry = view.partitions.get(key);
      if (!entry || entry.value.leader === anchor || !entry.value.isr.includes(anchor)) continue;
      const next = { ...entry.value, leader: anchor, leader_epoch: entry.value.leader_epoch + 1 };
      const slash = key.lastIndexOf('/');
      if (
        await this.store.update_partition(
          key.slice(0, slash),
          Number(key.slice(slash + 1)),
          next,
          entry.mod_revision,
          this.epoch!,
        )
      ) {
        this.logger.info(
          { partition: key, leader: anchor, leader_epoch: next.leader_epoch },
          'leadership moved to join the coordinator',
        );
      } else {
        this.again = true;
      }
    }
  }
}

/**
 * What the controller changes in one partition given the live brokers, or null for nothing. The
 * ISR does not become empty when its last member dies: it stays listed, and the partition waits for
 * it (a replica certain to have every acknowledged record) unless an eligible replica (one that left
 * the ISR below min.insync.replicas, src/cluster/eligible_replicas.ts) is live to lead instead.
 */
export function next_partition_state(
  state: PartitionState,
  live: Set<number>,
  unclean: boolean,
  min_isr = 1,
): PartitionState | null {
  const elected = next_leadership(state, live, unclean, min_isr);
  return finish_reassignment(elected ?? state, live) ?? elected;
}

/**
 * Leadership for the preferred replica (the first of the replicas) when it is alive, in sync and
 * not leading; null otherwise, and during a reassignment (which picks its own leader).
 */
export function preferred_leadership(state: PartitionState, live: Set<number>): PartitionState | null {
  const preferred = state.replicas[0];
  if (preferred === undefined || state.target_replicas || state.leader === preferred || state.leader < 0) return null;
  if (!live.has(preferred) || !state.isr.includes(preferred)) return null;
  return { ...state, leader: preferred, leader_epoch: state.leader_epoch + 1 };
}

/**
 * A reassignment given up: the partition goes back to the replicas it had before, keeping its
 * leader when that one stays, else electing the first of them that is alive and in sync. Null when
 * none of them is (or they are not known): the cancel is refused rather than leaving the partition
 * without a leader.
 */
export function cancelled_reassignment(state: PartitionState, live: Set<number>): PartitionState | null {
  const original = state.original_replicas;
  if (!original) return null; // begun before the original replicas were recorded
  const { target_replicas: _target, original_replicas: _before, ...rest } = state;
  const isr = state.isr.filter((id) => original.includes(id));
  if (original.includes(state.leader) && live.has(state.leader)) return { ...rest, replicas: [...original], isr };
  const leader = original.find((id) => isr.includes(id) && live.has(id));
  if (leader === undefined) return null;
  return { ...rest, replicas: [...original], isr, leader, leader_epoch: state.leader_epoch + 1 };
}

/** A reassignment whose new replicas are all in sync: the partition moves to exactly them. */
function finish_reassignment(state: PartitionState, live: Set<number>): PartitionState | null {
  const target = state.target_replicas;
  if (!target || !target.every((id) => state.isr.includes(id))) return null;
  const { target_replicas: _done, original_replicas: _before, ...rest } = state;
  const isr = state.isr.filter((id) => target.includes(id));
  if (target.includes(state.leader)) return { ...rest, replicas: [...target], isr };
  const leader = target.find((id) => isr.includes(id) && live.has(id)) ?? -1;
  return { ...rest, replicas: [...target], isr, leader, leader_epoch: state.leader_epoch + 1 };
}

function next_leadership(
  state: PartitionState,
  live: Set<number>,
  unclean: boolean,
  min_isr: number,
): PartitionState | null {
  const live_isr = state.isr.filter((id) => live.has(id));
  if (state.leader >= 0 && live.has(state.leader)) {
    if (live_isr.length === state.isr.length) return null;
    return with_isr(state, live_isr, min_isr);
  }
  const candidates = state.replicas.filter((id) => live_isr.includes(id));
  if (candidates.length > 0) {
    return { ...with_isr(state, live_isr, min_isr), leader: candidates[0]!, leader_epoch: state.leader_epoch + 1 };
  }
  const eligible = elect_eligible(state, live, min_isr);
  if (eligible) return eligible;
  if (unclean) {
    const any = state.replicas.find((id) => live.has(id));
    if (any !== undefined) {
      const { elr: _dropped, ...rest } = state;
      return { ...rest, leader: any, leader_epoch: state.leader_epoch + 1, isr: [any] };
    }
  }
  if (state.leader === -1) return null;
  return { ...state, leader: -1, leader_epoch: state.leader_epoch + 1 };
}
