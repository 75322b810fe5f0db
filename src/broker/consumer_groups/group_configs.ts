// Per-group configs of KIP-848 consumer groups, Kafka's `consumer.session.timeout.ms` and
// `consumer.heartbeat.interval.ms`: set with group configs (IncrementalAlterConfigs / AlterConfigs
// on resource type GROUP, kept with share groups' in the broker's metadata), checked against the
// bounds of the broker settings they override, `--group-consumer-session-timeout-ms` and
// `--group-consumer-heartbeat-interval-ms`.
import { setting, type Setting } from '../../core/settings.ts';
import { read_text } from '../../core/setting_values.ts';
import type { GroupConfigs } from '../../core/types.ts';

/** Group config name -> the broker setting it overrides for one group. */
const CONFIGS = new Map([
  ['consumer.session.timeout.ms', 'group_consumer_session_timeout_ms'],
  ['consumer.heartbeat.interval.ms', 'group_consumer_heartbeat_interval_ms'],
]);

export interface ConsumerGroupTiming {
  session_timeout_ms: number;
  heartbeat_interval_ms: number;
}

export function consumer_group_config_names(): string[] {
  return [...CONFIGS.keys()];
}

/** The setting whose type and bounds a consumer-group config takes; undefined for another name. */
export function consumer_group_config_setting(name: string): Setting | undefined {
  const key = CONFIGS.get(name);
  return key === undefined ? undefined : setting(key);
}

/** A config's value when the group has not set it: the broker's. */
export function consumer_group_config_default(name: string, timing: ConsumerGroupTiming): string | undefined {
  if (name === 'consumer.session.timeout.ms') return String(timing.session_timeout_ms);
  if (name === 'consumer.heartbeat.interval.ms') return String(timing.heartbeat_interval_ms);
  return undefined;
}

/** The broker's timing with the group's own configs over it (invalid values were refused when set). */
export function consumer_group_timing(defaults: ConsumerGroupTiming, configs: GroupConfigs): ConsumerGroupTiming {
  const value = (name: string, fallback: number) => {
    const text = configs[name];
    const parsed = text === undefined ? undefined : read_text(consumer_group_config_setting(name)!.type, text);
    return typeof parsed === 'number' ? parsed : fallback;
  };
  return {
    session_timeout_ms: value('consumer.session.timeout.ms', defaults.session_timeout_ms),
    heartbeat_interval_ms: value('consumer.heartbeat.interval.ms', defaults.heartbeat_interval_ms),
  };
}
