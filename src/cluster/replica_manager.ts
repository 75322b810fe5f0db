// The replicas this broker holds, and the role it plays for each: leader (takes appends, serves
// followers, keeps the ISR and the high watermark), follower (copies the leader's log through a
// fetcher, after truncating what diverges), or none. Roles follow the cluster view from etcd; the
// broker's lease must be valid to lead. Nothing here speaks a wire protocol except the fetchers,
// which use the shared Kafka client codecs.
import type { PeerDialer } from './peer_dialer.ts';
import type { PartitionLog } from '../storage/index.ts';
import type { Clock, Logger } from '../core/clock.ts';
import { DeadPeers } from './dead_peers.ts';
import { disown_replica } from './disown_replica.ts';
import { with_isr } from './eligible_replicas.ts';
import { BrokerError } from '../core/errors.ts';
import type { EtcdStore } from './etcd_store.ts';
import type { Membership } from './membership.ts';
import { partition_key, type ClusterView, type PartitionState } from './model.ts';
import { LeaderState } from './leader_state.ts';
import { invariant, rethrow_invariant } from '../core/invariants.ts';
import { type Replica, type ReplicaHost, type ReplicaSettings, type Role } from './replica.ts';
import { FollowerFetcher } from './follower_fetcher.ts';

export class ReplicaManager {
  private readonly replicas = new Map<string, Replica>();
  private readonly fetchers = new Map<number, FollowerFetcher>();
  private view: ClusterView | null = null;
  private isr_timer: NodeJS.Timeout | null = null;
  /** Requests waiting for this broker to take up a partition's leadership (see when_leading). */
  private readonly leading_waiters = new Map<string, Set<() => void>>();
  private readonly dead_peers: DeadPeers;

  constructor(
    readonly node_id: number,
    private readonly store: EtcdStore,
    private readonly membership: Membership,
    private readonly host: ReplicaHost,
    readonly settings: ReplicaSettings,
    private readonly logger: Logger,
    private readonly request_refresh: () => void,
    private readonly dial: PeerDialer,
    private readonly clock: Clock,
  ) {
    this.dead_peers = new DeadPeers(node_id, store, logger, () => clock.now_ms());
    this.isr_timer = setInterval(
      () => this.shrink_isrs(),
      Math.max(100, Math.floor(settings.replica_lag_time_max_ms / 4)),
    );
    this.isr_timer.unref();
  }

  get(topic: string, partition: number): Replica | undefined {
    return this.replicas.get(`${topic}-${partition}`);
  }

  list(): Replica[] {
    return [...this.replicas.values()];
  }

  /**
   * `state` (the cluster view) names this broker the partition's leader and it has not taken up
   * the role yet: the view reaches every broker's watch before the leader has opened the log and
   * recorded the epoch. Until it has, the partition has no leader that serves it.
   */
  leadership_pending(topic: string, partition: number, state: PartitionState | undefined): boolean {
    if (!state || state.leader !== this.node_id || !this.membership.valid) return false;
    const replica = this.get(topic, partition);
    return !replica || replica.role !== 'leader' || replica.epoch < state.leader_epoch;
  }

  /**
   * Resolves once the partition's leadership is no longer pending here (taken up, or given to
   * another broker by a later view), or after `timeout_ms`; the caller then asks again.
   */
  when_leading(topic: string, partition: number, timeout_ms: number): Promise<void> {
    const name = `${topic}-${partition}`;
    return new Promise<void>((resolve) => {
      let waiters = this.leading_waiters.get(name);
      if (!waiters) this.leading_waiters.set(name, (waiters = new Set()));
      const done = () => {
        clearTimeout(timer);
        waiters.delete(done);
        if (waiters.size === 0 && this.leading_waiters.get(name) === waiters) this.leading_waiters.delete(name);
        resolve();
      };
      const timer = setTimeout(done, timeout_ms);
      waiters.add(done);
    });
  }

  /** Wakes the requests waiting for a partition whose leadership is no longer pending. */
  private settle_leading_waiters(): void {
    const view = this.view;
    if (this.leading_waiters.size === 0 || !view) return;
    for (const [name, waiters] of [...this.leading_waiters]) {
      const replica = this.replicas.get(name);
      if (!replica) continue; // not opened yet (the view being applied opens it), or gone: the timeout wakes them
      const state = view.partitions.get(partition_key(replica.topic, replica.partition))?.value;
      if (this.leadership_pending(replica.topic, replica.partition, state)) continue;
      for (const wake of [...waiters]) wake();
    }
  }

  // ---------------------------------------------------------------- following the view

  /** Brings every local replica's role in line with `view`. */
  async apply_view(view: ClusterView): Promise<void> {
    this.view = view;
    const seen = new Set<string>();
    for (const [key, { value: state, mod_revision }] of view.partitions) {
      if (!state.replicas.includes(this.node_id)) continue;
      const slash = key.lastIndexOf('/');
      const topic = key.slice(0, slash);
      const partition = Number(key.slice(slash + 1));
      const name = `${topic}-${partition}`;
      seen.add(name);
      let replica = this.replicas.get(name);
      if (!replica) {
        const log = await this.host.ensure_log(topic, partition);
        log.high_watermark_mode = 'external';
        log.replica_only = true;
        replica = {
          topic,
          partition,
          name,
          log,
          state,
          mod_revision,
          role: 'none',
          epoch: -1,
          leader: null,
          needs_truncation: false,
          truncating: null,
          refetch_from: null,
        };
        log.on_corrupt = (offset) => this.repair(replica!, offset);
        this.replicas.set(name, replica);
      }
      // A view read before this leader's own ISR write landed must not undo it: with the ISR it
      // had before an expansion, the high watermark would pass records the new member lacks
      // while etcd already names it in sync, electable.
      if (BigInt(mod_revision) < BigInt(replica.mod_revision)) continue;
      replica.state = state;
      replica.mod_revision = mod_revision;
      if (replica.leader) replica.leader.isr_change_pending = false;
      // One replica that cannot take up its role (a full disk refusing its leader epoch) does not
      // hold up the others; it tries again on the next view.
      await this.apply_role(replica).catch((error: unknown) => {
        rethrow_invariant(error);
        this.logger.warn(
          { partition: replica!.name, error: String(error) },
          'could not take up the role; trying again',
        );
      });
    }
    for (const replica of [...this.replicas.values()]) {
      if (seen.has(replica.name)) continue;
      this.step_down(replica);
      this.replicas.delete(replica.name);
      // Moved away (a reassignment) while the topic lives on: the local copy goes.
      if (view.topics.has(replica.topic)) await this.host.drop_log(replica.log);
    }
    for (const [leader_id, fetcher] of this.fetchers) fetcher.set_address(view.brokers.get(leader_id) ?? null);
    this.settle_leading_waiters();
  }

  private async apply_role(replica: Replica): Promise<void> {
    const { state } = replica;
    const want: Role = !this.membership.valid
      ? 'none'
      : state.leader === this.node_id
        ? 'leader'
        : state.leader >= 0
          ? 'follower'
          : 'none';
    if (want === 'leader') {
      if (replica.role !== 'leader' || replica.epoch !== state.leader_epoch) await this.become_leader(replica);
      else this.update_high_watermark(replica);
    } else if (want === 'follower') {
      if (replica.role !== 'follower' || replica.epoch !== state.leader_epoch) this.become_follower(replica);
    } else if (replica.role !== 'none') {
      this.step_down(replica);
    }
  }

  /**
   * A read of the local copy met a corrupt batch at `offset`: the broker gives up its place in the
   * ISR (and its leadership) in etcd, and once it follows a replica that leads, its fetcher cuts
   * the copy there and fetches the rest again. With no other replica to lead, it keeps leading and
   * the batch stays unreadable rather than lost, until a leader change makes it a follower.
   */
  private repair(replica: Replica, offset: number): void {
    if (replica.refetch_from !== null) return; // under way
    replica.refetch_from = offset;
    void disown_replica(this.store, this.node_id, replica.topic, replica.partition, this.logger, { corrupt_at: offset })
      .then(() => {
        replica.needs_truncation = true;
        this.request_refresh();
      })
      .catch((error: unknown) => {
        replica.refetch_from = null;
        this.logger.warn({ partition: replica.name, error: String(error) }, 'could not give up a damaged copy');
      });
  }

  /** The lease was lost: lead nothing, follow nothing, until registered again. */
  step_down_all(): void {
    for (const replica of this.replicas.values()) this.step_down(replica);
  }

  private async become_leader(replica: Replica): Promise<void> {
    this.leave_role(replica);
    await replica.truncating;
    const { log, state } = replica;
    invariant(
      state.leader_epoch >= replica.epoch && state.leader_epoch >= log.epochs.latest_epoch,
      () =>
        `${replica.name}: leader epoch ${state.leader_epoch} is older than ` +
        `${Math.max(replica.epoch, log.epochs.latest_epoch)}`,
    );
    // The epoch begins where this log ends; recorded before any append of the epoch.
    await log.epochs.assign(state.leader_epoch, log.next_offset);
    log.leader_epoch = state.leader_epoch;
    const leader = new LeaderState(log, state.leader_epoch, log.next_offset, state.isr, this.clock.now_ms());
    leader.track(log.on_progress(() => this.update_high_watermark(replica)));
    leader.track(log.on_high_watermark((hw) => leader.settle(hw, () => this.ack_refusal(replica))));
    log.ack_gate = (result) => leader.wait(result);
    log.replica_only = false;
    replica.leader = leader;
    replica.role = 'leader';
    replica.epoch = state.leader_epoch;
    this.logger.info(
      { partition: replica.name, leader_epoch: replica.epoch, isr: state.isr, end: log.next_offset },
      'leading partition',
    );
    this.update_high_watermark(replica);
    this.host.on_role(replica);
    this.settle_leading_waiters();
  }

  private become_follower(replica: Replica): void {
    invariant(
      replica.state.leader_epoch >= replica.epoch,
      () => `${replica.name}: following epoch ${replica.state.leader_epoch} after ${replica.epoch}`,
    );
    this.leave_role(replica);
    replica.role = 'follower';
    replica.epoch = replica.state.leader_epoch;
    replica.needs_truncation = true;
    this.fetcher_for(replica.state.leader).add(replica);
    this.host.on_role(replica);
  }

  private step_down(replica: Replica): void {
    if (replica.role === 'none') return;
    this.leave_role(replica);
    this.host.on_role(replica);
  }

  private leave_role(replica: Replica): void {
    replica.log.replica_only = true;
    if (replica.leader) {
      replica.leader.close(
        new BrokerError('not_leader_or_follower', `${replica.name}: this broker is no longer the leader`),
      );
      replica.leader = null;
      replica.log.ack_gate = null;
    }
    for (const fetcher of this.fetchers.values()) fetcher.remove(replica);
    replica.role = 'none';
  }

  private fetcher_for(leader_id: number): FollowerFetcher {
    let fetcher = this.fetchers.get(leader_id);
    if (!fetcher) {
      fetcher = new FollowerFetcher(
        this.node_id,
        leader_id,
        this.settings,
        this.host,
        this.logger,
        () => this.request_refresh(),
        this.dial,
        (peer) => this.dead_peers.suspect(peer),
      );
      fetcher.set_address(this.view?.brokers.get(leader_id) ?? null);
      this.fetchers.set(leader_id, fetcher);
    }
    return fetcher;
  }

  // ---------------------------------------------------------------- leading

  /** The log to append to, or not_leader_or_follower; checks min.insync.replicas for acks=all. */
  leader_log(topic: string, partition: number, acks_all: boolean): PartitionLog {
    const replica = this.replicas.get(`${topic}-${partition}`);
    if (!replica || replica.role !== 'leader' || !this.membership.valid) {
      throw new BrokerError('not_leader_or_follower', `this broker is not the leader of ${topic}-${partition}`);
    }
    if (acks_all) {
      const min_isr = this.host.min_insync_replicas(topic);
      if (replica.state.isr.length < min_isr) {
        throw new BrokerError(
          'not_enough_replicas',
          `${topic}-${partition} has ${replica.state.isr.length} in-sync replicas; min.insync.replicas is ${min_isr}`,
        );
      }
    }
    return replica.log;
  }

  private ack_refusal(replica: Replica): BrokerError | null {
    if (replica.role !== 'leader' || !this.membership.valid) {
      return new BrokerError(
        'not_leader_or_follower',
        `${replica.name}: leadership lost before the in-sync replicas confirmed`,
      );
    }
    const min_isr = Math.min(this.host.min_insync_replicas(replica.topic), replica.state.replicas.length);
    if (replica.state.isr.length < min_isr) {
      return new BrokerError(
        'not_enough_replicas_after_append',
        `${replica.name}: the ISR shrank to ${replica.state.isr.length}, below min.insync.replicas ${min_isr}`,
      );
    }
    return null;
  }

  /**
   * Moves the high watermark to what the ISR holds, but only while the ISR is at least
   * min.insync.replicas (KIP-966's rule): replicas that left a smaller ISR stay eligible to lead,
   * so nothing may become committed (readable, or answered to a retried write) without them. The
   * appends waiting meanwhile are refused at once, as with a leader whose ISR shrinks below it.
   */
  private update_high_watermark(replica: Replica): void {
    const leader = replica.leader;
    if (!leader || replica.role !== 'leader' || !this.membership.valid) return;
    const refusal = this.ack_refusal(replica);
    if (refusal) {
      leader.refuse_waiting(refusal); // it holds until the ISR is whole enough again
      return;
    }
    const hw = leader.high_watermark_for(replica.state.isr, this.node_id, this.host.durable_end(replica.log));
    if (hw > replica.log.high_watermark) replica.log.set_high_watermark(hw);
  }

  /**
   * A follower's fetch, on the leader: checks the epoch it believes in, records its progress,
   * lets it into the ISR once caught up, and returns the log to read from.
   */
  replica_fetch(
    node_id: number,
    topic: string,
    partition: number,
    fetch_offset: number,
    current_leader_epoch: number,
  ): PartitionLog {
    const replica = this.replicas.get(`${topic}-${partition}`);
    if (!replica || replica.role !== 'leader' || !replica.leader || !this.membership.valid) {
      throw new BrokerError('not_leader_or_follower', `this broker is not the leader of ${topic}-${partition}`);
    }
    if (current_leader_epoch >= 0 && current_leader_epoch !== replica.epoch) {
      throw current_leader_epoch > replica.epoch
        ? new BrokerError(
            'unknown_leader_epoch',
            `${replica.name}: epoch ${current_leader_epoch} is newer than this leader's ${replica.epoch}`,
          )
        : new BrokerError(
            'fenced_leader_epoch',
            `${replica.name}: epoch ${current_leader_epoch} is older than this leader's ${replica.epoch}`,
          );
    }
    if (!replica.state.replicas.includes(node_id)) {
      throw new BrokerError('not_leader_or_follower', `broker ${node_id} is not a replica of ${replica.name}`);
    }
    if (fetch_offset <= replica.log.written_offset) {
      replica.leader.record_fetch(node_id, fetch_offset, this.clock.now_ms());
      this.maybe_expand_isr(replica, node_id, fetch_offset);
      this.update_high_watermark(replica);
    }
    return replica.log;
  }

  /** Where `epoch` ends in this leader's log (OffsetForLeaderEpoch). */
  end_offset_for_epoch(
    topic: string,
    partition: number,
    epoch: number,
    current_leader_epoch: number,
  ): { epoch: number; end_offset: number } {
    const replica = this.replicas.get(`${topic}-${partition}`);
    if (!replica || replica.role !== 'leader')
      throw new BrokerError('not_leader_or_follower', `this broker is not the leader of ${topic}-${partition}`);
    if (current_leader_epoch >= 0 && current_leader_epoch !== replica.epoch) {
      throw current_leader_epoch > replica.epoch
        ? new BrokerError(
            'unknown_leader_epoch',
            `${replica.name}: epoch ${current_leader_epoch} is newer than ${replica.epoch}`,
          )
        : new BrokerError(
            'fenced_leader_epoch',
            `${replica.name}: epoch ${current_leader_epoch} is older than ${replica.epoch}`,
          );
    }
    return replica.log.epochs.end_offset_for(epoch, replica.log.written_offset);
  }

  // ---------------------------------------------------------------- the ISR

  private maybe_expand_isr(replica: Replica, node_id: number, fetch_offset: number): void {
    const leader = replica.leader!;
    if (replica.state.isr.includes(node_id) || leader.isr_change_pending) return;
    if (fetch_offset < Math.max(replica.log.high_watermark, leader.epoch_start_offset)) return;
    void this.write_isr(replica, [...replica.state.isr, node_id], 'caught up');
  }

  private shrink_isrs(): void {
    if (!this.membership.valid) return;
    const now = this.clock.now_ms();
    for (const replica of this.replicas.values()) {
      const leader = replica.leader;
      if (!leader || replica.role !== 'leader' || leader.isr_change_pending) continue;
      const lagging = replica.state.isr.filter(
        (id) =>
          id !== this.node_id &&
          now - (leader.followers.get(id)?.caught_up_ms ?? 0) > this.settings.replica_lag_time_max_ms,
      );
      if (lagging.length > 0)
        void this.write_isr(
          replica,
          replica.state.isr.filter((id) => !lagging.includes(id)),
          `lagging: ${lagging.join(',')}`,
        );
    }
  }

  /** Writes a new ISR if the partition is unchanged in etcd since this leader's view of it. */
  private async write_isr(replica: Replica, isr: number[], why: string): Promise<void> {
    const leader = replica.leader!;
    leader.isr_change_pending = true;
    const next = with_isr(replica.state, isr, this.host.min_insync_replicas(replica.topic));
    let written: string | null = null;
    try {
      if (this.membership.valid)
        written = await this.store.update_partition(replica.topic, replica.partition, next, replica.mod_revision);
    } catch (error) {
      rethrow_invariant(error);
      this.logger.warn({ partition: replica.name, error: String(error) }, 'could not write the ISR');
    }
    if (written && replica.leader === leader) {
      replica.state = next;
      replica.mod_revision = written;
      this.logger.info({ partition: replica.name, isr, why }, 'ISR changed');
      this.update_high_watermark(replica);
      leader.settle(replica.log.high_watermark, () => this.ack_refusal(replica));
    } else if (!written && replica.leader === leader) {
      leader.isr_change_pending = false;
    }
    this.request_refresh();
  }

  close(): void {
    if (this.isr_timer) clearInterval(this.isr_timer);
    for (const replica of this.replicas.values()) this.leave_role(replica);
    for (const fetcher of this.fetchers.values()) fetcher.close();
    this.fetchers.clear();
  }
}
