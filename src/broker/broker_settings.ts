// The broker core's settings, resolved from defaults by the composition root.
import type { AclSettings } from './acls/acls.ts';
import type { DelayedSettings } from './delayed/delayed_delivery.ts';
import type { GroupSettings } from './group_coordinator.ts';
import type { ShareGroupSettings } from './queues/group_config.ts';
import type { TxnSettings } from './txn/txn_coordinator.ts';
import type { CleanerSettings } from './compaction/log_cleaner.ts';

export interface BrokerSettings {
  auto_create_topics: boolean;
  default_partitions: number;
  groups: GroupSettings;
  share_groups: ShareGroupSettings;
  delayed: DelayedSettings;
  transactions: TxnSettings;
  /** Log compaction: how often the cleaner looks, its memory and its I/O. */
  cleaner: CleanerSettings;
  /** Whether requests are checked against the ACLs, and who may do anything. */
  acls: AclSettings;
  /** Users no quota applies to: the brokers themselves (replication, forwarding, markers). */
  quota_exempt_users: readonly string[];
  /** The settings the broker started with, as text by canonical name (BROKER configs; the rest are defaults). */
  started_with: Readonly<Record<string, string>>;
}
