// One broker's membership in a cluster: its etcd connection and lease, the controller it may
// become, and its replicas. The view of the cluster is re-read from etcd after every change (a
// watch) and at a steady interval, and applied in order: topics to the broker core, then replica
// roles, then the controller's round.
import { disown_replicas } from './disown_replica.ts';
import { peer_dialer, type PeerTls } from './peer_dialer.ts';
import type { SaslOptions } from '../protocol/sasl/client_login.ts';
import type { PartitionLog } from '../storage/index.ts';
import type { Clock, Logger } from '../core/clock.ts';
import { BrokerError } from '../core/errors.ts';
import type { Election } from '../core/placement.ts';
import { EtcdStore } from './etcd_store.ts';
import { Membership } from './membership.ts';
import { Controller, cancelled_reassignment, next_partition_state, preferred_leadership } from './controller.ts';
import { ProduceForwarder } from './produce_forwarder.ts';
import { TxnPeers } from './txn_peers.ts';
import { RemotePartitions } from './remote_partitions.ts';
import { ReplicaManager } from './replica_manager.ts';
import { REPLICA_SETTINGS_DEFAULT, type ReplicaHost, type ReplicaSettings } from './replica.ts';
import {
  type BrokerRegistration,
  type ClusterTopic,
  type ClusterView,
  type PartitionState,
  assign_replicas,
  empty_view,
  partition_key,
} from './model.ts';
import { rethrow_invariant } from '../core/invariants.ts';
import { default_number, default_text } from '../core/settings.ts';

export interface ClusterOptions {
  /** etcd endpoints, e.g. http://127.0.0.1:2379. */
  etcd: string[];
  /** Key prefix of this cluster in etcd. */
  prefix?: string;
  lease_ttl_ms?: number;
  /** Replication factor of topics created without one (capped by the live brokers). */
  replication_factor_default?: number;
  replicas?: Partial<ReplicaSettings>;
  /** How often the controller moves leadership back to preferred replicas; 0 turns that off. */
  leader_rebalance_interval_ms?: number;
  /** Partition keys (`topic/partition`) one broker should lead together; the first is the anchor. */
  colocated?: string[];
  /** How this broker logs in to the others when their listeners require SASL; null when they do not. */
  inter_broker_sasl?: SaslOptions | null;
  /** How this broker connects to the others when their listeners take TLS; null when they do not. */
  inter_broker_tls?: PeerTls | null;
}

/** The settings table's (core/settings.ts): the config file's `cluster` object. */
export const CLUSTER_DEFAULTS = {
  prefix: default_text('cluster.prefix'),
  lease_ttl_ms: default_number('cluster.lease_ttl_ms'),
  replication_factor_default: default_number('cluster.replication_factor'),
  leader_rebalance_interval_ms: default_number('cluster.leader_rebalance_interval_ms'),
};

/** The view is re-read at least this often, whatever the watch says. */
const VIEW_REFRESH_INTERVAL_MS = 1_000;
/** How long a topic change waits to appear in this broker's view. */
const VIEW_WAIT_MS = 10_000;

/** What the broker core does with a new view. */
export interface ClusterHost extends ReplicaHost {
  apply_topics(view: ClusterView): Promise<void>;
}

export class ClusterNode {
  view: ClusterView = empty_view();
  readonly replicas: ReplicaManager;
  readonly controller: Controller;
  readonly forwarder: ProduceForwarder;
  readonly txn_peers: TxnPeers;
  /** Partitions read from their leader elsewhere. */
  readonly remote: RemotePartitions;
  private refreshing: Promise<void> | null = null;
  private refresh_again = false;
  private timer: NodeJS.Timeout | null = null;
  private stop_watch: (() => Promise<void>) | null = null;
  private readonly view_listeners = new Set<() => void>();
  private closed = false;

  private constructor(
    readonly node_id: number,
    readonly store: EtcdStore,
    readonly membership: Membership,
    private readonly host: ClusterHost,
    readonly options: Required<Omit<ClusterOptions, 'replicas' | 'colocated'>>,
    replica_settings: ReplicaSettings,
    private readonly logger: Logger,
    colocated: string[],
    clock: Clock,
  ) {
    const rebalance_ms = options.leader_rebalance_interval_ms;
    this.controller = new Controller(node_id, store, membership, logger, colocated, rebalance_ms, clock);
    const dial = peer_dialer(options.inter_broker_sasl, options.inter_broker_tls);
    this.forwarder = new ProduceForwarder(node_id, () => this.view, dial, clock);
    this.txn_peers = new TxnPeers(node_id, () => this.view, dial, clock);
    this.remote = new RemotePartitions(node_id, () => this.view, logger, dial, clock);
    const refresh = () => this.request_refresh();
    this.replicas = new ReplicaManager(
      node_id,
      store,
      membership,
      host,
      replica_settings,
      logger,
      refresh,
      dial,
      clock,
    );
  }

  /** Connects to etcd (failing with the endpoint named), and registers this broker. */
  static async connect(
    options: ClusterOptions,
    node_id: number,
    logger: Logger,
  ): Promise<{ store: EtcdStore; cluster_id: (candidate: string) => Promise<string> }> {
    const prefix = options.prefix ?? CLUSTER_DEFAULTS.prefix;
    const store = new EtcdStore(options.etcd, prefix.endsWith('/') ? prefix : `${prefix}/`);
    try {
      await store.check_reachable();
    } catch (error) {
      store.close();
      throw error;
    }
    logger.info({ etcd: options.etcd, node_id }, 'connected to etcd');
    return { store, cluster_id: (candidate) => store.ensure_cluster_id(candidate) };
  }

  static async join(
    store: EtcdStore,
    options: ClusterOptions,
    registration: BrokerRegistration,
    host: ClusterHost,
    logger: Logger,
    clock: Clock,
  ): Promise<ClusterNode> {
    const defaults = CLUSTER_DEFAULTS;
    const resolved = {
      etcd: options.etcd,
      prefix: store.prefix,
      lease_ttl_ms: options.lease_ttl_ms ?? defaults.lease_ttl_ms,
      replication_factor_default: options.replication_factor_default ?? defaults.replication_factor_default,
      leader_rebalance_interval_ms: options.leader_rebalance_interval_ms ?? defaults.leader_rebalance_interval_ms,
      inter_broker_sasl: options.inter_broker_sasl ?? null,
      inter_broker_tls: options.inter_broker_tls ?? null,
    };
    // Logs that may miss acknowledged records follow until caught up (KIP-966's unclean shutdown).
    await disown_replicas(store, registration.node_id, host.suspect_copies(), logger);
    const membership = new Membership(store, registration, resolved.lease_ttl_ms, logger, clock);
    await membership.join();
    const replicas = { ...REPLICA_SETTINGS_DEFAULT, ...options.replicas };
    const colocated = options.colocated ?? [];
    const id = registration.node_id;
    const node = new ClusterNode(id, store, membership, host, resolved, replicas, logger, colocated, clock);
    membership.on_lost(() => {
      node.replicas.step_down_all();
      node.request_refresh();
    });
    membership.on_renewed(() => node.request_refresh());
    node.stop_watch = await store.watch(() => node.request_refresh());
    await node.refresh();
    node.timer = setInterval(() => node.request_refresh(), VIEW_REFRESH_INTERVAL_MS);
    node.timer.unref();
    return node;
  }

  // ---------------------------------------------------------------- the view

  request_refresh(): void {
    if (this.closed) return;
    if (this.refreshing) {
      this.refresh_again = true;
      return;
    }
    void this.refresh();
  }

  /** Re-reads the view and applies it; concurrent calls fold into one more round. */
  private refresh(): Promise<void> {
    if (this.refreshing) {
      this.refresh_again = true;
      return this.refreshing;
    }
    this.refreshing = (async () => {
      try {
        do {
          this.refresh_again = false;
          const view = await this.store.read_view();
          if (this.closed) return;
          this.view = view;
          await this.host.apply_topics(view);
          await this.replicas.apply_view(view);
          this.controller.on_view(view, () => this.store.read_view());
          for (const listener of this.view_listeners) listener();
        } while (this.refresh_again && !this.closed);
      } catch (error) {
        rethrow_invariant(error);
        if (!this.closed) this.logger.warn({ error: String(error) }, 'could not read the cluster view from etcd');
      } finally {
        this.refreshing = null;
      }
    })();
    return this.refreshing;
  }

  /** Reads and applies the view now (or waits for the round under way and the one after it). */
  catch_up(): Promise<void> {
    return this.refresh();
  }

  /** Resolves once the view satisfies `ready` (after a refresh), or fails after VIEW_WAIT_MS. */
  async wait_for_view(ready: (view: ClusterView) => boolean, what: string): Promise<void> {
    this.request_refresh();
    if (ready(this.view)) return;
    await new Promise<void>((resolve, reject) => {
      const done = () => {
        if (!ready(this.view)) return;
        clearTimeout(timer);
        this.view_listeners.delete(done);
        resolve();
      };
      const timer = setTimeout(() => {
        this.view_listeners.delete(done);
        const message = `${what} did not appear in this broker's view within ${VIEW_WAIT_MS} ms`;
        reject(new BrokerError('request_timed_out', message));
      }, VIEW_WAIT_MS);
      this.view_listeners.add(done);
    });
  }

  // ---------------------------------------------------------------- topics

  live_brokers(): number[] {
    return [...this.view.brokers.keys()].sort((a, b) => a - b);
  }

  async create_topic(
    record: ClusterTopic | Omit<ClusterTopic, 'assignment'>,
    replication_factor: number,
  ): Promise<ClusterTopic> {
    const assignment =
      'assignment' in record ? this.registered_only(record.assignment) : this.assigned(record, replication_factor);
    const topic: ClusterTopic = { ...record, assignment };
    const states = assignment.map(new_partition_state);
    if (!(await this.store.create_topic(topic, states))) {
      throw new BrokerError('topic_already_exists', `topic ${record.name} already exists`);
    }
    await this.wait_for_view((view) => view.topics.get(topic.name)?.value.id === topic.id, `topic ${topic.name}`);
    return topic;
  }

  /** Replicas for partitions added to `topic`: `given` (checked), else spread over the live brokers. */
  private more_replicas(topic: ClusterTopic, count: number, given: number[][] | undefined): number[][] {
    const rf = topic.assignment[0]?.length ?? 1;
    if (given) {
      if (given[0]!.length !== rf)
        throw new BrokerError('invalid_replica_assignment', `the topic's partitions have ${rf} replicas each`);
      return this.registered_only(given);
    }
    const live = this.live_brokers();
    if (rf > live.length) {
      const message = `replication factor ${rf} needs ${rf} live brokers; ${live.length} are live`;
      throw new BrokerError('invalid_replication_factor', message);
    }
    return assign_replicas(live, count, rf, topic.partitions);
  }

  /** Replicas for each partition of a new topic, spread over the live brokers. */
  private assigned(record: { name: string; partitions: number }, replication_factor: number): number[][] {
    const live = this.live_brokers();
    const by_default = Math.min(this.options.replication_factor_default, live.length);
    const rf = replication_factor > 0 ? replication_factor : by_default;
    if (rf > live.length) {
      const message = `replication factor ${rf} is larger than the ${live.length} live brokers`;
      throw new BrokerError('invalid_replication_factor', message);
    }
    return assign_replicas(live, record.partitions, rf, hash_start(record.name, live.length));
  }

  /** A manual assignment, when every broker it names is registered. */
  private registered_only(assignment: number[][]): number[][] {
    const unknown = [...new Set(assignment.flat())].filter((id) => !this.view.brokers.has(id));
    if (unknown.length > 0)
      throw new BrokerError('invalid_replica_assignment', `brokers ${unknown.join(',')} are not registered`);
    return assignment;
  }

  async delete_topic(name: string): Promise<void> {
    await this.store.delete_topic(name);
    await this.wait_for_view((view) => !view.topics.has(name), `deletion of topic ${name}`);
  }

  /** Writes a changed topic record (configs, more partitions); new partitions get replicas too. */
  async update_topic(
    name: string,
    change: (topic: ClusterTopic) => ClusterTopic,
    new_replicas?: number[][],
  ): Promise<void> {
    for (;;) {
      const current = this.view.topics.get(name);
      if (!current) throw new BrokerError('unknown_topic_or_partition', `unknown topic ${name}`);
      const next = change(structuredClone(current.value));
      const added: Array<[number, PartitionState]> = [];
      if (next.partitions > current.value.partitions) {
        const more = this.more_replicas(current.value, next.partitions - current.value.partitions, new_replicas);
        next.assignment = [...current.value.assignment, ...more];
        more.forEach((replicas, i) => added.push([current.value.partitions + i, new_partition_state(replicas)]));
      }
      if (await this.store.update_topic(next, current.mod_revision, added)) {
        const changed = (view: ClusterView) => view.topics.get(name)?.mod_revision !== current.mod_revision;
        await this.wait_for_view(changed, `the change to topic ${name}`);
        return;
      }
      await this.refresh();
    }
  }

  /**
   * Starts moving a partition to `replicas`: they join as followers next to the current ones, and
   * the controller switches to exactly them once all are in sync.
   */
  async reassign(topic: string, partition: number, replicas: number[]): Promise<void> {
    if (replicas.length === 0 || new Set(replicas).size !== replicas.length) {
      const message = `replicas ${replicas.join(',')} must be distinct node ids, at least one`;
      throw new BrokerError('invalid_replica_assignment', message);
    }
    const unknown = replicas.filter((id) => !this.view.brokers.has(id));
    if (unknown.length > 0) {
      throw new BrokerError('invalid_replica_assignment', `brokers ${unknown.join(',')} are not registered`);
    }
    for (;;) {
      const entry = this.partition_entry(topic, partition);
      const current = entry.value;
      const original = current.original_replicas ?? current.replicas;
      const next: PartitionState = {
        ...current,
        replicas: [...new Set([...current.replicas, ...replicas])],
        target_replicas: [...replicas],
        original_replicas: [...original],
      };
      if (await this.store.update_partition(topic, partition, next, entry.mod_revision)) {
        const what = `the reassignment of ${topic}-${partition}`;
        await this.wait_for_partition_change(topic, partition, entry.mod_revision, what);
        return;
      }
      await this.refresh();
    }
  }

  /** Gives up a reassignment in progress: the partition goes back to the replicas it had before. */
  async cancel_reassignment(topic: string, partition: number): Promise<void> {
    for (;;) {
      const entry = this.partition_entry(topic, partition);
      if (!entry.value.target_replicas) {
        throw new BrokerError('no_reassignment_in_progress', `${topic}-${partition} is not being reassigned`);
      }
      const next = cancelled_reassignment(entry.value, new Set(this.view.brokers.keys()));
      if (!next) {
        const why = 'its replicas from before are not known, or none of them is alive and in sync; reassign it instead';
        throw new BrokerError('leader_not_available', `${topic}-${partition}: ${why}`);
      }
      if (await this.store.update_partition(topic, partition, next, entry.mod_revision)) {
        const what = `the cancel of ${topic}-${partition}'s reassignment`;
        await this.wait_for_partition_change(topic, partition, entry.mod_revision, what);
        return;
      }
      await this.refresh();
    }
  }

  /**
   * ElectLeaders: the preferred replica as leader, or (unclean) any live replica of a partition
   * whose leader is gone, as the controller would choose them; written against the partition's
   * revision, so a concurrent change of the controller's is read again first.
   */
  async elect_leader(topic: string, partition: number, election: Election): Promise<void> {
    for (;;) {
      const entry = this.partition_entry(topic, partition);
      const state = entry.value;
      const live = new Set(this.view.brokers.keys());
      const name = `${topic}-${partition}`;
      let next: PartitionState | null;
      if (election === 'preferred') {
        if (state.leader === state.replicas[0]) throw new BrokerError('election_not_needed', `${name}: led by it`);
        next = preferred_leadership(state, live);
        const why = `the preferred replica ${state.replicas[0]} is not alive and in sync, or a move is under way`;
        if (!next) throw new BrokerError('preferred_leader_not_available', `${name}: ${why}`);
      } else {
        if (state.leader >= 0 && live.has(state.leader))
          throw new BrokerError('election_not_needed', `${name} has a live leader, ${state.leader}`);
        next = next_partition_state(state, live, true);
        if (!next || next.leader < 0)
          throw new BrokerError('eligible_leaders_not_available', `${name}: none of its replicas is alive`);
      }
      if (await this.store.update_partition(topic, partition, next, entry.mod_revision)) {
        await this.wait_for_partition_change(topic, partition, entry.mod_revision, `the election of ${name}`);
        return;
      }
      await this.refresh();
    }
  }

  private partition_entry(topic: string, partition: number) {
    const entry = this.view.partitions.get(partition_key(topic, partition));
    if (!entry) throw new BrokerError('unknown_topic_or_partition', `unknown topic or partition ${topic}-${partition}`);
    return entry;
  }

  private async wait_for_partition_change(topic: string, partition: number, revision: string, what: string) {
    const key = partition_key(topic, partition);
    await this.wait_for_view((view) => view.partitions.get(key)?.mod_revision !== revision, what);
  }

  partition_state(topic: string, partition: number): PartitionState | undefined {
    return this.view.partitions.get(partition_key(topic, partition))?.value;
  }

  leader_log(topic: string, partition: number, acks_all: boolean): PartitionLog {
    return this.replicas.leader_log(topic, partition, acks_all);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await this.stop_watch?.().catch(() => undefined);
    this.replicas.close();
    this.forwarder.close();
    this.txn_peers.close();
    this.remote.close();
    await this.refreshing?.catch(() => undefined);
    await this.membership.close();
    this.store.close();
  }
}

/** Spreads the first replica of topics over brokers by name, so leaders do not pile on one. */
function hash_start(name: string, brokers: number): number {
  let hash = 0;
  for (let i = 0; i < name.length; i++) hash = (hash * 31 + name.charCodeAt(i)) >>> 0;
  return brokers === 0 ? 0 : hash % brokers;
}

/** A new partition's state: led by its first replica, every replica in sync. */
function new_partition_state(replicas: number[]): PartitionState {
  return { leader: replicas[0]!, leader_epoch: 0, isr: [...replicas], replicas: [...replicas] };
}
