// Per-group settings of share groups, set with Kafka's group configs (IncrementalAlterConfigs /
// DescribeConfigs on resource type GROUP) and kept in the broker's metadata. Their names, checks
// and defaults are the share_groups entries of the settings table (core/settings.ts) that have a
// Kafka name: Kafka's own where Kafka has the setting, Sluice's under `sluice.share.*`. A group
// without a setting uses the broker's `shareGroups` default.
import { BrokerError } from '../../core/errors.ts';
import {
  default_list,
  default_number,
  default_text,
  setting_of_group_config,
  settings_of,
} from '../../core/settings.ts';
import { kafka_refusal, read_text, text_of, type SettingValue } from '../../core/setting_values.ts';
import type { SharePartitionSettings } from './share_partition.ts';
import { consumer_group_config_names, consumer_group_config_setting } from '../consumer_groups/group_configs.ts';
import type { GroupConfigs, Ordering, QueueSettings, ShareIsolation } from '../../core/types.ts';

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

const TICK_MS = 100;

/**
 * The broker-wide settings from values keyed by their settings-table key (as read from the config
 * file's shareGroups); the table's defaults for those not given.
 */
export function share_group_settings(values: ReadonlyMap<string, SettingValue> = new Map()): ShareGroupSettings {
  const number = (key: string) => (values.get(key) as number | undefined) ?? default_number(`share_groups.${key}`);
  const backoff = values.get('retry_backoff_ms') as readonly number[] | undefined;
  const reset = values.get('auto_offset_reset') ?? default_text('share_groups.auto_offset_reset');
  return {
    session_timeout_ms: number('session_timeout_ms'),
    heartbeat_interval_ms: number('heartbeat_interval_ms'),
    auto_offset_reset: reset as 'earliest' | 'latest',
    tick_ms: TICK_MS,
    partition: {
      record_lock_duration_ms: number('record_lock_duration_ms'),
      delivery_count_limit: number('delivery_count_limit'),
      records_in_flight_max: number('records_in_flight_max'),
      retry_backoff_ms: backoff ? [...backoff] : default_list('share_groups.retry_backoff_ms'),
    },
  };
}

export const SHARE_GROUP_SETTINGS_DEFAULT: ShareGroupSettings = share_group_settings();

/** The settings a group can set for itself, in the order DescribeConfigs lists them. */
const GROUP_CONFIGS = settings_of('share_groups').filter((s) => s.kafka !== undefined);

/** A group's settings before its own configs: the broker's defaults (the table's for per-group ones). */
function queue_defaults(defaults: ShareGroupSettings): QueueSettings {
  return {
    record_lock_duration_ms: defaults.partition.record_lock_duration_ms,
    delivery_count_limit: defaults.partition.delivery_count_limit,
    records_in_flight_max: defaults.partition.records_in_flight_max,
    retry_backoff_ms: [...defaults.partition.retry_backoff_ms],
    auto_offset_reset: defaults.auto_offset_reset,
    dead_letter_topic: default_text('share_groups.dead_letter_topic'),
    ordering: default_text('share_groups.ordering') as Ordering,
    isolation_level: default_text('share_groups.isolation_level') as ShareIsolation,
  };
}

/** Every group config: share groups', then KIP-848 consumer groups' (consumer_groups/group_configs.ts). */
export function group_config_names(): string[] {
  return [...GROUP_CONFIGS.map((s) => s.kafka!), ...consumer_group_config_names()];
}

export function group_config_default(name: string, defaults: ShareGroupSettings): string | undefined {
  const found = setting_of_group_config(name);
  if (!found) return undefined;
  return text_of((queue_defaults(defaults) as unknown as Record<string, SettingValue>)[found.key]!);
}

/** Throws invalid_config naming the first unknown or invalid setting. */
export function validate_group_configs(configs: GroupConfigs): void {
  for (const [name, value] of Object.entries(configs)) {
    const found = setting_of_group_config(name) ?? consumer_group_config_setting(name);
    if (!found) {
      const known = group_config_names().join(', ');
      throw new BrokerError('invalid_config', `unknown group config ${name} (known: ${known})`);
    }
    if (read_text(found.type, value) === undefined) {
      throw new BrokerError('invalid_config', kafka_refusal(name, found.type, value));
    }
  }
}

export function group_settings_of(defaults: ShareGroupSettings, configs: GroupConfigs): QueueSettings {
  const settings = queue_defaults(defaults);
  const fields = settings as unknown as Record<string, SettingValue>;
  for (const [name, value] of Object.entries(configs)) {
    const found = setting_of_group_config(name);
    const parsed = found ? read_text(found.type, value) : undefined;
    if (found && parsed !== undefined) fields[found.key] = parsed;
  }
  return settings;
}
