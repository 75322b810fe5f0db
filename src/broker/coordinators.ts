// The coordinators this broker runs: the group coordinator with committed offsets, the share
// coordinator (queues), delayed delivery and the transaction coordinator. Each runs where the
// leader of its internal partition is and follows it: built and loaded when this broker becomes
// leader there, closed when it stops.
// On a single node that is at start, for ever. While one runs elsewhere its accessor answers
// not_coordinator (or not_leader_or_follower for delayed delivery), which clients act on.
import type { Clock, Logger } from '../core/clock.ts';
import { BrokerError } from '../core/errors.ts';
import { rethrow_invariant } from '../core/invariants.ts';
import type { PartitionReader } from '../core/partition_reader.ts';
import type { ReplicaRole } from '../core/placement.ts';
import type { DeadLetterRouter } from './routing/dead_lettering.ts';
import type { GroupConfigs } from '../core/types.ts';
import type { PartitionLog } from '../storage/index.ts';
import { DELAYED_TOPIC, DelayedDelivery, type DelayedSettings } from './delayed/delayed_delivery.ts';
import { GroupCoordinator, type GroupSettings } from './group_coordinator.ts';
import { OFFSETS_TOPIC, OffsetStore } from './offset_store.ts';
import { ShareCoordinator } from './queues/share_coordinator.ts';
import { type ShareGroupSettings } from './queues/group_config.ts';
import { SHARE_STATE_TOPIC, ShareStateStore } from './queues/share_state_store.ts';
import type { AppendRecords, TopicManager } from './topics.ts';
import { TxnCoordinator, type TxnSettings } from './txn/txn_coordinator.ts';
import { TXN_STATE_TOPIC, TxnLog, type TxnPartition } from './txn/txn_log.ts';
import { half_checks } from './txn/half_checks.ts';
import type { Marker } from '../protocol/control_records.ts';

/** What the coordinators need of the rest of the core. */
export interface CoordinatorDeps {
  node_id: number;
  topics: TopicManager;
  logger: Logger;
  clock: Clock;
  /** Share-group durations (sessions, locks, backoff): see BrokerParts. */
  monotonic_clock: Clock;
  reader(topic: string, partition: number): Promise<PartitionReader>;
  reader_now(topic: string, partition: number): PartitionReader;
  append: AppendRecords;
  ensure_topic(name: string, partitions: number): Promise<void>;
  group_configs(group_id: string): GroupConfigs;
  /** Routes a share group's dead letters through an AMQP dead-letter exchange; null: none. */
  route_dead_letters?: DeadLetterRouter;
  allocate_producer_id(): Promise<number>;
  /** Appends a transaction marker through the partition's leader, once durable. */
  write_marker(partition: TxnPartition, marker: Marker): Promise<void>;
  settings: { groups: GroupSettings; shares: ShareGroupSettings; delayed: DelayedSettings; transactions: TxnSettings };
}

interface GroupHost {
  offsets: OffsetStore;
  groups: GroupCoordinator;
}

interface Hosts {
  group: GroupHost | null;
  share: ShareCoordinator | null;
  delayed: DelayedDelivery | null;
  txn: TxnCoordinator | null;
}

type Kind = keyof Hosts;

/** Which coordinator follows which internal partition (partition 0 of each). */
/** Wait before starting a coordinator again after its load failed. */
const ACTIVATE_RETRY_MS = 1000;

const COORDINATED: Record<string, Kind> = {
  [OFFSETS_TOPIC]: 'group',
  [SHARE_STATE_TOPIC]: 'share',
  [DELAYED_TOPIC]: 'delayed',
  [TXN_STATE_TOPIC]: 'txn',
};

export class Coordinators {
  private readonly hosts: Hosts = { group: null, share: null, delayed: null, txn: null };
  /** Raised on every change, so a slow activation cannot install a stale coordinator. */
  private readonly generation: Record<Kind, number> = { group: 0, share: 0, delayed: 0, txn: 0 };
  /**
   * The stop of each kind's last coordinator here: the next one starts only after it, so two never
   * run on one log (seed 2525: one stopping while the next ran pruned the next one's batch).
   */
  private readonly stopping: Record<Kind, Promise<void>> = {
    group: Promise.resolve(),
    share: Promise.resolve(),
    delayed: Promise.resolve(),
    txn: Promise.resolve(),
  };
  private closed = false;

  constructor(private readonly deps: CoordinatorDeps) {}

  /** A role change of an internal partition starts or stops the coordinator that follows it. */
  on_role(topic: string, partition: number, role: ReplicaRole, log: PartitionLog): Promise<void> {
    const kind = partition === 0 ? COORDINATED[topic] : undefined;
    if (!kind) return Promise.resolve();
    return role === 'leader' ? this.activate(kind, log) : this.deactivate(kind);
  }

  /**
   * Starts a coordinator on the log it now leads. Loading may fail (a full disk refuses the state
   * it writes on taking over): the broker stays up and tries again while it still leads the log.
   */
  private async activate(kind: Kind, log: PartitionLog): Promise<void> {
    const generation = ++this.generation[kind];
    const current = () => generation === this.generation[kind] && !this.closed;
    await this.deactivate(kind, generation);
    await this.stopping[kind];
    if (!current()) return;
    for (;;) {
      try {
        const host = await this.build(kind, log);
        if (current()) this.install(kind, host);
        else await close_host(host);
        return;
      } catch (error) {
        rethrow_invariant(error);
        if (!current()) return;
        this.deps.logger.warn({ kind, error: String(error) }, 'coordinator could not start here; trying again');
        await new Promise((resolve) => setTimeout(resolve, ACTIVATE_RETRY_MS));
        if (!current()) return;
      }
    }
  }

  private async build(kind: Kind, log: PartitionLog): Promise<NonNullable<Hosts[Kind]>> {
    const { deps } = this;
    if (kind === 'group') {
      const offsets = new OffsetStore(log, deps.clock);
      await offsets.load();
      const groups = new GroupCoordinator(offsets, deps.settings.groups, deps.clock, deps.topics, deps.group_configs);
      return { offsets, groups };
    }
    if (kind === 'share') {
      const shares = new ShareCoordinator(
        {
          topics: deps.topics,
          reader: deps.reader,
          reader_now: deps.reader_now,
          store: new ShareStateStore(log, deps.clock),
          logger: deps.logger,
          clock: deps.clock,
          monotonic_clock: deps.monotonic_clock,
          ensure_dead_letter_topic: (name) => deps.ensure_topic(name, 1),
          group_configs: deps.group_configs,
          append: deps.append,
          route_dead_letters: deps.route_dead_letters,
        },
        deps.settings.shares,
      );
      await shares.load();
      return shares;
    }
    if (kind === 'txn') {
      return TxnCoordinator.open({
        log: new TxnLog(log),
        clock: deps.clock,
        logger: deps.logger,
        settings: deps.settings.transactions,
        coordinator_epoch: log.leader_epoch,
        allocate_producer_id: deps.allocate_producer_id,
        partition_refusal: (topic, partition) =>
          deps.topics.has(topic, partition)
            ? null
            : new BrokerError('unknown_topic_or_partition', `${topic}-${partition} does not exist`),
        write_marker: deps.write_marker,
        half: half_checks({
          clock: deps.clock,
          reader: deps.reader,
          append: deps.append,
          ensure_topic: deps.ensure_topic,
        }),
      });
    }
    const delayed = new DelayedDelivery(log, deps.topics, deps.logger, deps.clock, deps.settings.delayed, deps.append);
    await delayed.load(deps.clock.now_ms());
    return delayed;
  }

  private install(kind: Kind, host: NonNullable<Hosts[Kind]>): void {
    if (kind === 'group') {
      this.hosts.group = host as GroupHost;
      this.deps.logger.info({ node_id: this.deps.node_id }, 'group coordinator active here');
    } else if (kind === 'share') {
      (host as ShareCoordinator).start();
      this.hosts.share = host as ShareCoordinator;
      this.deps.logger.info({ node_id: this.deps.node_id }, 'share-group coordinator active here');
    } else if (kind === 'txn') {
      this.hosts.txn = host as TxnCoordinator;
      this.deps.logger.info({ node_id: this.deps.node_id }, 'transaction coordinator active here');
    } else {
      const delayed = host as DelayedDelivery;
      delayed.start();
      this.hosts.delayed = delayed;
      this.deps.logger.info({ node_id: this.deps.node_id, pending: delayed.pending }, 'delayed delivery active here');
    }
  }

  private async deactivate(kind: Kind, generation = ++this.generation[kind]): Promise<void> {
    this.generation[kind] = generation;
    const host = this.hosts[kind];
    this.hosts[kind] = null;
    if (!host) return;
    const stopped = close_host(host);
    this.stopping[kind] = stopped;
    await stopped;
    const counts = host instanceof DelayedDelivery ? { pending: host.pending, ...host.counters } : {};
    this.deps.logger.info({ node_id: this.deps.node_id, kind, ...counts }, 'coordinator stopped here');
  }

  get group_host(): GroupHost | null {
    return this.hosts.group;
  }

  get groups(): GroupCoordinator {
    return this.require_group_host().groups;
  }

  get offsets(): OffsetStore {
    return this.require_group_host().offsets;
  }

  private require_group_host(): GroupHost {
    if (this.hosts.group) return this.hosts.group;
    throw new BrokerError('not_coordinator', `broker ${this.deps.node_id} is not the group coordinator`);
  }

  get share_host(): ShareCoordinator | null {
    return this.hosts.share;
  }

  get shares(): ShareCoordinator {
    if (this.hosts.share) return this.hosts.share;
    throw new BrokerError('not_coordinator', `broker ${this.deps.node_id} is not the share-group coordinator`);
  }

  get delayed_host(): DelayedDelivery | null {
    return this.hosts.delayed;
  }

  get delayed(): DelayedDelivery {
    if (this.hosts.delayed) return this.hosts.delayed;
    throw new BrokerError('not_leader_or_follower', `broker ${this.deps.node_id} does not run delayed delivery now`);
  }

  get txn_host(): TxnCoordinator | null {
    return this.hosts.txn;
  }

  get txns(): TxnCoordinator {
    if (this.hosts.txn) return this.hosts.txn;
    throw new BrokerError('not_coordinator', `broker ${this.deps.node_id} is not the transaction coordinator`);
  }

  /** Pending joins and syncs are answered now, so their connections need not wait a rebalance out. */
  release_group_waiters(): void {
    this.hosts.group?.groups.close();
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.deactivate('group');
    await this.deactivate('share');
    await this.deactivate('delayed');
    await this.deactivate('txn');
  }
}

async function close_host(host: GroupHost | ShareCoordinator | DelayedDelivery | TxnCoordinator): Promise<void> {
  if (host instanceof TxnCoordinator) host.close();
  else if (host instanceof ShareCoordinator || host instanceof DelayedDelivery)
    await host.close().catch(() => undefined);
  else host.groups.close();
}
