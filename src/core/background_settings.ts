// The settings of `sluice start` for work the broker does in the background: KIP-848 consumer
// groups (sessions, heartbeats) and the log cleaner. A part of the settings table (settings.ts),
// kept apart to keep each file small.
import { CLI, integer, ms, type SettingSpec } from './setting_spec.ts';

export const BACKGROUND_SETTINGS: SettingSpec[] = [
  {
    key: 'group_consumer_session_timeout_ms',
    type: ms(1_000, 3_600_000),
    default: 45_000,
    on: CLI,
    placeholder: '<ms>',
    option: 'groups.consumer.session_timeout_ms',
    description:
      'a KIP-848 consumer-group member silent this long leaves its group (group.consumer.session.timeout.ms)',
  },
  {
    key: 'group_consumer_heartbeat_interval_ms',
    type: ms(100, 600_000),
    default: 5_000,
    on: CLI,
    placeholder: '<ms>',
    option: 'groups.consumer.heartbeat_interval_ms',
    description: 'how often KIP-848 consumer-group members send a heartbeat (group.consumer.heartbeat.interval.ms)',
  },
  {
    key: 'cleaner_interval_ms',
    type: ms(100),
    default: 15_000,
    on: CLI,
    placeholder: '<ms>',
    option: 'cleaner.interval_ms',
    description: 'how often the log cleaner looks for compacted logs to compact (log.cleaner.backoff.ms)',
  },
  {
    key: 'cleaner_memory_bytes_max',
    type: integer(1024 * 1024),
    default: 128 * 1024 * 1024,
    on: CLI,
    placeholder: '<bytes>',
    option: 'cleaner.memory_bytes_max',
    description: "the log cleaner's map of keys to their latest offsets, at most (log.cleaner.dedupe.buffer.size)",
  },
  {
    key: 'cleaner_io_bytes_per_s_max',
    type: integer(0),
    default: 0,
    on: CLI,
    placeholder: '<bytes>',
    option: 'cleaner.io_bytes_per_s_max',
    description:
      'bytes per second the log cleaner reads and writes at most, 0 for no limit (log.cleaner.io.max.bytes.per.second)',
  },
];
