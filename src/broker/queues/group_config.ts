// Per-group settings of share groups, set with Kafka's group configs (IncrementalAlterConfigs /
// DescribeConfigs on resource type GROUP) and kept in the broker's metadata. Kafka's own names
// where Kafka has the setting; Sluice's under `sluice.share.*`. A group without a setting uses the
// broker's `shareGroups` default.
import { BrokerError } from '../../core/errors.ts';
import { SHARE_PARTITION_SETTINGS_DEFAULT, type SharePartitionSettings } from './share_partition.ts';
import type { GroupConfigs, Ordering, QueueSettings } from '../../core/types.ts';

/** The broker-wide defaults of share groups (the config file's shareGroups); groups override them. */
export interface ShareGroupSettings {
  session_timeout_ms: number;
  heartbeat_interval_ms: number;
  /** Where a group starts reading a partition it has no state for. */
  auto_offset_reset: 'earliest' | 'latest';
  /** How often locks, members and dead letters are looked after. */
  tick_ms: number;
  partition: SharePartitionSettings;
}

export const SHARE_GROUP_SETTINGS_DEFAULT: ShareGroupSettings = {
  session_timeout_ms: 45_000,
  heartbeat_interval_ms: 5_000,
  auto_offset_reset: 'earliest',
  tick_ms: 100,
  partition: SHARE_PARTITION_SETTINGS_DEFAULT,
};

interface Entry {
  validate(value: string): string | null;
  apply(settings: QueueSettings, value: string): void;
  default_of(defaults: ShareGroupSettings): string;
}

function integer_in(min: number, max: number) {
  return (value: string) => (/^\d+$/.test(value) && Number(value) >= min && Number(value) <= max ? null : `must be an integer from ${min} to ${max}`);
}

const TOPIC_NAME = /^[a-zA-Z0-9._-]{1,249}$/;

const ENTRIES: Record<string, Entry> = {
  'share.record.lock.duration.ms': {
    validate: integer_in(100, 3_600_000),
    apply: (s, v) => (s.record_lock_duration_ms = Number(v)),
    default_of: (d) => String(d.partition.record_lock_duration_ms),
  },
  'share.delivery.count.limit': {
    validate: integer_in(1, 1_000),
    apply: (s, v) => (s.delivery_count_limit = Number(v)),
    default_of: (d) => String(d.partition.delivery_count_limit),
  },
  'share.partition.max.record.locks': {
    validate: integer_in(1, 100_000),
    apply: (s, v) => (s.records_in_flight_max = Number(v)),
    default_of: (d) => String(d.partition.records_in_flight_max),
  },
  'share.auto.offset.reset': {
    validate: (v) => (v === 'earliest' || v === 'latest' ? null : 'must be earliest or latest'),
    apply: (s, v) => (s.auto_offset_reset = v as 'earliest' | 'latest'),
    default_of: (d) => d.auto_offset_reset,
  },
  'sluice.share.retry.backoff.ms': {
    validate: (v) => (v === '' || v.split(',').every((part) => /^\s*\d+\s*$/.test(part)) ? null : 'must be a comma-separated list of milliseconds, e.g. 1000,5000,30000'),
    apply: (s, v) => (s.retry_backoff_ms = v === '' ? [] : v.split(',').map((part) => Number(part.trim()))),
    default_of: (d) => d.partition.retry_backoff_ms.join(','),
  },
  'sluice.share.dlq.topic': {
    validate: (v) => (v === '' || TOPIC_NAME.test(v) ? null : 'must be a topic name (1-249 of a-z A-Z 0-9 . _ -), or empty for <topic>.<group>.dlq'),
    apply: (s, v) => (s.dead_letter_topic = v),
    default_of: () => '',
  },
  'sluice.share.ordering': {
    validate: (v) => (v === 'none' || v === 'key' ? null : 'must be none or key'),
    apply: (s, v) => (s.ordering = v as Ordering),
    default_of: () => 'none',
  },
};

export function group_config_names(): string[] {
  return Object.keys(ENTRIES);
}

export function group_config_default(name: string, defaults: ShareGroupSettings): string | undefined {
  return ENTRIES[name]?.default_of(defaults);
}

/** Throws invalid_config naming the first unknown or invalid setting. */
export function validate_group_configs(configs: GroupConfigs): void {
  for (const [name, value] of Object.entries(configs)) {
    const entry = ENTRIES[name];
    if (!entry) throw new BrokerError('invalid_config', `unknown group config ${name} (known: ${group_config_names().join(', ')})`);
    const problem = entry.validate(value);
    if (problem) throw new BrokerError('invalid_config', `${name}=${value}: ${problem}`);
  }
}

export function group_settings_of(defaults: ShareGroupSettings, configs: GroupConfigs): QueueSettings {
  const settings: QueueSettings = {
    record_lock_duration_ms: defaults.partition.record_lock_duration_ms,
    delivery_count_limit: defaults.partition.delivery_count_limit,
    records_in_flight_max: defaults.partition.records_in_flight_max,
    retry_backoff_ms: [...defaults.partition.retry_backoff_ms],
    auto_offset_reset: defaults.auto_offset_reset,
    dead_letter_topic: '',
    ordering: 'none',
  };
  for (const [name, value] of Object.entries(configs)) ENTRIES[name]?.apply(settings, value);
  return settings;
}
